package zap

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	seg "github.com/blevesearch/scorch_segment_api/v2"
)

// frontier is the pairs of ps that no other dominates, by rising frequency: what
// addImpact keeps, computed the slow way.
func frontier(ps []Impact) []Impact {
	var out []Impact
	for i, p := range ps {
		dominated := false
		for j, q := range ps {
			if q.Freq >= p.Freq && q.Norm <= p.Norm && (q != p || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b Impact) int { return int(a.Freq) - int(b.Freq) })
	return out
}

// dominates reports whether some pair of front bounds p: a frequency as high or higher
// with a norm as low or lower.
func dominates(front []Impact, p Impact) bool {
	for _, q := range front {
		if q.Freq >= p.Freq && q.Norm <= p.Norm {
			return true
		}
	}
	return false
}

// TestAddImpactKeepsTheFrontier: the pairs kept are exactly those no other posting
// dominates while they fit in maxImpacts, and past it still bound every posting added.
func TestAddImpactKeepsTheFrontier(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 2000 {
		n := 1 + rng.IntN(200)
		top := uint64(2 + rng.IntN(40))
		var all []Impact
		var front []Impact
		for range n {
			p := Impact{1 + rng.Uint64N(top), 1 + rng.Uint64N(3*top)}
			if run%2 == 1 { // longer fields with more occurrences: a long frontier
				p.Norm = 3*p.Freq + rng.Uint64N(4)
			}
			all = append(all, p)
			front = addImpact(front, p.Freq, p.Norm)
		}
		want := frontier(all)
		if len(want) <= maxImpacts {
			if !slices.Equal(front, want) {
				t.Fatalf("run %d: kept %v, the frontier of %v is %v", run, front, all, want)
			}
			continue
		}
		if len(front) > maxImpacts {
			t.Fatalf("run %d: %d pairs kept, more than %d", run, len(front), maxImpacts)
		}
		for _, p := range all {
			if !dominates(front, p) {
				t.Fatalf("run %d: %v bounds no posting %v", run, front, p)
			}
		}
		for i := 1; i < len(front); i++ {
			if front[i].Freq <= front[i-1].Freq || front[i].Norm <= front[i-1].Norm {
				t.Fatalf("run %d: pairs out of order: %v", run, front)
			}
		}
	}
}

// TestImpactsBoundEveryPosting reads, for every posting of every list, the impacts of
// its chunk: of a segment as built, persisted, and merged both ways (postings copied, and
// re-encoded when the segments' fields differ), with documents deleted. Some pair must
// bound the posting, the chunk must hold it, and the pairs must be exactly the frontier
// of the chunk's postings when no document of the list is deleted.
func TestImpactsBoundEveryPosting(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	words := []string{"common", "mid", "rare", "filler", "other"}
	share := []float64{0.7, 0.2, 0.01, 0.9, 0.5}
	makeDocs := func(s, n int, extra bool) []index.Document {
		var docs []index.Document
		for d := range n {
			var text []string
			for w, word := range words {
				if rng.Float64() < share[w] {
					for range 1 + rng.IntN(1+rng.IntN(12)) {
						text = append(text, word)
					}
				}
			}
			for range rng.IntN(60) {
				text = append(text, "pad")
			}
			rng.Shuffle(len(text), func(i, j int) { text[i], text[j] = text[j], text[i] })
			id := fmt.Sprintf("s%dd%05d", s, d)
			fields := []*stubField{
				newStubFieldSplitString("_id", nil, id, true, false, false),
				newStubFieldSplitString("body", nil, strings.Join(text, " "), false, false, true),
			}
			if extra {
				fields = append(fields, newStubFieldSplitString("extra", nil, "mid other", false, false, true))
			}
			docs = append(docs, newStubDocument(id, fields, "_all"))
		}
		return docs
	}
	check := func(t *testing.T, name string, sb *SegmentBase, except *roaring.Bitmap) {
		t.Helper()
		dict, err := sb.Dictionary("body")
		if err != nil {
			t.Fatal(err)
		}
		for _, word := range append(words, "pad", "absent") {
			pl, err := dict.PostingsList([]byte(word), except, nil)
			if err != nil {
				t.Fatal(err)
			}
			it := pl.Iterator(true, true, false, nil).(*PostingsIterator)
			var buf []Impact
			chunks := map[uint64][]Impact{} // chunk end → its postings
			impacts := map[uint64][]Impact{}
			for p, err := it.Next(); p != nil || err != nil; p, err = it.Next() {
				if err != nil {
					t.Fatalf("%s %s: %v", name, word, err)
				}
				pair := Impact{p.Frequency(), p.(*Posting).NormUint64()}
				var end uint64
				var ok bool
				buf, end, ok = it.Impacts(p.Number(), buf)
				switch {
				case !ok:
					t.Fatalf("%s %s: no impacts for document %d", name, word, p.Number())
				case end <= p.Number() || it.postings != nil && it.postings.chunkSize > 0 && end-it.postings.chunkSize > p.Number():
					t.Fatalf("%s %s: document %d is not in the chunk ending at %d", name, word, p.Number(), end)
				case !dominates(buf, pair):
					t.Fatalf("%s %s: impacts %v of document %d's chunk bound no %v", name, word, buf, p.Number(), pair)
				}
				chunks[end] = append(chunks[end], pair)
				impacts[end] = slices.Clone(buf)
			}
			if except != nil {
				continue
			}
			for end, ps := range chunks {
				if want := frontier(ps); len(want) <= maxImpacts && !slices.Equal(impacts[end], want) {
					t.Fatalf("%s %s: the chunk ending at %d has impacts %v, its postings' frontier is %v", name, word, end, impacts[end], want)
				}
			}
		}
	}

	dir := t.TempDir()
	var segs []seg.Segment
	for s := range 3 {
		docs := makeDocs(s, 2500, s == 2)
		built, _, err := zapPlugin.New(docs)
		if err != nil {
			t.Fatal(err)
		}
		check(t, fmt.Sprintf("segment %d as built", s), built.(*SegmentBase), nil)
		check(t, fmt.Sprintf("segment %d as built, deletions", s), built.(*SegmentBase), roaring.BitmapOf(0, 7, 300, 2499))
		path := filepath.Join(dir, fmt.Sprintf("%d.zap", s))
		if err := PersistSegmentBase(built.(*SegmentBase), path); err != nil {
			t.Fatal(err)
		}
		opened, err := zapPlugin.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer opened.Close()
		check(t, fmt.Sprintf("segment %d persisted", s), &opened.(*Segment).SegmentBase, nil)
		segs = append(segs, opened)
	}
	// The same fields: postings copied. Another field in the second: re-encoded.
	for _, pair := range [][2]int{{0, 1}, {0, 2}} {
		for _, drop := range []bool{false, true} {
			drops := []*roaring.Bitmap{nil, nil}
			if drop {
				drops[1] = roaring.BitmapOf(1, 2, 3, 1000, 2499)
			}
			path := filepath.Join(dir, fmt.Sprintf("merged-%v-%v.zap", pair, drop))
			if _, _, err := zapPlugin.Merge([]seg.Segment{segs[pair[0]], segs[pair[1]]}, drops, path, nil, nil); err != nil {
				t.Fatal(err)
			}
			merged, err := zapPlugin.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer merged.Close()
			check(t, fmt.Sprintf("segments %v merged, deletions %v", pair, drop), &merged.(*Segment).SegmentBase, nil)
		}
	}
}

// TestImpactsOfASegmentWithout: a segment of another chunk mode stores no impacts, and
// says so.
func TestImpactsOfASegmentWithout(t *testing.T) {
	docs := []index.Document{newStubDocument("a", []*stubField{
		newStubFieldSplitString("_id", nil, "a", true, false, false),
		newStubFieldSplitString("body", nil, "x x y", false, false, true),
	}, "_all")}
	built, _, err := zapPlugin.newWithChunkMode(docs, 1026, nil)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := built.(*SegmentBase).Dictionary("body")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := dict.PostingsList([]byte("x"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	it := pl.Iterator(true, true, false, nil).(*PostingsIterator)
	if _, _, ok := it.Impacts(0, nil); ok {
		t.Fatal("impacts read from a segment of chunk mode 1026")
	}
}
