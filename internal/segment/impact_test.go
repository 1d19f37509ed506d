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
	for _, s := range []*Segment{a, m} {
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
