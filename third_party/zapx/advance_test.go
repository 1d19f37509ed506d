package zap

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// postingOf is what a posting says, to compare two iterators' answers.
type postingOf struct {
	num, freq uint64
	norm      float64
	locs      string
}

func readPosting(p segment.Posting, locs bool) postingOf {
	r := postingOf{num: p.Number(), freq: p.Frequency(), norm: p.Norm()}
	if locs {
		var b strings.Builder
		for _, l := range p.Locations() {
			fmt.Fprintf(&b, "%s:%d:%d-%d ", l.Field(), l.Pos(), l.Start(), l.End())
		}
		r.locs = b.String()
	}
	return r
}

// TestAdvanceAsNext checks that Advance finds what Next finds, whatever the chunks a
// postings list is cut into and however far each step goes: the posting at or after the
// target, with its frequency, norm and locations, and the postings after it.
func TestAdvanceAsNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	words := []string{"common", "mid", "rare", "filler", "other"}
	share := []float64{0.7, 0.2, 0.01, 0.9, 0.5}
	var docs []index.Document
	for d := range 3000 {
		var text []string
		for w, word := range words {
			if rng.Float64() < share[w] {
				for range 1 + rng.IntN(4) {
					text = append(text, word)
				}
			}
		}
		for range rng.IntN(20) {
			text = append(text, "pad")
		}
		rng.Shuffle(len(text), func(i, j int) { text[i], text[j] = text[j], text[i] })
		id := fmt.Sprintf("d%05d", d)
		docs = append(docs, newStubDocument(id, []*stubField{
			newStubFieldSplitString("_id", nil, id, true, false, false),
			newStubFieldSplitString("body", nil, strings.Join(text, " "), false, false, true),
		}, "_all"))
	}
	for _, mode := range []uint32{16, 100, 1025, DefaultChunkMode} {
		seg, _, err := zapPlugin.newWithChunkMode(docs, mode, nil)
		if err != nil {
			t.Fatal(err)
		}
		sb := seg.(*SegmentBase)
		dict, err := sb.Dictionary("body")
		if err != nil {
			t.Fatal(err)
		}
		for _, word := range append(words, "pad") {
			for _, except := range []*roaring.Bitmap{nil, roaring.BitmapOf(3, 5, 700, 1500, 2999)} {
				for _, locs := range []bool{false, true} {
					name := fmt.Sprintf("mode %d, %s, deleted %v, locations %v", mode, word, except != nil, locs)
					pl, err := dict.PostingsList([]byte(word), except, nil)
					if err != nil {
						t.Fatal(err)
					}
					var all []postingOf
					it := pl.Iterator(true, true, locs, nil)
					for p, err := it.Next(); p != nil || err != nil; p, err = it.Next() {
						if err != nil {
							t.Fatal(err)
						}
						all = append(all, readPosting(p, locs))
					}
					if len(all) == 0 {
						t.Fatalf("%s: no postings", name)
					}
					for walk := range 50 {
						it := pl.Iterator(true, true, locs, nil)
						at := 0 // all[at] is the next posting Next should give
						for step := 0; at < len(all); step++ {
							var p segment.Posting
							var target uint64
							if rng.IntN(3) == 0 {
								p, err = it.Next()
							} else {
								from := uint64(0)
								if at > 0 {
									from = all[at-1].num + 1
								}
								switch rng.IntN(4) {
								case 0:
									target = from // where Next would go
								case 1:
									target = from + uint64(rng.IntN(40))
								default:
									target = from + uint64(rng.IntN(1200))
								}
								p, err = it.Advance(target)
								for at < len(all) && all[at].num < target {
									at++
								}
							}
							if err != nil {
								t.Fatal(err)
							}
							if at == len(all) {
								if p != nil {
									t.Fatalf("%s, walk %d, step %d: Advance(%d) gave %d past the last posting", name, walk, step, target, p.Number())
								}
								break
							}
							if p == nil {
								t.Fatalf("%s, walk %d, step %d: nothing where %d is (target %d)", name, walk, step, all[at].num, target)
							}
							if got := readPosting(p, locs); got != all[at] {
								t.Fatalf("%s, walk %d, step %d (target %d): got %+v, want %+v", name, walk, step, target, got, all[at])
							}
							at++
						}
					}
				}
			}
		}
	}
}

// TestAdvancePassesChunksWithDeletions: in a list with deleted documents, Advance to a
// far target visits only the postings of the target's chunk, not every posting before
// it, as it does in a list without (the chunk's entries are read from its start).
func TestAdvancePassesChunksWithDeletions(t *testing.T) {
	var docs []index.Document
	for d := range 3000 {
		id := fmt.Sprintf("d%05d", d)
		docs = append(docs, newStubDocument(id, []*stubField{
			newStubFieldSplitString("_id", nil, id, true, false, false),
			newStubFieldSplitString("body", nil, "word other", false, false, true),
		}, "_all"))
	}
	seg, _, err := zapPlugin.newWithChunkMode(docs, DefaultChunkMode, nil)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := seg.(*SegmentBase).Dictionary("body")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := dict.PostingsList([]byte("word"), roaring.BitmapOf(3, 1500), nil)
	if err != nil {
		t.Fatal(err)
	}
	it := pl.Iterator(true, true, true, nil).(*PostingsIterator)
	p, err := it.Advance(2990)
	if err != nil || p == nil || p.Number() != 2990 {
		t.Fatalf("Advance(2990): %v, %v", p, err)
	}
	if chunk := int(it.postings.chunkSize); it.allSteps > chunk {
		t.Errorf("Advance(2990) visited %d postings; a chunk holds %d", it.allSteps, chunk)
	}
	if p, err = it.Next(); err != nil || p == nil || p.Number() != 2991 {
		t.Fatalf("Next after 2990: %v, %v", p, err)
	}
}
