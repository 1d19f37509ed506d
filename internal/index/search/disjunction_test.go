package search_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	bq "github.com/blevesearch/bleve/v2/search/query"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/index/search"
)

// TestSumQueryMatchesAsADisjunction holds sumQuery to Bleve's disjunction on random
// documents: the same documents match, alone and under a conjunction (which moves its
// searchers on with Advance) and a filter, whatever the number of alternatives; and a
// document every alternative matches scores the same by both, as the disjunction's
// coordination factor is then one.
func TestSumQueryMatchesAsADisjunction(t *testing.T) {
	t.Parallel()
	x := emptyIndex(t, "sum", 0)
	r := rand.New(rand.NewPCG(11, 12))
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%02d", i)
	}
	var b events.Batch
	for i := range 400 {
		var words []string
		for range 1 + r.IntN(12) {
			words = append(words, vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)))])
		}
		b.Events = append(b.Events, upsert("sum", fmt.Sprintf("d/%03d.md", i), strings.Join(words, " "), uint64(i+1)))
	}
	noErr(t, x.Apply(b), "apply")

	idx := bleveIndex(t, x)
	matches := func(q bq.Query) map[string]float64 {
		t.Helper()
		sr, err := idx.Search(bleve.NewSearchRequestOptions(q, 1000, 0, false))
		noErr(t, err, "search")
		if int(sr.Total) != len(sr.Hits) {
			t.Fatalf("total %d, hits %d", sr.Total, len(sr.Hits))
		}
		out := map[string]float64{}
		for _, h := range sr.Hits {
			out[h.ID] = h.Score
		}
		return out
	}
	for round := range 200 {
		var alts []bq.Query
		var words []string
		for range 1 + r.IntN(40) {
			w := vocab[r.IntN(len(vocab))]
			words = append(words, w)
			alts = append(alts, search.Term(schema.Content, w, 1))
		}
		other := search.Term(schema.Content, vocab[r.IntN(len(vocab))], 1)
		filter := search.Term(schema.Folders, "d", 0)
		for _, c := range []struct {
			name     string
			sum, dis bq.Query
		}{
			{"alone", search.SumQuery(alts), bq.NewDisjunctionQuery(alts)},
			{"conjunction", bq.NewConjunctionQuery([]bq.Query{other, search.SumQuery(alts)}), bq.NewConjunctionQuery([]bq.Query{other, bq.NewDisjunctionQuery(alts)})},
			{"filtered", &bq.BooleanQuery{Must: search.SumQuery(alts), Filter: filter}, &bq.BooleanQuery{Must: bq.NewDisjunctionQuery(alts), Filter: filter}},
		} {
			got, want := matches(c.sum), matches(c.dis)
			if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
				t.Fatalf("round %d, %s, words %v: sum matches %v, the disjunction %v", round, c.name, words, sortedKeys(got), sortedKeys(want))
			}
		}
		if len(alts) == 1 {
			continue
		}
		// Every alternative the same word: each document that matches matches them all.
		same := make([]bq.Query, len(alts))
		for i := range same {
			same[i] = alts[0]
		}
		got, want := matches(search.SumQuery(same)), matches(bq.NewDisjunctionQuery(same))
		for id, s := range want {
			if math.Abs(got[id]-s) > 1e-9*s {
				t.Fatalf("round %d: %s scores %v by sum, %v by the disjunction", round, id, got[id], s)
			}
		}
	}
}
