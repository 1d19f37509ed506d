package search_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/index/search"
)

// nearQueries are queries of neighbouring words over randomIndex's vocabulary: two words
// (every word required), sentences (ranked by how many words a document holds), and
// common words between them.
func nearQueries(vocab []string, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, seed+1))
	var qs []string
	for range 16 {
		n := 2 + r.IntN(3)
		var ws []string
		for i := range n {
			if i > 0 && r.IntN(3) == 0 {
				ws = append(ws, "the")
			}
			ws = append(ws, vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)))])
		}
		qs = append(qs, strings.Join(ws, " "))
	}
	return qs
}

// TestNearRanksAsOneSearch: while a query matches no more documents than the nearness
// window holds, ranking in two steps gives every page exactly as one search of the whole
// query does: the same hits, scores, totals and ties.
func TestNearRanksAsOneSearch(t *testing.T) {
	t.Parallel()
	x, vocab := randomIndex(t, 41)
	// A window of more documents than any query matches.
	twoSteps := &search.Engine{Index: x, NearWindow: 1000}
	oneSearch := &search.Engine{Index: x, NearWindow: 1000, NearInOneSearch: true}
	for _, text := range nearQueries(vocab, 7) {
		q := parse(t, text)
		if len(q.Pairs) == 0 {
			t.Fatalf("%q has no pairs", text)
		}
		for _, limit := range []int{3, 20} {
			two, one := allPages(t, twoSteps, q, limit), allPages(t, oneSearch, q, limit)
			if len(two) != len(one) {
				t.Fatalf("%q, limit %d: %d pages in two steps, %d in one", text, limit, len(two), len(one))
			}
			for i := range two {
				if got, want := search.Comparable(two[i]), search.Comparable(one[i]); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%q, limit %d, page %d:\ntwo steps %+v\none       %+v", text, limit, i, got, want)
				}
			}
		}
	}
}

// TestNearPagesPastTheWindow: with more matches than the window holds, the window's
// documents are the best by the words alone, ranked by the whole query; the rest follow
// in the order of the words alone; and the pages, whatever their size, give every
// matching document once.
func TestNearPagesPastTheWindow(t *testing.T) {
	t.Parallel()
	x, vocab := randomIndex(t, 43)
	const window = 5
	e := &search.Engine{Index: x, NearWindow: window}
	tried := 0
	for _, text := range nearQueries(vocab, 9) {
		q := parse(t, text)
		alone := q
		alone.Pairs = nil
		var byWords []search.Hit
		for _, p := range allPages(t, e, alone, 20) {
			byWords = append(byWords, p.Hits...)
		}
		if len(byWords) <= window {
			continue
		}
		tried++
		for _, limit := range []int{1, 3, 7} {
			var hits []search.Hit
			for _, p := range allPages(t, e, q, limit) {
				hits = append(hits, p.Hits...)
			}
			ids := func(hs []search.Hit) []string {
				var out []string
				for _, h := range hs {
					out = append(out, id(h))
				}
				return out
			}
			if len(hits) != len(byWords) {
				t.Fatalf("%q, limit %d: %d hits over the pages; %d documents match", text, limit, len(hits), len(byWords))
			}
			win, winWords := ids(hits[:window]), ids(byWords[:window])
			slices.Sort(win)
			slices.Sort(winWords)
			if !slices.Equal(win, winWords) {
				t.Fatalf("%q, limit %d: window %v; the best by words alone are %v", text, limit, win, winWords)
			}
			for i := 1; i < window; i++ {
				if hits[i].Score > hits[i-1].Score || hits[i].Past() {
					t.Fatalf("%q, limit %d: window hit %d %+v after %+v", text, limit, i, hits[i], hits[i-1])
				}
			}
			if !slices.Equal(ids(hits[window:]), ids(byWords[window:])) {
				t.Fatalf("%q, limit %d: past the window\n%v\nwant the order of the words alone\n%v", text, limit, ids(hits[window:]), ids(byWords[window:]))
			}
			for _, h := range hits[window:] {
				if !h.Past() {
					t.Fatalf("%q, limit %d: %+v past the window is not marked so", text, limit, h)
				}
			}
		}
	}
	if tried < 8 {
		t.Fatalf("only %d queries matched more documents than the window holds", tried)
	}
}
