package index

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

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// TestSentenceCollectsAsBleve holds the direct collection of a sentence's words (a
// disjunction of the words, each a word's terms, and one of the common words that only
// rank) to Bleve's collector: every page of every query is the same, scores and ties
// included; the nearness window, ranked from it, too.
func TestSentenceCollectsAsBleve(t *testing.T) {
	common := []string{"the", "to", "of", "a", "how"}
	x, vocab := randomIndexOf(t, 51, common)
	r := rand.New(rand.NewPCG(11, 12))
	defer func(n int) { nearWindow = n }(nearWindow)
	var queries []string
	for range 20 {
		var ws []string
		for range 3 + r.IntN(5) {
			switch {
			case r.IntN(3) == 0:
				ws = append(ws, common[r.IntN(len(common))])
			case r.IntN(8) == 0:
				ws = append(ws, "zz"+fmt.Sprint(r.IntN(9))) // a word no document holds
			default:
				ws = append(ws, vocab[r.IntN(len(vocab))])
			}
		}
		queries = append(queries, strings.Join(ws, " "))
	}
	// Words far apart: no pairs, so the first page is collected directly too.
	queries = append(queries, "w01 the of to w02 a the how w03", "w05 a of the to w09 how the a w13 of")
	direct := 0
	for _, text := range queries {
		q, err := ParseQuery(text)
		noErr(t, err, "parse")
		if len(q.Words)+len(q.Phrases) < rankedWords {
			continue
		}
		alone := q
		alone.Pairs = nil
		if tq, _ := plainSentence(x.build(alone, "", nil, true)); tq != nil {
			direct++
		}
		for _, window := range []int{3, 200} {
			nearWindow = window
			for _, limit := range []int{3, 20} {
				got := allPages(t, x, q, limit)
				collectDirect = false
				want := allPages(t, x, q, limit)
				collectDirect = true
				if len(got) != len(want) {
					t.Fatalf("%q, window %d, limit %d: %d pages direct, %d through Bleve", text, window, limit, len(got), len(want))
				}
				for i := range got {
					if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
						t.Fatalf("%q, window %d, limit %d, page %d:\ndirect        %+v\nthrough Bleve %+v", text, window, limit, i, got[i], want[i])
					}
				}
			}
		}
	}
	if direct < 10 {
		t.Fatalf("only %d of the sentences were collected directly", direct)
	}
}

// TestSentenceCountsItsWordsAlone: a document holding none of a sentence's words but
// some of its common ones does not match, and is not counted.
func TestSentenceCountsItsWordsAlone(t *testing.T) {
	x := &Index{Dir: filepath.Join(t.TempDir(), "index"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), idleMerge: time.Hour}
	noErr(t, x.Open(), "open")
	t.Cleanup(func() { _ = x.Close() })
	noErr(t, x.Reset(projection.State{StreamID: "count@1", Project: "count"}), "reset")
	var b events.Batch
	for i, c := range []string{"alpha beta", "gamma", "beta gamma delta", "how the", "how"} {
		c := []byte(c)
		b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "count", Path: fmt.Sprintf("%d.md", i),
			Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: uint64(i + 1)})
	}
	noErr(t, x.Apply(b), "apply")
	// Three common words apart: no pairs, so the first page is the collection itself.
	q, err := ParseQuery("how alpha the of to beta how the of gamma")
	noErr(t, err, "parse")
	for _, direct := range []bool{true, false} {
		collectDirect = direct
		res, err := x.Search(context.Background(), Request{Query: q})
		collectDirect = true
		noErr(t, err, "search")
		var paths []string
		for _, h := range res.Hits {
			paths = append(paths, h.Path)
		}
		slices.Sort(paths)
		if res.Total != 3 || !slices.Equal(paths, []string{"0.md", "1.md", "2.md"}) {
			t.Fatalf("direct %v: total %d, hits %v; want the 3 documents holding a word", direct, res.Total, paths)
		}
	}
}
