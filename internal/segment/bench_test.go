package segment

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	api "github.com/blevesearch/scorch_segment_api/v2"
	zapv16 "github.com/blevesearch/zapx/v16"
	zapv17 "github.com/blevesearch/zapx/v17"
)

// The formats measured: this one and upstream's zap v16 and v17.
var benchPlugins = []struct {
	name   string
	plugin scorch.SegmentPlugin
}{
	{"guide", &Plugin{}},
	{"zap16", &zapv16.ZapPlugin{}},
	{"zap17", &zapv17.ZapPlugin{}},
}

// BenchmarkNew builds a segment of 2,000 analyzed documents and writes it to a file, in
// each format; bytes/op of the file is reported as file-bytes.
func BenchmarkNew(b *testing.B) {
	docs := analyzedDocs(b, 21, 2000)
	for _, p := range benchPlugins {
		b.Run(p.name, func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			var size int64
			for i := 0; b.Loop(); i++ {
				s, _, err := p.plugin.New(docs)
				if err != nil {
					b.Fatal(err)
				}
				path := filepath.Join(dir, fmt.Sprint(i))
				if err := s.(api.UnpersistedSegment).Persist(path); err != nil {
					b.Fatal(err)
				}
				_ = s.Close()
				fi, _ := os.Stat(path)
				size = fi.Size()
				_ = os.Remove(path)
			}
			b.ReportMetric(float64(size), "file-bytes")
		})
	}
}

// BenchmarkMerge merges ten segments of 500 documents, a tenth of each dropped.
func BenchmarkMerge(b *testing.B) {
	docs := analyzedDocs(b, 22, 5000)
	for _, p := range benchPlugins {
		for _, whole := range []bool{false, true} {
			name := p.name
			if whole { // nothing dropped, as in every merge of a first index
				name += "/whole"
			}
			benchMerge(b, name, p.plugin, docs, whole)
		}
	}
}

func benchMerge(b *testing.B, name string, plugin scorch.SegmentPlugin, docs []index.Document, whole bool) {
	p := struct {
		name   string
		plugin scorch.SegmentPlugin
	}{name, plugin}
	{
		b.Run(p.name, func(b *testing.B) {
			dir := b.TempDir()
			var segs []api.Segment
			var drops []*roaring.Bitmap
			for i := range 10 {
				segs = append(segs, openBuilt(b, p.plugin, docs[500*i:500*(i+1)], filepath.Join(dir, fmt.Sprint(i))))
				d := roaring.New()
				for j := uint32(0); j < 500 && !whole; j += 10 {
					d.Add(j + uint32(i))
				}
				drops = append(drops, d)
			}
			b.ReportAllocs()
			var size uint64
			for i := 0; b.Loop(); i++ {
				path := filepath.Join(dir, fmt.Sprint("m", i))
				_, n, err := p.plugin.Merge(segs, drops, path, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				size = n
				_ = os.Remove(path)
			}
			b.ReportMetric(float64(size), "file-bytes")
			for _, s := range segs {
				_ = s.Close()
			}
		})
	}
}

func openBuilt(b testing.TB, p scorch.SegmentPlugin, docs []index.Document, path string) api.Segment {
	s, _, err := p.New(docs)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.(api.UnpersistedSegment).Persist(path); err != nil {
		b.Fatal(err)
	}
	_ = s.Close()
	o, err := p.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	return o
}

// BenchmarkRead reads the postings of the 50 terms of the content field held by the
// most documents, with frequencies and norms, as a term search does; "advance" moves by
// Advance to every seventh document instead; "positions" reads the positions too, as a
// phrase search does. Segments of 5,000 documents, a tenth deleted.
func BenchmarkRead(b *testing.B) {
	docs := analyzedDocs(b, 23, 5000)
	deleted := roaring.New()
	for d := uint32(0); d < 5000; d += 10 {
		deleted.Add(d)
	}
	for _, p := range benchPlugins[:2] {
		s := openBuilt(b, p.plugin, docs, filepath.Join(b.TempDir(), "s"))
		d, _ := s.Dictionary("content")
		type tc struct {
			term  string
			count uint64
		}
		var terms []tc
		it := d.AutomatonIterator(nil, nil, nil)
		for e, _ := it.Next(); e != nil; e, _ = it.Next() {
			terms = append(terms, tc{e.Term, e.Count})
		}
		slices.SortFunc(terms, func(a, b tc) int { return int(b.count) - int(a.count) })
		terms = terms[:50]
		for _, mode := range []string{"next", "advance", "positions"} {
			b.Run(p.name+"/"+mode, func(b *testing.B) {
				b.ReportAllocs()
				var pl api.PostingsList
				var pi api.PostingsIterator
				n := 0
				for b.Loop() {
					for _, t := range terms {
						pl, _ = d.PostingsList([]byte(t.term), deleted, pl)
						pi = pl.Iterator(true, true, mode == "positions", pi)
						var p api.Posting
						var err error
						for target := uint64(0); ; target += 7 {
							if mode == "advance" {
								p, err = pi.Advance(target)
							} else {
								p, err = pi.Next()
							}
							if err != nil {
								b.Fatal(err)
							}
							if p == nil {
								break
							}
							n += int(p.Frequency()) + len(p.Locations())
							target = max(target, p.Number())
						}
					}
				}
				_ = n
			})
		}
		_ = s.Close()
	}
}
