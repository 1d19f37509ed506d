package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
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

// allPages returns every page of q's results, limit hits at a time.
func allPages(t *testing.T, x *Index, q Query, limit int) []Result {
	t.Helper()
	var out []Result
	req := Request{Query: q, Limit: limit}
	for range 1000 {
		res, err := x.Search(context.Background(), req)
		noErr(t, err, "search "+q.String())
		res.Next, res.more = "", false
		out = append(out, res)
		if len(res.Hits) < limit {
			break
		}
		req.Cursor = x.mustNext(t, req, res)
	}
	return out
}

// TestNearRanksAsOneSearch: while a query matches no more documents than the nearness
// window holds, ranking in two steps gives every page exactly as one search of the whole
// query does: the same hits, scores, totals and ties.
func TestNearRanksAsOneSearch(t *testing.T) {
	x, vocab := randomIndex(t, 41)
	defer func(n int) { nearWindow = n }(nearWindow)
	nearWindow = 1000 // more than any query matches
	for _, text := range nearQueries(vocab, 7) {
		q, err := ParseQuery(text)
		noErr(t, err, "parse")
		if len(q.Pairs) == 0 {
			t.Fatalf("%q has no pairs", text)
		}
		for _, limit := range []int{3, 20} {
			two := allPages(t, x, q, limit)
			rankNear = false
			one := allPages(t, x, q, limit)
			rankNear = true
			if len(two) != len(one) {
				t.Fatalf("%q, limit %d: %d pages in two steps, %d in one", text, limit, len(two), len(one))
			}
			for i := range two {
				for j := range two[i].Hits {
					two[i].Hits[j].past = false
				}
				if fmt.Sprint(two[i]) != fmt.Sprint(one[i]) {
					t.Fatalf("%q, limit %d, page %d:\ntwo steps %+v\none       %+v", text, limit, i, two[i], one[i])
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
	x, vocab := randomIndex(t, 43)
	defer func(n int) { nearWindow = n }(nearWindow)
	nearWindow = 5
	tried := 0
	for _, text := range nearQueries(vocab, 9) {
		q, err := ParseQuery(text)
		noErr(t, err, "parse")
		alone := q
		alone.Pairs = nil
		var byWords []Hit
		for _, p := range allPages(t, x, alone, 20) {
			byWords = append(byWords, p.Hits...)
		}
		if len(byWords) <= nearWindow {
			continue
		}
		tried++
		for _, limit := range []int{1, 3, 7} {
			var hits []Hit
			for _, p := range allPages(t, x, q, limit) {
				hits = append(hits, p.Hits...)
			}
			ids := func(hs []Hit) []string {
				var out []string
				for _, h := range hs {
					out = append(out, h.key().ID())
				}
				return out
			}
			if len(hits) != len(byWords) {
				t.Fatalf("%q, limit %d: %d hits over the pages; %d documents match", text, limit, len(hits), len(byWords))
			}
			win, winWords := ids(hits[:nearWindow]), ids(byWords[:nearWindow])
			slices.Sort(win)
			slices.Sort(winWords)
			if !slices.Equal(win, winWords) {
				t.Fatalf("%q, limit %d: window %v; the best by words alone are %v", text, limit, win, winWords)
			}
			for i := 1; i < nearWindow; i++ {
				if hits[i].Score > hits[i-1].Score || hits[i].past {
					t.Fatalf("%q, limit %d: window hit %d %+v after %+v", text, limit, i, hits[i], hits[i-1])
				}
			}
			if !slices.Equal(ids(hits[nearWindow:]), ids(byWords[nearWindow:])) {
				t.Fatalf("%q, limit %d: past the window\n%v\nwant the order of the words alone\n%v", text, limit, ids(hits[nearWindow:]), ids(byWords[nearWindow:]))
			}
			for _, h := range hits[nearWindow:] {
				if !h.past {
					t.Fatalf("%q, limit %d: %+v past the window is not marked so", text, limit, h)
				}
			}
		}
	}
	if tried < 8 {
		t.Fatalf("only %d queries matched more documents than the window holds", tried)
	}
}
