package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// emptyIndex opens a new index in a temporary folder, reset for project, merging its
// segments after idleMerge without a batch (the default when 0).
func emptyIndex(t *testing.T, project string, idleMerge time.Duration) *Index {
	t.Helper()
	x := &Index{Dir: filepath.Join(t.TempDir(), "index"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), idleMerge: idleMerge}
	noErr(t, x.Open(), "open")
	t.Cleanup(func() { _ = x.Close() })
	noErr(t, x.Reset(projection.State{StreamID: project + "@1", Project: project}), "reset")
	return x
}

// randomIndex is an index of random Markdown documents over a small vocabulary, applied
// in several batches (so several segments), with some documents deleted and some
// written again.
func randomIndex(t *testing.T, seed uint64) (*Index, []string) {
	t.Helper()
	return randomIndexOf(t, seed, nil)
}

// randomIndexOf is randomIndex with the words common mixed into its text, one word in
// four.
func randomIndexOf(t *testing.T, seed uint64, common []string) (*Index, []string) {
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
			b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "terms", Path: p,
				Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: seq})
		}
		noErr(t, x.Apply(b), "apply")
	}
	return x, vocab
}

// TestTermsQueryScoresAsBleve holds termsQuery, which reads postings itself, to the sum of
// Bleve's term queries it stands for: the same documents, with the same scores, alone,
// under a conjunction (which moves it on with Advance) and a filter, across segments and
// deleted documents.
func TestTermsQueryScoresAsBleve(t *testing.T) {
	x, vocab := randomIndex(t, 21)
	r := rand.New(rand.NewPCG(5, 6))
	fields := []string{fieldName, fieldPath, fieldTitle, fieldMeta, fieldHeadings, fieldLead, fieldContent}
	search := func(q bq.Query) map[string]float64 {
		t.Helper()
		req := bleve.NewSearchRequestOptions(q, 1000, 0, false)
		if docs, err := x.idx.DocCount(); err == nil {
			if st := x.lengths.Load().bm25Stats(docs); st != nil {
				req.PreSearchData = map[string]any{search.BM25PreSearchDataKey: st}
			}
		}
		sr, err := x.idx.Search(req)
		noErr(t, err, "search")
		out := map[string]float64{}
		for _, h := range sr.Hits {
			out[h.ID] = h.Score
		}
		return out
	}
	for round := range 150 {
		var cs []termClause
		for range 1 + r.IntN(12) {
			cs = append(cs, termClause{fields[r.IntN(len(fields))], vocab[r.IntN(len(vocab))], 0.1 + 2*r.Float64()})
		}
		terms := newTermsQuery(cs, nil).(*termsQuery)
		other := term(fieldContent, vocab[r.IntN(len(vocab))], 1)
		filter := term(fieldFolders, fmt.Sprintf("d%d", r.IntN(3)), 0)
		for _, c := range []struct {
			name         string
			direct, want bq.Query
		}{
			{"alone", terms, terms.generic()},
			{"conjunction", bq.NewConjunctionQuery([]bq.Query{other, terms}), bq.NewConjunctionQuery([]bq.Query{other, terms.generic()})},
			{"filtered", &bq.BooleanQuery{Must: terms, Filter: filter}, &bq.BooleanQuery{Must: terms.generic(), Filter: filter}},
		} {
			got, want := search(c.direct), search(c.want)
			if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
				t.Fatalf("round %d, %s, clauses %v: direct matches %v, Bleve's terms %v", round, c.name, cs, sortedKeys(got), sortedKeys(want))
			}
			for id, s := range want {
				if math.Abs(got[id]-s) > 1e-12*s {
					t.Fatalf("round %d, %s, clauses %v: %s scores %v direct, %v by Bleve's terms", round, c.name, cs, id, got[id], s)
				}
			}
		}
	}
}

// TestTermsAdvanceAsBleve moves termsQuery's searcher and Bleve's sum of term searchers
// to the same random documents: each lands on the same next match, with the same score.
func TestTermsAdvanceAsBleve(t *testing.T) {
	x, vocab := randomIndex(t, 41)
	r := rand.New(rand.NewPCG(7, 8))
	reader, ctx, err := x.reader(context.Background())
	noErr(t, err, "reader")
	defer reader.Close()
	for round := range 100 {
		var cs []termClause
		for range 1 + r.IntN(6) {
			cs = append(cs, termClause{fieldContent, vocab[r.IntN(len(vocab))], 1})
		}
		q := newTermsQuery(cs, nil).(*termsQuery)
		direct, err := q.Searcher(ctx, reader, x.idx.Mapping(), search.SearcherOptions{})
		noErr(t, err, "direct")
		generic, err := q.generic().Searcher(ctx, reader, x.idx.Mapping(), search.SearcherOptions{})
		noErr(t, err, "generic")
		sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(direct.DocumentMatchPoolSize()+generic.DocumentMatchPoolSize(), 0)}
		target := uint64(0)
		for {
			target += uint64(r.IntN(40))
			id := make([]byte, 8)
			binary.BigEndian.PutUint64(id, target)
			a, err := direct.Advance(sctx, id)
			noErr(t, err, "advance direct")
			b, err := generic.Advance(sctx, id)
			noErr(t, err, "advance generic")
			if (a == nil) != (b == nil) || a != nil && (!a.IndexInternalID.Equals(b.IndexInternalID) || math.Abs(a.Score-b.Score) > 1e-12*b.Score) {
				t.Fatalf("round %d, %v, advance to %d: direct %v, Bleve's terms %v", round, cs, target, a, b)
			}
			if a == nil {
				break
			}
			target = binary.BigEndian.Uint64(a.IndexInternalID) + 1
			sctx.DocumentMatchPool.Put(a)
			sctx.DocumentMatchPool.Put(b)
		}
		_ = direct.Close()
		_ = generic.Close()
	}
}

