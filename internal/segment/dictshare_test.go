package segment

import (
	"os"
	"path/filepath"
	"testing"

	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// TestBatchSegmentsShareNoSuffixes: a segment built from a batch builds its dictionaries
// without looking suffixes up (a registry of one cell): at most 250 allocations a
// document (204 here), where the default registry's nodes, which the builder cannot
// reuse, made 651 (BenchmarkNew: 1.16 million for 2,000 documents, now 0.30); a merge of
// it shares them again, its file smaller than the batch's, and both hold the same terms.
func TestBatchSegmentsShareNoSuffixes(t *testing.T) {
	docs := analyzedDocs(t, 31, 400)
	p := &Plugin{}
	if !raceEnabled { // the race detector drops what pools hold, at random
		allocs := testing.AllocsPerRun(3, func() {
			s, _, err := p.New(docs)
			if err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
		})
		t.Logf("%.0f allocations a document", allocs/float64(len(docs)))
		if per := allocs / float64(len(docs)); per > 250 {
			t.Errorf("building a segment: %.0f allocations a document, want at most 250", per)
		}
	}
	dir := t.TempDir()
	built := filepath.Join(dir, "built")
	s, _, err := p.New(docs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.(segment.UnpersistedSegment).Persist(built); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	b, err := p.Open(built)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	merged := filepath.Join(dir, "merged")
	if _, _, err := p.Merge([]segment.Segment{b}, nil, merged, nil, nil); err != nil {
		t.Fatal(err)
	}
	m, err := p.Open(merged)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	size := func(path string) int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if sb, sm := size(built), size(merged); sm >= sb {
		t.Errorf("the merged segment takes %d bytes, the batch's %d: the merge shares no suffixes", sm, sb)
	} else {
		t.Logf("%d bytes built from the batch, %d merged", sb, sm)
	}
	for _, field := range []string{"content", "path"} {
		var want []string
		d, err := b.Dictionary(field)
		if err != nil {
			t.Fatal(err)
		}
		it := d.AutomatonIterator(nil, nil, nil)
		for e, err := it.Next(); e != nil && err == nil; e, err = it.Next() {
			want = append(want, e.Term)
		}
		d, err = m.Dictionary(field)
		if err != nil {
			t.Fatal(err)
		}
		it = d.AutomatonIterator(nil, nil, nil)
		i := 0
		for e, err := it.Next(); e != nil && err == nil; e, err = it.Next() {
			if i >= len(want) || e.Term != want[i] {
				t.Fatalf("%s: term %d %q of the merged segment, not the batch's", field, i, e.Term)
			}
			i++
		}
		if i != len(want) || i == 0 {
			t.Fatalf("%s: %d terms merged, %d built", field, i, len(want))
		}
	}
}
