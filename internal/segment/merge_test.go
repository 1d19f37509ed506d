package segment

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	api "github.com/blevesearch/scorch_segment_api/v2"
	zapv16 "github.com/blevesearch/zapx/v16"
)

// TestMergeAsZap: segments merged with documents dropped hold what zap's merge of zap's
// segments of the same documents holds, and number the documents as it does; merging
// the merged segments again too.
func TestMergeAsZap(t *testing.T) {
	docs := analyzedDocs(t, 5, 1200)
	dir := t.TempDir()
	var ours, theirs []api.Segment
	var drops []*roaring.Bitmap
	rng := rand.New(rand.NewPCG(5, 6))
	for i, part := range [][2]int{{0, 300}, {300, 310}, {310, 800}, {800, 1200}} {
		// Persisted and opened, as scorch merges them.
		so, sz := persistBoth(t, dir, fmt.Sprint(i), docs[part[0]:part[1]])
		ours, theirs = append(ours, so), append(theirs, sz)
		d := roaring.New()
		for range (part[1] - part[0]) / 4 {
			d.Add(uint32(rng.IntN(part[1] - part[0])))
		}
		if i == 1 {
			d = nil // a segment with nothing dropped
		}
		drops = append(drops, d)
	}
	mo, mz := mergeBoth(t, dir, "first", ours, theirs, drops)
	comparePostings(t, mo, mz)

	// Merged with a built segment, dropping some of the merged one's documents.
	o, z := buildBoth(t, docs[:50])
	d := roaring.BitmapOf(1, 2, 3, 500, 600)
	mo2, mz2 := mergeBoth(t, dir, "second", []api.Segment{mo, o}, []api.Segment{mz, z}, []*roaring.Bitmap{d, nil})
	comparePostings(t, mo2, mz2)
}

// TestMergeWithoutDropsAsZap: segments merged with nothing dropped (as every merge of a
// first index is) — their lists' full chunks copied as they are rather than decoded and
// encoded again — hold what zap's merge holds; so do the merged segments merged again,
// with nothing dropped and with documents dropped. The copy leaves a chunk of fewer
// postings than a full one before another chunk of some list.
func TestMergeWithoutDropsAsZap(t *testing.T) {
	docs := analyzedDocs(t, 11, 1500)
	dir := t.TempDir()
	var ours, theirs []api.Segment
	for i, part := range [][2]int{{0, 250}, {250, 260}, {260, 700}, {700, 1000}} {
		o, z := persistBoth(t, dir, fmt.Sprint(i), docs[part[0]:part[1]])
		ours, theirs = append(ours, o), append(theirs, z)
	}
	mo, mz := mergeBoth(t, dir, "whole", ours, theirs, make([]*roaring.Bitmap, len(ours)))
	comparePostings(t, mo, mz)
	if !shortChunkInside(t, mo) {
		t.Fatal("no list of the merge holds a short chunk before another: nothing copied")
	}

	o, z := persistBoth(t, dir, "more", docs[1000:1500])
	mo2, mz2 := mergeBoth(t, dir, "again", []api.Segment{mo, o}, []api.Segment{mz, z}, []*roaring.Bitmap{nil, nil})
	comparePostings(t, mo2, mz2)
	d := roaring.BitmapOf(0, 7, 300, 301, 999)
	mo3, mz3 := mergeBoth(t, dir, "dropped", []api.Segment{mo2, o}, []api.Segment{mz2, z}, []*roaring.Bitmap{d, nil})
	comparePostings(t, mo3, mz3)
}

// persistBoth builds docs into a segment of ours and one of zap's, persists both in dir
// under name, and opens them, as scorch merges them.
func persistBoth(t *testing.T, dir, name string, docs []index.Document) (*Segment, api.Segment) {
	t.Helper()
	o, z := buildBoth(t, docs)
	po, pz := filepath.Join(dir, name+".o"), filepath.Join(dir, name+".z")
	if err := o.persist(po); err != nil {
		t.Fatal(err)
	}
	if err := z.(api.UnpersistedSegment).Persist(pz); err != nil {
		t.Fatal(err)
	}
	return openBoth(t, po, pz)
}

// mergeBoth merges ours with our plugin and theirs with zap's, dropping drops, into dir
// under name; the new numbers of both must agree.
func mergeBoth(t *testing.T, dir, name string, ours, theirs []api.Segment, drops []*roaring.Bitmap) (*Segment, api.Segment) {
	t.Helper()
	po, pz := filepath.Join(dir, name+".o"), filepath.Join(dir, name+".z")
	no, _, err := (&Plugin{}).Merge(ours, drops, po, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	nz, _, err := (&zapv16.ZapPlugin{}).Merge(theirs, drops, pz, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(no) != fmt.Sprint(nz) {
		t.Fatalf("%s: new numbers %v, zap %v", name, no, nz)
	}
	return openBoth(t, po, pz)
}

func openBoth(t *testing.T, po, pz string) (*Segment, api.Segment) {
	t.Helper()
	so, err := Open(po)
	if err != nil {
		t.Fatal(err)
	}
	sz, err := (&zapv16.ZapPlugin{}).Open(pz)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = so.Close(); _ = sz.Close() })
	return so, sz
}

// shortChunkInside reports whether a long list of s holds a chunk of fewer than
// chunkPostings postings that is not its last.
func shortChunkInside(t *testing.T, s *Segment) bool {
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
			if pl.form != formLong {
				continue
			}
			pi := pl.iterator(false, false, nil)
			for c := range pi.nChunks - 1 {
				if err := pi.load(c); err != nil {
					t.Fatal(err)
				}
				if pi.m < chunkPostings {
					return true
				}
			}
		}
	}
	return false
}

// TestMergeStopsWhenClosed: a merge whose close channel is closed returns
// api.ErrClosed and leaves no file.
func TestMergeStopsWhenClosed(t *testing.T) {
	o, _ := buildBoth(t, analyzedDocs(t, 6, 100))
	path := filepath.Join(t.TempDir(), "merged")
	closeCh := make(chan struct{})
	close(closeCh)
	_, _, err := (&Plugin{}).Merge([]api.Segment{o}, []*roaring.Bitmap{nil}, path, closeCh, nil)
	if !errors.Is(err, api.ErrClosed) {
		t.Fatalf("merge: %v, want %v", err, api.ErrClosed)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("file left: %v", err)
	}
}

// TestMergeOfNothingLeft: a merge that drops every document writes a segment of none,
// which opens and has no terms.
func TestMergeOfNothingLeft(t *testing.T) {
	s, err := build(analyzedDocs(t, 7, 20))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all := roaring.New()
	all.AddRange(0, 20)
	path := filepath.Join(t.TempDir(), "merged")
	nums, _, err := (&Plugin{}).Merge([]api.Segment{s}, []*roaring.Bitmap{all}, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nums[0] {
		if n != dropped {
			t.Fatalf("new numbers %v", nums)
		}
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Count() != 0 {
		t.Fatalf("%d documents", m.Count())
	}
	for _, f := range m.Fields() {
		d, _ := m.Dictionary(f)
		if d.Cardinality() != 0 {
			t.Fatalf("field %s: %d terms", f, d.Cardinality())
		}
	}
}
