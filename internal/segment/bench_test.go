package segment

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	api "github.com/blevesearch/scorch_segment_api/v2"
	zapv16 "github.com/blevesearch/zapx/v16"
	zapv17 "github.com/blevesearch/zapx/v17"
)

// The formats measured: this one, upstream's zap v16, and zap v17 as the build has it
// (while go.mod replaces it, guide's fork of it).
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
		b.Run(p.name, func(b *testing.B) {
			dir := b.TempDir()
			var segs []api.Segment
			var drops []*roaring.Bitmap
			for i := range 10 {
				segs = append(segs, openBuilt(b, p.plugin, docs[500*i:500*(i+1)], filepath.Join(dir, fmt.Sprint(i))))
				d := roaring.New()
				for j := uint32(0); j < 500; j += 10 {
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

func openBuilt(b *testing.B, p scorch.SegmentPlugin, docs []index.Document, path string) api.Segment {
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
