package index_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
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

// corpus returns the documents to index: path → content. GUIDE_BENCH_TREE=DIR reads a
// real tree instead (its UTF-8 files under 1 MB), such as $(go env GOROOT)/src.
func corpus(n int) (paths []string, contents [][]byte) {
	if dir := os.Getenv("GUIDE_BENCH_TREE"); dir != "" {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if fi, err := d.Info(); err != nil || fi.Size() > 1<<20 {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil || !utf8.Valid(b) {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			paths, contents = append(paths, filepath.ToSlash(rel)), append(contents, b)
			return nil
		})
		return paths, contents
	}
	return generated(n)
}

func generated(n int) (paths []string, contents [][]byte) {
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
	cpuSeconds  float64 // user + system CPU of the whole process while indexing
	seconds     float64
	paths       []string
	contents    [][]byte
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
		bench.paths, bench.contents = paths, contents
		start, cpu := time.Now(), testkit.CPUTime()
		// As the runner applies a stream: each batch prepared while the one before is
		// applied.
		applies := make(chan func() error)
		applied := make(chan error, 1)
		go func() {
			var err error
			for apply := range applies {
				if err == nil {
					err = apply()
				}
			}
			applied <- err
		}()
		var seq uint64
		for i := 0; i < len(paths); i += 1000 {
			var batch events.Batch
			for j := i; j < min(i+1000, len(paths)); j++ {
				seq++
				batch.Events = append(batch.Events, events.Event{Op: events.OpUpsert, Path: paths[j], Seq: seq,
					Status: events.StatusOK, Content: contents[j], Hash: events.HashContent(contents[j]),
					Size: int64(len(contents[j])), Mtime: time.Now()})
			}
			applies <- x.Prepare(batch)
		}
		close(applies)
		testkit.NoErr(b, <-applied, "apply")
		// Until the last batch is on disk: what a clean stop right after would wait for.
		testkit.NoErr(b, x.Close(), "close")
		elapsed := time.Since(start).Seconds()
		bench = benchIndex{x: x, paths: paths, contents: contents, docsPerSec: float64(len(paths)) / elapsed, seconds: elapsed,
			cpuSeconds: (testkit.CPUTime() - cpu).Seconds()}
		testkit.NoErr(b, x.Open(), "reopen")
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
	b.ReportMetric(float64(bi.corpusBytes)/1e6/bi.seconds, "MB/s")
	b.ReportMetric(bi.cpuSeconds, "cpu-s")
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
			q, err := querylang.Parse(c.query)
			testkit.NoErr(b, err, "parse")
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := bi.x.Search(b.Context(), search.Request{Query: q, Folder: c.folder}); err != nil {
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

// benchWords are the words both search and ripgrep look for: from the commonest word of
// the generated vocabulary to a rare one and one that is nowhere; for a real tree, words
// of source code.
func benchWords() []string {
	if os.Getenv("GUIDE_BENCH_TREE") != "" {
		return []string{"func", "return", "error", "buffer", "goroutine", "mutex", "deadline", "syscall",
			"utf8", "xyzzyplugh"}
	}
	return []string{vocab[0], vocab[1], vocab[5], vocab[30], vocab[200], vocab[1000], vocab[5000],
		vocab[15000], "zzzzqqqq"}
}

// BenchmarkVsRipgrep writes the corpus to a directory and compares, word by word, a
// search (one page of 20, best first, with the total) with `rg -l -w -i -F -- WORD DIR`
// over the same files, page cache warm for both. It reports the median over the words
// of rg's time divided by search's (medians of several runs each), and logs every word.
func BenchmarkVsRipgrep(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep is not installed")
	}
	bi := buildBenchIndex(b)
	dir := b.TempDir()
	for i, p := range bi.paths {
		f := filepath.Join(dir, filepath.FromSlash(p))
		testkit.NoErr(b, os.MkdirAll(filepath.Dir(f), 0o755), "mkdir")
		testkit.NoErr(b, os.WriteFile(f, bi.contents[i], 0o644), "write")
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	var ratios []float64
	for b.Loop() {
		ratios = ratios[:0]
		for _, w := range benchWords() {
			var rgT, searchT []time.Duration
			var rgFiles int
			for range 3 {
				start := time.Now()
				out, _ := exec.Command(rg, "-l", "-w", "-i", "-F", "--", w, dir).Output()
				rgT = append(rgT, time.Since(start))
				rgFiles = strings.Count(string(out), "\n")
			}
			q, err := querylang.Parse(w)
			testkit.NoErr(b, err, "parse")
			var total uint64
			for range 11 {
				start := time.Now()
				res, err := bi.x.Search(b.Context(), search.Request{Query: q})
				searchT = append(searchT, time.Since(start))
				testkit.NoErr(b, err, "search")
				total = res.Total
			}
			r := float64(median(rgT)) / float64(max(median(searchT), time.Microsecond))
			ratios = append(ratios, r)
			b.Logf("%-12s rg %8v (%6d files)  search %8v (total %6d)  ×%.0f", w, median(rgT), rgFiles,
				median(searchT), total, r)
		}
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-rg/search")
	b.ReportMetric(ratios[0], "min-rg/search")
}

// BenchmarkSearchExisting searches an index built elsewhere — GUIDE_BENCH_INDEX=DIR, such
// as the query/index directory of a data directory that `make bench` filled (no process
// may have it open) — for the words of GUIDE_BENCH_WORDS (comma-separated), one page of
// 20 each, as the search tool asks for it. It is skipped without the variable.
func BenchmarkSearchExisting(b *testing.B) {
	dir := os.Getenv("GUIDE_BENCH_INDEX")
	if dir == "" {
		b.Skip("GUIDE_BENCH_INDEX is not set")
	}
	// An index that cannot be opened is rebuilt, its directory emptied first: a data
	// directory named by mistake would lose its stream and catalog.
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
		b.Fatalf("GUIDE_BENCH_INDEX=%s holds no index (index_meta.json); name a data directory's query/index", dir)
	}
	x := &index.Index{Dir: dir}
	testkit.NoErr(b, x.Open(), "open")
	b.Cleanup(func() { _ = x.Close() })
	words := strings.Split(cmpOr(os.Getenv("GUIDE_BENCH_WORDS"), "legal,scenes,dirname,metric,reviewer,python"), ",")
	for _, w := range words {
		b.Run(w, func(b *testing.B) {
			q, err := querylang.Parse(w)
			testkit.NoErr(b, err, "parse")
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := x.Search(b.Context(), search.Request{Query: q}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
