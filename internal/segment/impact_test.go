package segment

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	api "github.com/blevesearch/scorch_segment_api/v2"
)

// frontier returns into dst the pairs of ps, computed the slow way (sorted), that no other dominates, by rising frequency
// (and so rising length), at most maxImpacts of them; ps is reordered.
func frontier(ps []Impact, dst []Impact) []Impact {
	// By falling frequency, and of equal frequencies the shortest first: a pair is on
	// the frontier when it is shorter than every pair before it.
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && (ps[j].Freq > ps[j-1].Freq || ps[j].Freq == ps[j-1].Freq && ps[j].Norm < ps[j-1].Norm); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	dst = dst[:0]
	for i, p := range ps {
		if i == 0 || p.Norm < dst[len(dst)-1].Norm {
			dst = append(dst, p)
		}
	}
	for i, j := 0, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	for len(dst) > maxImpacts {
		dst[1].Norm = dst[0].Norm
		dst = append(dst[:0], dst[1:]...)
	}
	return dst
}

// bounds reports whether some pair of ps dominates p: a frequency as high or higher, a
// length as short or shorter.
func bounds(ps []Impact, p Impact) bool {
	for _, q := range ps {
		if q.Freq >= p.Freq && q.Norm <= p.Norm {
			return true
		}
	}
	return false
}

// TestFrontierKeepsTheUndominated: the pairs kept are those no other dominates, computed
// the slow way, by rising frequency and length; past maxImpacts, fewer pairs that still
// bound every one; and added one by one as a segment adds them, the same.
func TestFrontierKeepsTheUndominated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := range 2000 {
		ps := make([]Impact, 1+rng.IntN(chunkPostings))
		spread := 3 + rng.IntN(100)
		for i := range ps {
			ps[i] = Impact{uint64(1 + rng.IntN(spread)), uint64(1 + rng.IntN(spread*3))}
		}
		all := slices.Clone(ps)
		var want []Impact
		for i, p := range all {
			dominated := false
			for j, q := range all {
				if j != i && q.Freq >= p.Freq && q.Norm <= p.Norm && (q != p || j < i) {
					dominated = true
				}
			}
			if !dominated {
				want = append(want, p)
			}
		}
		slices.SortFunc(want, func(a, b Impact) int { return int(a.Freq) - int(b.Freq) })
		got := frontier(ps, nil)
		var added []Impact
		for _, p := range all {
			added = addImpact(added, p)
		}
		if added = capImpacts(added); fmt.Sprint(added) != fmt.Sprint(got) {
			t.Fatalf("case %d: %v: added one by one %v, sorted %v", n, all, added, got)
		}
		if len(want) <= maxImpacts {
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("case %d: %v: %v, want %v", n, all, got, want)
			}
			continue
		}
		if len(got) != maxImpacts {
			t.Fatalf("case %d: %d pairs", n, len(got))
		}
		for _, p := range all {
			if !bounds(got, p) {
				t.Fatalf("case %d: %v bounds no %v", n, got, p)
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i].Freq <= got[i-1].Freq || got[i].Norm <= got[i-1].Norm {
				t.Fatalf("case %d: %v out of order", n, got)
			}
		}
	}
}

