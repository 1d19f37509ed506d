package segment

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	bdoc "github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"
	api "github.com/blevesearch/scorch_segment_api/v2"
	zapv16 "github.com/blevesearch/zapx/v16"
)

// analyzedDocs maps and analyzes n random documents as scorch does before it builds a
// segment of them.
func analyzedDocs(t testing.TB, seed uint64, n int) []index.Document {
	t.Helper()
	m, err := testMapping()
	if err != nil {
		t.Fatal(err)
	}
	v := newVocabulary(seed, 2000)
	out := make([]index.Document, n)
	for i := range out {
		id, d := v.doc()
		doc := bdoc.NewDocument(docID(i, id))
		if err := m.MapDocument(doc, d); err != nil {
			t.Fatal(err)
		}
		doc.AddIDField()
		doc.VisitFields(func(f index.Field) {
			if f.Options().IsIndexed() {
				f.Analyze()
				if doc.HasComposite() && f.Name() != "_id" {
					doc.VisitComposite(func(cf index.CompositeField) {
						cf.Compose(f.Name(), f.AnalyzedLength(), f.AnalyzedTokenFrequencies())
					})
				}
			}
		})
		out[i] = doc
	}
	return out
}

// buildBoth builds a segment of docs in this format and one in zap v16's.
func buildBoth(t testing.TB, docs []index.Document) (*Segment, api.Segment) {
	t.Helper()
	ours, _, err := (&Plugin{}).New(docs)
	if err != nil {
		t.Fatal(err)
	}
	theirs, _, err := (&zapv16.ZapPlugin{}).New(docs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ours.Close(); _ = theirs.Close() })
	return ours.(inMemory).Segment, theirs
}

// TestPostingsReadAsZaps: every term of every field of a segment built of random
// documents has the postings zap's segment of the same documents has — documents,
// frequencies, norms, positions — read in order, by Advance, and less deleted documents.
func TestPostingsReadAsZaps(t *testing.T) {
	docs := analyzedDocs(t, 3, 1500)
	ours, theirs := buildBoth(t, docs)
	comparePostings(t, ours, theirs)
}

func comparePostings(t *testing.T, ours *Segment, theirs api.Segment) {
	t.Helper()
	if ours.Count() != theirs.Count() {
		t.Fatalf("%d documents, zap %d", ours.Count(), theirs.Count())
	}
	if fmt.Sprint(ours.Fields()) != fmt.Sprint(theirs.Fields()) {
		t.Fatalf("fields %v, zap %v", ours.Fields(), theirs.Fields())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	except := roaring.New()
	for range ours.Count() / 10 {
		except.Add(uint32(rng.IntN(int(ours.Count()))))
	}
	for d := range ours.Count() {
		a, _ := ours.DocID(d)
		b, _ := theirs.DocID(d)
		if string(a) != string(b) {
			t.Fatalf("document %d is %q, zap %q", d, a, b)
		}
	}
	terms, long := 0, 0
	for _, field := range theirs.Fields() {
		do, _ := ours.Dictionary(field)
		dz, _ := theirs.Dictionary(field)
		if do.Cardinality() != dz.Cardinality() {
			t.Errorf("field %s: %d terms, zap %d", field, do.Cardinality(), dz.Cardinality())
		}
		io, iz := do.AutomatonIterator(nil, nil, nil), dz.AutomatonIterator(nil, nil, nil)
		for {
			eo, err := io.Next()
			if err != nil {
				t.Fatal(err)
			}
			ez, _ := iz.Next()
			if eo == nil || ez == nil {
				if eo != ez {
					t.Fatalf("field %s: term %v, zap %v", field, eo, ez)
				}
				break
			}
			// zap's dictionary counts a merged segment's terms wrong (see
			// compareDicts): the count is held to its postings list.
			zc, _ := dz.PostingsList([]byte(ez.Term), nil, nil)
			if eo.Term != ez.Term || eo.Count != zc.Count() {
				t.Fatalf("field %s: term %v, zap %v of %d documents", field, *eo, *ez, zc.Count())
			}
			terms++
			if eo.Count > chunkPostings {
				long++
			}
			for _, ex := range []*roaring.Bitmap{nil, except} {
				po, err := do.PostingsList([]byte(eo.Term), ex, nil)
				if err != nil {
					t.Fatal(err)
				}
				pz, _ := dz.PostingsList([]byte(eo.Term), ex, nil)
				if po.Count() != pz.Count() {
					t.Fatalf("field %s, term %q: count %d, zap %d", field, eo.Term, po.Count(), pz.Count())
				}
				name := fmt.Sprintf("field %s, term %q, except %v", field, eo.Term, ex != nil)
				sameIteration(t, name, po.Iterator(true, true, true, nil), pz.Iterator(true, true, true, nil), rng, false, true)
				sameIteration(t, name+" advancing", po.Iterator(true, true, true, nil), pz.Iterator(true, true, true, nil), rng, true, true)
				sameIteration(t, name+" without frequencies", po.Iterator(false, false, false, nil), pz.Iterator(false, false, false, nil), rng, true, false)
			}
		}
	}
	if terms == 0 || long == 0 {
		t.Fatalf("%d terms, %d of long lists", terms, long)
	}
}

// sameIteration reads both iterators to the end, by Next or, when advancing, by Advance
// to random documents ahead, and compares what they return.
func sameIteration(t *testing.T, name string, a, b api.PostingsIterator, rng *rand.Rand, advancing, freqs bool) {
	t.Helper()
	var target uint64
	for n := 0; ; n++ {
		var pa, pb api.Posting
		var err error
		if advancing && rng.IntN(3) == 0 {
			target += uint64(rng.IntN(70))
			pa, err = a.Advance(target)
			pb, _ = b.Advance(target)
		} else {
			pa, err = a.Next()
			pb, _ = b.Next()
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if pa == nil || pb == nil {
			if pa != nil || pb != nil {
				t.Fatalf("%s: posting %d: %v, zap %v", name, n, pa, pb)
			}
			return
		}
		if pa.Number() != pb.Number() || freqs && (pa.Frequency() != pb.Frequency() || pa.Norm() != pb.Norm()) {
			t.Fatalf("%s: posting %d: document %d, frequency %d, norm %v; zap %d, %d, %v",
				name, n, pa.Number(), pa.Frequency(), pa.Norm(), pb.Number(), pb.Frequency(), pb.Norm())
		}
		la, lb := pa.Locations(), pb.Locations()
		if len(la) != len(lb) {
			t.Fatalf("%s: posting %d: %d locations, zap %d", name, n, len(la), len(lb))
		}
		for i := range la {
			if la[i].Pos() != lb[i].Pos() || la[i].Field() != lb[i].Field() {
				t.Fatalf("%s: posting %d, location %d: %s@%d, zap %s@%d", name, n, i, la[i].Field(), la[i].Pos(), lb[i].Field(), lb[i].Pos())
			}
		}
		target = pa.Number() + 1
	}
}
