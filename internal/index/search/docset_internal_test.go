package search

import (
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestDocSetCountsWhatRoaringCounts holds the set of bits to roaring's own union and
// intersection, over bitmaps of every kind of container (runs, arrays, bitmaps), sparse
// and dense, in segments of a few documents to several containers, with numbers past the
// segment's count too (the set grows rather than loses them).
func TestDocSetCountsWhatRoaringCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	random := func(docs uint64) *roaring.Bitmap {
		bm := roaring.New()
		switch r.IntN(4) {
		case 0: // runs: folders numbered together
			for range 1 + r.IntN(8) {
				lo := r.Uint64N(docs)
				bm.AddRange(lo, min(docs, lo+1+r.Uint64N(docs/4+1)))
			}
		case 1: // sparse
			for range r.IntN(50) {
				bm.Add(uint32(r.Uint64N(docs)))
			}
		case 2: // dense
			for d := range docs {
				if r.IntN(3) == 0 {
					bm.Add(uint32(d))
				}
			}
		case 3: // empty
		}
		if r.IntN(2) == 0 {
			bm.RunOptimize()
		}
		return bm
	}
	var set, word docSet
	for round := range 300 {
		docs := []uint64{1, 63, 64, 65, 1000, 70000, 200000}[round%7]
		n := 1 + r.IntN(6)
		bms := make([]*roaring.Bitmap, n)
		for i := range bms {
			bms[i] = random(docs)
		}
		var ones []oneHit
		for range r.IntN(3) {
			ones = append(ones, oneHit{term: r.IntN(n), doc: r.Uint64N(docs + 100)})
		}
		want := roaring.FastOr(bms...)
		for _, o := range ones {
			want.Add(uint32(o.doc))
		}
		set.reset(docs)
		unionOf(&set, bms, ones, 0, n)
		if got := set.count(); got != want.GetCardinality() {
			t.Fatalf("round %d: union counted %d, roaring %d", round, got, want.GetCardinality())
		}
		// A conjunction of two words: the first half of the terms and the rest.
		half := n / 2
		a, b := roaring.FastOr(bms[:half]...), roaring.FastOr(bms[half:]...)
		for _, o := range ones {
			if o.term < half {
				a.Add(uint32(o.doc))
			} else {
				b.Add(uint32(o.doc))
			}
		}
		set.reset(docs)
		unionOf(&set, bms, ones, 0, half)
		word.reset(docs)
		unionOf(&word, bms, ones, half, n)
		set.and(&word)
		if got, want := set.count(), roaring.And(a, b).GetCardinality(); got != want {
			t.Fatalf("round %d: intersection counted %d, roaring %d", round, got, want)
		}
	}
}