// TestImpactsBoundEveryPosting: in segments as built and merged (with documents
// dropped), every posting of every term lies in a chunk whose impacts bound it, and
// that ends after it; a chunk's impacts are its postings' frontier.
func TestImpactsBoundEveryPosting(t *testing.T) {
	docs := analyzedDocs(t, 9, 900)
	a, _ := buildBoth(t, docs[:600])
	b, _ := buildBoth(t, docs[600:])
	path := filepath.Join(t.TempDir(), "merged")
	drop := roaring.New()
	for d := uint32(0); d < 600; d += 7 {
		drop.Add(d)
	}
	if _, _, err := (&Plugin{}).Merge([]api.Segment{a, b}, []*roaring.Bitmap{drop, nil}, path, nil, nil); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// Merged with nothing dropped, the full chunks copied as they are; then that merged
	// with the first merge.
	whole := filepath.Join(t.TempDir(), "whole")
	if _, _, err := (&Plugin{}).Merge([]api.Segment{a, b}, nil, whole, nil, nil); err != nil {
		t.Fatal(err)
	}
	w, err := Open(whole)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	again := filepath.Join(t.TempDir(), "again")
	if _, _, err := (&Plugin{}).Merge([]api.Segment{w, m}, nil, again, nil, nil); err != nil {
		t.Fatal(err)
	}
	w2, err := Open(again)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	for _, s := range []*Segment{a, m, w, w2} {
		checked, chunks := 0, 0
		for _, field := range s.Fields() {
			d, _ := s.dictionary(field)
			it := d.AutomatonIterator(nil, nil, nil)
			for {
				e, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				if e == nil {
					break
				}
				pl, err := d.postingsList([]byte(e.Term), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				pi := pl.iterator(true, false, nil)
				var imps, chunk []Impact
				var end uint64
				for {
					p, err := pi.next()
					if err != nil {
						t.Fatal(err)
					}
					if p == nil {
						break
					}
					if p.doc >= end { // a new chunk: the last one's impacts are its frontier
						if chunk != nil && fmt.Sprint(frontier(chunk, nil)) != fmt.Sprint(imps) {
							t.Fatalf("%s %q: impacts %v, frontier %v", field, e.Term, imps, frontier(chunk, nil))
						}
						chunk = chunk[:0]
						var ok bool
						imps, end, ok = pi.Impacts(p.doc, nil)
						if !ok || end <= p.doc {
							t.Fatalf("%s %q: document %d: impacts %v, end %d, %v", field, e.Term, p.doc, imps, end, ok)
						}
						imps = slices.Clone(imps)
						chunks++
					}
					pair := Impact{p.freq, p.NormUint64()}
					chunk = append(chunk, pair)
					if !bounds(imps, pair) {
						t.Fatalf("%s %q: document %d: %v bound no %v", field, e.Term, p.doc, imps, pair)
					}
					checked++
				}
				if fmt.Sprint(frontier(chunk, nil)) != fmt.Sprint(imps) {
					t.Fatalf("%s %q: impacts %v, frontier %v", field, e.Term, imps, frontier(chunk, nil))
				}
			}
		}
		if checked == 0 || chunks*2 > checked {
			t.Fatalf("%d postings in %d chunks", checked, chunks)
		}
	}
}

// TestBlockMaxFindsTheBest: the best documents for a term, found passing over every chunk
// whose impacts cannot beat the worst kept (as guide's searches do), are those a scan of
// every posting finds, and whole chunks are passed over; in a segment as built and with
// deleted documents.
func TestBlockMaxFindsTheBest(t *testing.T) {
	s, err := build(analyzedDocs(t, 13, 3000))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, _ := s.dictionary("content")
	score := func(f, n uint64) float64 { // rises with the frequency, falls with the length
		return float64(f) / (float64(f) + 1.2*(0.25+0.75*float64(n)/300))
	}
	deleted := roaring.New()
	for i := uint32(0); i < 3000; i += 3 {
		deleted.Add(i)
	}
	var terms []string // of long lists
	di := d.AutomatonIterator(nil, nil, nil)
	for e, _ := di.Next(); e != nil && len(terms) < 12; e, _ = di.Next() {
		if e.Count > 3*chunkPostings {
			terms = append(terms, e.Term)
		}
	}
	passed := 0
	for _, except := range []*roaring.Bitmap{nil, deleted} {
		for _, term := range terms {
			type hit struct {
				doc   uint64
				score float64
			}
			best := func(hs []hit) []hit {
				slices.SortStableFunc(hs, func(a, b hit) int {
					switch {
					case a.score > b.score:
						return -1
					case a.score < b.score:
						return 1
					}
					return int(a.doc) - int(b.doc)
				})
				return hs[:min(10, len(hs))]
			}
			pl, err := d.postingsList([]byte(term), except, nil)
			if err != nil {
				t.Fatal(err)
			}
			var all []hit
			it := pl.iterator(true, false, nil)
			for p, _ := it.next(); p != nil; p, _ = it.next() {
				all = append(all, hit{p.doc, score(p.freq, p.NormUint64())})
			}
			want := best(all)

			var kept []hit
			theta := -1.0
			it = pl.iterator(true, false, nil)
			p, _ := it.next()
			var end uint64
			for p != nil {
				if p.doc >= end {
					imps, e, ok := it.Impacts(p.doc, nil)
					if !ok {
						t.Fatalf("%s: no impacts at %d", term, p.doc)
					}
					peak := 0.0
					for _, i := range imps {
						peak = max(peak, score(i.Freq, i.Norm))
					}
					end = e
					if len(kept) >= 10 && peak < theta {
						passed++
						if p, err = it.advance(end); err != nil {
							t.Fatal(err)
						}
						continue
					}
				}
				kept = best(append(kept, hit{p.doc, score(p.freq, p.NormUint64())}))
				if len(kept) == 10 {
					theta = kept[9].score
				}
				p, _ = it.next()
			}
			if fmt.Sprint(kept) != fmt.Sprint(want) {
				t.Fatalf("%s, deleted %v: %v, want %v", term, except != nil, kept, want)
			}
		}
	}
	if passed == 0 {
		t.Fatal("no chunk passed over")
	}
}
