package query

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkHitText is the text a search hit is given beside its path: the best section
// and its snippet, for the Markdown files under GUIDE_BENCH_TREE (the first 400; a
// generated corpus of `make bench`, say), with a word most of them hold. Skipped without
// the variable.
func BenchmarkHitText(b *testing.B) {
	dir := os.Getenv("GUIDE_BENCH_TREE")
	if dir == "" {
		b.Skip("GUIDE_BENCH_TREE is not set")
	}
	var docs [][]byte
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(docs) >= 400 || d.IsDir() || filepath.Ext(p) != ".md" {
			return nil
		}
		if c, err := os.ReadFile(p); err == nil {
			docs = append(docs, c)
		}
		return nil
	})
	for _, q := range []string{"the", "review code", "пример"} {
		terms := []string{q}
		pairs := queryPairs(q)
		if q == "review code" {
			terms = []string{"review", "code"}
		}
		stems := append([]string(nil), terms...)
		b.Run(q, func(b *testing.B) {
			n := 0
			var lower []byte
			cpu0 := cpuTime()
			for b.Loop() {
				for _, c := range docs {
					n += len(c)
					_, _ = hitText(c, terms, stems, pairs, &lower)
				}
			}
			b.SetBytes(int64(n / max(1, b.N)))
			// CPU time, not only wall time: on a shared machine it is what a change moves.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
