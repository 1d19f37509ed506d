package index_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/testkit"
)

// The benchmarks build an index over a generated corpus: GUIDE_BENCH_DOCS documents
// (default 10,000) of about 300 words drawn from a Zipf-distributed vocabulary, in
// folders three levels deep. They report numbers; nothing is asserted.

func benchDocs() int {
	if n, err := strconv.Atoi(os.Getenv("GUIDE_BENCH_DOCS")); err == nil && n > 0 {
		return n
	}
	return 10_000
}

var vocab = func() []string {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	out := make([]string, 20_000)
	for i := range out {
		n := 3 + r.IntN(8)
		var b strings.Builder
		for range n {
			b.WriteByte(letters[r.IntN(len(letters))])
		}
		out[i] = b.String()
	}
	return out
}()

// corpus returns n documents: path → content.
func corpus(n int) (paths []string, contents [][]byte) {
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	for i := range n {
		p := fmt.Sprintf("area%d/topic%d/sub%d/doc%06d.md", i%10, i%97, i%7, i)
		var b strings.Builder
		b.WriteString("# " + vocab[z.Uint64()] + " " + vocab[z.Uint64()] + "\n\n")
		for w := range 300 {
			b.WriteString(vocab[z.Uint64()])
			if w%12 == 11 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		paths = append(paths, p)
		contents = append(contents, []byte(b.String()))
	}
	return paths, contents
}

type benchIndex struct {
	x           *index.Index
	corpusBytes int64
	indexBytes  int64
	docsPerSec  float64
}

var (
	benchOnce sync.Once
	bench     benchIndex
)

func buildBenchIndex(b *testing.B) benchIndex {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "guide-bench-index")
		testkit.NoErr(b, err, "temp dir")
		x := &index.Index{Dir: filepath.Join(dir, "index"), Logger: testkit.Logger()}
		testkit.NoErr(b, x.Open(), "open")
		testkit.NoErr(b, x.Reset(stateFor()), "reset")
		paths, contents := corpus(benchDocs())
		start := time.Now()
		var seq uint64
		for i := 0; i < len(paths); i += 1000 {
			var batch events.Batch
			for j := i; j < min(i+1000, len(paths)); j++ {
				seq++
				batch.Events = append(batch.Events, events.Event{Op: events.OpUpsert, Path: paths[j], Seq: seq,
					Status: events.StatusOK, Content: contents[j], Hash: events.HashContent(contents[j]),
					Size: int64(len(contents[j])), Mtime: time.Now()})
			}
			testkit.NoErr(b, x.Apply(batch), "apply")
		}
		bench = benchIndex{x: x, docsPerSec: float64(len(paths)) / time.Since(start).Seconds()}
		for _, c := range contents {
			bench.corpusBytes += int64(len(c))
		}
		_ = filepath.WalkDir(x.Dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					bench.indexBytes += fi.Size()
				}
			}
			return nil
		})
	})
	return bench
}

// BenchmarkIndexing reports how fast the corpus was indexed and how big the index is.
func BenchmarkIndexing(b *testing.B) {
	bi := buildBenchIndex(b)
	for b.Loop() {
	}
	b.ReportMetric(bi.docsPerSec, "docs/s")
	b.ReportMetric(float64(bi.indexBytes)/float64(bi.corpusBytes), "index/corpus")
	b.ReportMetric(float64(bi.corpusBytes)/1e6, "corpus-MB")
}

// BenchmarkSearch runs a mix of queries a page of 20 at a time and reports the p50 and
// p95 latency besides the mean.
func BenchmarkSearch(b *testing.B) {
	bi := buildBenchIndex(b)
	for _, c := range []struct{ name, query, folder string }{
		{"RareWord", vocab[15_000], ""},
		{"CommonWord", vocab[1], ""},
		{"TwoWords", vocab[10] + " " + vocab[200], ""},
		{"Phrase", `"` + vocab[3] + " " + vocab[5] + `"`, ""},
		{"Scoped", vocab[50], "area3/topic3"},
		{"NoMatch", "zzzzqqqq", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			q, err := index.ParseQuery(c.query)
			testkit.NoErr(b, err, "parse")
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := bi.x.Search(b.Context(), index.Request{Query: q, Folder: c.folder}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
