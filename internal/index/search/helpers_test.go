package search_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
)

// emptyIndex opens a new index in a temporary folder, reset for project, merging its
// segments after idleMerge without a batch (the default when 0).
func emptyIndex(t *testing.T, project string, idleMerge time.Duration) *index.Index {
	t.Helper()
	x := &index.Index{Dir: filepath.Join(t.TempDir(), "index"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IdleMerge: idleMerge}
	noErr(t, x.Open(), "open")
	t.Cleanup(func() { _ = x.Close() })
	noErr(t, x.Reset(projection.State{StreamID: project + "@1", Project: project}), "reset")
	return x
}

// randomIndex is an index of random Markdown documents over a small vocabulary, applied
// in several batches (so several segments), with some documents deleted and some
// written again.
func randomIndex(t *testing.T, seed uint64) (*index.Index, []string) {
	t.Helper()
	return randomIndexOf(t, seed, nil)
}

// randomIndexOf is randomIndex with the words common mixed into its text, one word in
// four.
func randomIndexOf(t *testing.T, seed uint64, common []string) (*index.Index, []string) {
	t.Helper()
	x := emptyIndex(t, "terms", 0)
	r := rand.New(rand.NewPCG(seed, seed+1))
	vocab := make([]string, 40)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%02d", i)
	}
	words := func(n int) string {
		var ws []string
		for range n {
			if len(common) > 0 && r.IntN(4) == 0 {
				ws = append(ws, common[r.IntN(len(common))])
			}
			ws = append(ws, vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)))])
		}
		return strings.Join(ws, " ")
	}
	seq := uint64(0)
	for range 5 {
		var b events.Batch
		for range 80 {
			seq++
			p := fmt.Sprintf("d%d/%s.md", r.IntN(3), vocab[r.IntN(len(vocab))]+fmt.Sprint(r.IntN(60)))
			if r.IntN(8) == 0 {
				b.Events = append(b.Events, events.Event{Op: events.OpDelete, Project: "terms", Path: p, Seq: seq})
				continue
			}
			c := []byte(fmt.Sprintf("---\ndescription: %s\n---\n# %s\n\n%s\n\n## %s\n\n%s\n", words(2), words(1+r.IntN(3)), words(1+r.IntN(20)), words(2), words(r.IntN(30))))
			b.Events = append(b.Events, upsert("terms", p, string(c), seq))
		}
		noErr(t, x.Apply(b), "apply")
	}
	return x, vocab
}

// upsert is the event of project's document p with content c, at sequence seq.
func upsert(project, p, c string, seq uint64) events.Event {
	return events.Event{Op: events.OpUpsert, Project: project, Path: p, Status: events.StatusOK,
		Content: []byte(c), Size: int64(len(c)), Hash: events.HashContent([]byte(c)), Seq: seq}
}

// bleveIndex is x's open Bleve index, for the test's life (x stays open until its cleanup).
func bleveIndex(t *testing.T, x *index.Index) bleve.Index {
	t.Helper()
	var idx bleve.Index
	noErr(t, x.Read(func(b bleve.Index) error { idx = b; return nil }), "read")
	return idx
}

// bleveSearch runs q through Bleve's collector, scored with x's BM25 statistics, and
// returns the score of every match by its identifier.
func bleveSearch(t *testing.T, x *index.Index, q bq.Query) map[string]float64 {
	t.Helper()
	idx := bleveIndex(t, x)
	req := bleve.NewSearchRequestOptions(q, 1000, 0, false)
	if docs, err := idx.DocCount(); err == nil {
		if st := x.BM25(docs); st != nil {
			req.PreSearchData = map[string]any{bsearch.BM25PreSearchDataKey: st}
		}
	}
	sr, err := idx.Search(req)
	noErr(t, err, "search")
	out := map[string]float64{}
	for _, h := range sr.Hits {
		out[h.ID] = h.Score
	}
	return out
}

// allPages returns every page of q's results by e, limit hits at a time, without their
// cursors.
func allPages(t *testing.T, e *search.Engine, q querylang.Query, limit int) []search.Result {
	t.Helper()
	var out []search.Result
	req := search.Request{Query: q, Limit: limit}
	for range 1000 {
		res, err := e.Search(context.Background(), req)
		noErr(t, err, "search "+q.String())
		out = append(out, search.Page(res))
		if len(res.Hits) < limit {
			break
		}
		req.Cursor = req.CursorAfter(res.Hits[len(res.Hits)-1], res.Relaxed)
	}
	return out
}

// parse is the query of text.
func parse(t *testing.T, text string) querylang.Query {
	t.Helper()
	q, err := querylang.Parse(text)
	noErr(t, err, "parse "+text)
	return q
}

// id is the identifier of a hit's document in the index.
func id(h search.Hit) string { return events.DocKey{Session: h.Session, Path: h.Path}.ID() }

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func noErr(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wordSearchers returns an engine over x, and a maker of the direct searcher of a word
// over x's snapshot of now, read until the test ends.
func wordSearchers(t *testing.T, x *index.Index) (*search.Engine, func(w string) *search.WordSearcher) {
	t.Helper()
	e := &search.Engine{Index: x}
	idx := bleveIndex(t, x)
	reader, ctx, err := e.Reader(t.Context(), idx)
	noErr(t, err, "reader")
	t.Cleanup(func() { _ = reader.Close() })
	return e, func(w string) *search.WordSearcher {
		t.Helper()
		s, err := e.NewWordSearcher(ctx, idx, reader, w)
		noErr(t, err, "searcher of "+w)
		return s
	}
}