// TestCollectRanksAsBleve holds the direct collection of a one-word search to Bleve's
// collector: every page of every word's results is the same, ties included.
func TestCollectRanksAsBleve(t *testing.T) {
	x, vocab := randomIndex(t, 31)
	pages := func(w string, limit int) []Result {
		t.Helper()
		q, err := ParseQuery(w)
		noErr(t, err, "parse")
		return allPages(t, x, q, limit)
	}
	for _, w := range vocab {
		for _, limit := range []int{1, 3, 20} {
			direct := pages(w, limit)
			collectDirect = false
			viaBleve := pages(w, limit)
			collectDirect = true
			if len(direct) != len(viaBleve) {
				t.Fatalf("%s, limit %d: %d pages direct, %d through Bleve", w, limit, len(direct), len(viaBleve))
			}
			for i := range direct {
				if fmt.Sprint(direct[i]) != fmt.Sprint(viaBleve[i]) {
					t.Fatalf("%s, limit %d, page %d:\ndirect  %+v\nthrough Bleve %+v", w, limit, i, direct[i], viaBleve[i])
				}
			}
		}
	}
}

// mustNext is the cursor of the page after res.
func (x *Index) mustNext(t *testing.T, req Request, res Result) string {
	t.Helper()
	return req.CursorAfter(res.Hits[len(res.Hits)-1], res.Relaxed)
}

// TestTopSkipsOnlyWhatCannotEnter holds the pruned collection of the best n documents
// (termsSearcher.top) to reading every document: the same documents, scores and count,
// for words common and rare, over segments with deletions, for small and large n.
func TestTopSkipsOnlyWhatCannotEnter(t *testing.T) {
	x := emptyIndex(t, "top", time.Hour)
	r := rand.New(rand.NewPCG(3, 4))
	filler := []string{"stone", "river", "lamp", "quiet", "northern", "window", "ledger"}
	text := func(n int) string {
		var ws []string
		for range n {
			ws = append(ws, filler[r.IntN(len(filler))])
		}
		return strings.Join(ws, " ")
	}
	seq := uint64(0)
	for batch := range 6 {
		var b events.Batch
		for i := range 500 {
			seq++
			p := fmt.Sprintf("d%d/%04d.md", batch%2, r.IntN(2600))
			if r.IntN(10) == 0 {
				b.Events = append(b.Events, events.Event{Op: events.OpDelete, Project: "top", Path: p, Seq: seq})
				continue
			}
			title := text(2)
			if r.IntN(20) == 0 {
				title += " harbour"
			}
			body := text(r.IntN(200))
			for range r.IntN(4) {
				body += " harbour " + text(r.IntN(30))
			}
			if r.IntN(3) == 0 {
				body += " harbours"
			}
			if i == batch*7 { // a word of one document in each segment
				body += fmt.Sprintf(" unique%d lonely", batch)
			}
			c := []byte(fmt.Sprintf("# %s\n\n%s\n", title, body))
			b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "top", Path: p,
				Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: seq})
		}
		// A word held by one document's path alone: a posting of one document.
		seq++
		c := []byte(text(5))
		b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "top", Path: fmt.Sprintf("e/solitary%d/note.md", batch),
			Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: seq})
		noErr(t, x.Apply(b), "apply")
		x.flush()
	}
	if n := segments(x.idx); n < 2 {
		t.Fatalf("set-up: %d segment", n)
	}
	reader, ctx, err := x.reader(context.Background())
	noErr(t, err, "reader")
	defer reader.Close()
	for _, w := range []string{"harbour", "harbours", "stone", "lonely", "unique3", "quiet", "solitary2"} {
		q, ok := x.wordQuery(w, 1).(*termsQuery)
		if !ok {
			t.Fatalf("%s: not a terms query", w)
		}
		searcher := func() *termsSearcher { return searcherOf(ctx, t, x, q, reader) }
		all := everyDocument(t, searcher())
		for _, n := range []int{1, 5, 37, 200} {
			got, total, err := searcher().top(n, func() error { return nil })
			noErr(t, err, "top")
			want := all[:min(n, len(all))]
			if total != uint64(len(all)) || !slices.Equal(got, want) {
				t.Fatalf("%s, n %d: top found %d of %d documents:\n got %v\nwant %v", w, n, total, len(all), got, want)
			}
		}
	}
}

