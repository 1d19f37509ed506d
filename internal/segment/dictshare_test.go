package segment

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	"github.com/blevesearch/vellum"
)

// TestDictionariesShareNoSuffixes: a segment's dictionaries are built without looking
// suffixes up (a registry of one cell). Building a segment from a batch takes at most 250
// allocations a document (204 here; 669 with vellum's default registry, whose nodes the
// builder cannot reuse), merging two at most 150 (131; 597 with it); the merge holds the
// terms of both; and the content field's dictionary is at most half as large again as
// the smallest FST of the same terms, which vellum's default registry builds (243 KB
// against 190 KB here).
func TestDictionariesShareNoSuffixes(t *testing.T) {
	docs := analyzedDocs(t, 31, 400)
	p := &Plugin{}
	dir := t.TempDir()
	open := func(name string, docs []index.Document) segment.Segment {
		t.Helper()
		o := openBuilt(t, p, docs, filepath.Join(dir, name))
		t.Cleanup(func() { _ = o.Close() })
		return o
	}
	a, b := open("a", docs[:200]), open("b", docs[200:])
	merged := 0
	merge := func() {
		merged++
		if _, _, err := p.Merge([]segment.Segment{a, b}, []*roaring.Bitmap{nil, nil}, filepath.Join(dir, "m"+string(rune('0'+merged%10))), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !raceEnabled { // the race detector drops what pools hold, at random
		built := testing.AllocsPerRun(3, func() {
			s, _, err := p.New(docs)
			if err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
		}) / float64(len(docs))
		mergedAllocs := testing.AllocsPerRun(3, merge) / float64(len(docs))
		t.Logf("%.0f allocations a document to build a segment, %.0f to merge", built, mergedAllocs)
		if built > 250 || mergedAllocs > 150 {
			t.Errorf("%.0f allocations a document to build a segment, %.0f to merge; want at most 250 and 150", built, mergedAllocs)
		}
	}
	merge()
	m, err := p.Open(filepath.Join(dir, "m"+string(rune('0'+merged%10))))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	terms := func(s segment.Segment, field string) map[string]bool {
		d, err := s.Dictionary(field)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		it := d.AutomatonIterator(nil, nil, nil)
		for e, err := it.Next(); e != nil && err == nil; e, err = it.Next() {
			out[e.Term] = true
		}
		return out
	}
	for _, field := range []string{"content", "path", idField} {
		want := terms(a, field)
		for term := range terms(b, field) {
			want[term] = true
		}
		got := terms(m, field)
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("%s: %d terms merged from %d", field, len(got), len(want))
		}
		for term := range want {
			if !got[term] {
				t.Fatalf("%s: %q not merged", field, term)
			}
		}
	}
	ms := m.(inFile).Segment
	f := ms.fields[ms.byName["content"]].fst
	build := func(opts *vellum.BuilderOpts) int {
		var buf bytes.Buffer
		vb, err := vellum.New(&buf, opts)
		if err != nil {
			t.Fatal(err)
		}
		it, err := f.Iterator(nil, nil)
		for err == nil {
			k, v := it.Current()
			if err := vb.Insert(k, v); err != nil {
				t.Fatal(err)
			}
			err = it.Next()
		}
		if err := vb.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Len()
	}
	flat, smallest := build(dictOptions), build(nil)
	t.Logf("content: %d terms, a dictionary of %d bytes, the smallest %d", f.Len(), flat, smallest)
	if flat > smallest*3/2 {
		t.Errorf("the content field's dictionary takes %d bytes, the smallest of its terms %d", flat, smallest)
	}
}
