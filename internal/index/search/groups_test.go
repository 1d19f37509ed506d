package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/search"
)

// TestSentenceCollectsAsBleve holds the direct collection of a query's words — a
// sentence's disjunction of its words, or the conjunction of fewer words, each a word's
// terms, with the common words that only rank — to Bleve's collector: every page of
// every query is the same, scores and ties included; the nearness window, ranked from
// it, too.
func TestSentenceCollectsAsBleve(t *testing.T) {
	common := []string{"the", "to", "of", "a", "how"}
	x, vocab := randomIndexOf(t, 51, common)
	r := rand.New(rand.NewPCG(11, 12))
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
	// Two words, and one with common words: every word required.
	queries = append(queries, "w03 w07", "w02 the w11", "w04 of the to a w06", "w01 w00", "how to w05", "the w09", "w12 zz1", "a w02 of the zz3",
		"w37 w39", "w36 the w38", "how w35 w39 a", "w30 w34 w38") // rare words: fewer matches than a page asks for
	// Two words fewer documents hold together than a page asks for.
	viaBleve := &search.Engine{Index: x, BleveCollector: true}
	few := 0
	for i := len(vocab) - 1; i > 0 && few < 4; i-- {
		for j := i - 1; j >= 0 && few < 4; j-- {
			text := vocab[j] + " " + vocab[i]
			res, err := viaBleve.Search(context.Background(), search.Request{Query: parse(t, text)})
			noErr(t, err, "search")
			if !res.Relaxed && res.Total >= 1 && res.Total <= 10 {
				// Apart, with no pair to weigh, the first page is the collection itself.
				queries = append(queries, text, vocab[j]+" the of to "+vocab[i])
				few++
			}
		}
	}
	if few < 4 {
		t.Fatalf("set-up: %d pairs of words with a few documents holding both", few)
	}
	idx := bleveIndex(t, x)
	direct := 0
	for _, text := range queries {
		q := parse(t, text)
		alone := q
		alone.Pairs = nil
		partial := len(q.Words) >= search.RankedWords
		e := &search.Engine{Index: x}
		if e.CollectsDirectly(idx, alone, partial) {
			direct++
		}
		// The collection itself, which a page's checks (ties at its end go to Bleve, the
		// window is scored again) could hide.
		for _, n := range []int{5, 37} {
			got, exact, want, err := e.BestAndRun(context.Background(), idx, alone, partial, n)
			noErr(t, err, "best")
			if !exact {
				continue // its caller asks Bleve, as the pages below check
			}
			got.Hits = got.Hits[:min(len(got.Hits), n+1)]
			if fmt.Sprint(got.Total, got.Hits) != fmt.Sprint(want.Total, want.Hits) {
				t.Fatalf("%q, best %d:\ndirect        %v %+v\nthrough Bleve %v %+v", text, n, got.Total, got.Hits, want.Total, want.Hits)
			}
		}
		for _, window := range []int{3, 200} {
			direct, viaBleve := &search.Engine{Index: x, NearWindow: window}, &search.Engine{Index: x, NearWindow: window, BleveCollector: true}
			for _, limit := range []int{3, 20} {
				got, want := allPages(t, direct, q, limit), allPages(t, viaBleve, q, limit)
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
	if direct < 20 {
		t.Fatalf("only %d of the sentences were collected directly", direct)
	}
}

// TestSentenceCountsItsWordsAlone: a document holding none of a sentence's words but
// some of its common ones does not match, and is not counted.
func TestSentenceCountsItsWordsAlone(t *testing.T) {
	t.Parallel()
	x := emptyIndex(t, "count", time.Hour)
	var b events.Batch
	for i, c := range []string{"alpha beta", "gamma", "beta gamma delta", "how the", "how"} {
		b.Events = append(b.Events, upsert("count", fmt.Sprintf("%d.md", i), c, uint64(i+1)))
	}
	noErr(t, x.Apply(b), "apply")
	// Three common words apart: no pairs, so the first page is the collection itself.
	q := parse(t, "how alpha the of to beta how the of gamma")
	for _, viaBleve := range []bool{false, true} {
		res, err := (&search.Engine{Index: x, BleveCollector: viaBleve}).Search(context.Background(), search.Request{Query: q})
		noErr(t, err, "search")
		var paths []string
		for _, h := range res.Hits {
			paths = append(paths, h.Path)
		}
		slices.Sort(paths)
		if res.Total != 3 || !slices.Equal(paths, []string{"0.md", "1.md", "2.md"}) {
			t.Fatalf("through Bleve %v: total %d, hits %v; want the 3 documents holding a word", viaBleve, res.Total, paths)
		}
	}
}