// TestTopPassesChunksByImpacts: a word of every document found in their text alone, so
// that MaxScore has no term to leave out, is read a chunk at a time, and the chunks
// whose impacts cannot beat the best kept are passed over; the best are still those a
// reading of every posting finds.
func TestTopPassesChunksByImpacts(t *testing.T) {
	x := emptyIndex(t, "impacts", time.Hour)
	r := rand.New(rand.NewPCG(9, 10))
	var b events.Batch
	for i := range 3000 {
		var body strings.Builder
		fmt.Fprintf(&body, "# note %d\n\nan opening line\n\n", i)
		for range 1 + r.IntN(6) {
			body.WriteString("murmur ")
		}
		for range r.IntN(300) {
			body.WriteString("filler ")
		}
		c := []byte(body.String())
		b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "impacts", Path: fmt.Sprintf("n/%04d.md", i),
			Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: uint64(i + 1)})
	}
	noErr(t, x.Apply(b), "apply")
	x.flush()
	reader, ctx, err := x.reader(context.Background())
	noErr(t, err, "reader")
	defer reader.Close()
	q := x.wordQuery("murmur", 1).(*termsQuery)
	searcher := func() *termsSearcher { return searcherOf(ctx, t, x, q, reader) }
	all := everyDocument(t, searcher())
	for _, n := range []int{1, 20, 37} {
		s := searcher()
		got, total, err := s.top(n, func() error { return nil })
		noErr(t, err, "top")
		if want := all[:n]; total != uint64(len(all)) || !slices.Equal(got, want) {
			t.Fatalf("n %d: top found %d of %d documents:\n got %v\nwant %v", n, total, len(all), got, want)
		}
		if s.passed == 0 {
			t.Errorf("n %d: no chunk passed over by its impacts", n)
		}
	}
}

// TestTiesPastThePageCollectedDirectly: when more documents tie at the end of a page than
// the slack kept for ties, the page is still collected directly — every document of that
// score collected again and ordered by path — not by Bleve's collector, which loads the
// identifier of every match; every page is the one Bleve gives.
func TestTiesPastThePageCollectedDirectly(t *testing.T) {
	x := emptyIndex(t, "ties", time.Hour)
	var b events.Batch
	add := func(p, text string) {
		c := []byte(text)
		b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "ties", Path: p,
			Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: uint64(len(b.Events) + 1)})
	}
	for i := range 90 { // the same name and text: the same score, in an order unlike the paths'
		add(fmt.Sprintf("d%02d/harbour.md", (i*37)%90), "a harbour here")
	}
	for i := range 200 {
		add(fmt.Sprintf("e/%03d.md", i), "the harbour and the long road past the harbour walls, the quay and more")
	}
	noErr(t, x.Apply(b), "apply")
	x.flush()
	q, err := ParseQuery("harbour")
	noErr(t, err, "parse")
	for _, limit := range []int{3, 20, 50} {
		before := bleveRuns.Load()
		res, err := x.Search(context.Background(), Request{Query: q, Limit: limit})
		noErr(t, err, "search")
		if n := bleveRuns.Load() - before; n != 0 {
			t.Errorf("limit %d: the first page ran %d searches through Bleve's collector", limit, n)
		}
		if len(res.Hits) != limit || res.Hits[0].Path != "d00/harbour.md" {
			t.Fatalf("limit %d: %d hits, first %+v", limit, len(res.Hits), res.Hits[0])
		}
		direct := allPages(t, x, q, limit)
		collectDirect = false
		viaBleve := allPages(t, x, q, limit)
		collectDirect = true
		if fmt.Sprint(direct) != fmt.Sprint(viaBleve) {
			t.Fatalf("limit %d:\ndirect        %+v\nthrough Bleve %+v", limit, direct, viaBleve)
		}
	}
}

// searcherOf is q's direct searcher over reader.
func searcherOf(ctx context.Context, t *testing.T, x *Index, q *termsQuery, reader bindex.IndexReader) *termsSearcher {
	t.Helper()
	s, err := q.Searcher(ctx, reader, x.idx.Mapping(), search.SearcherOptions{})
	noErr(t, err, "searcher")
	return s.(*termsSearcher)
}

// everyDocument reads every document s matches, best first, ties in index order: what
// top must find without reading them all.
func everyDocument(t *testing.T, s *termsSearcher) []scoredDoc {
	t.Helper()
	var all []scoredDoc
	for {
		d, score, err := s.next()
		noErr(t, err, "next")
		if d == noDoc {
			break
		}
		all = append(all, scoredDoc{d, score})
	}
	slices.SortStableFunc(all, func(a, b scoredDoc) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return all
}
