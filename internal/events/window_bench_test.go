package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/stats"
)

// BenchmarkWindow times Window, the read of the events after a cursor that changes does,
// on a real stream (embedded NATS, file store) of GUIDE_BENCH_WINDOW_DOCS documents of
// about 1 KB (default 100,000) in 500 folders, 1,000 of them changed after the cursor
// "recent": the windows docs/design.md ("Reading the changes") compares. It reports the
// p50 and p95 of the reads and the process's CPU time per read.
//
//	go test ./internal/events -run '^$' -bench '^BenchmarkWindow$' -benchtime 20x
func BenchmarkWindow(b *testing.B) {
	docs := testkit.EnvInt(b, "GUIDE_BENCH_WINDOW_DOCS", 100_000)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s := testkit.Stream(b, testkit.NATS(b))
	h0 := testkit.Changed(b, ctx, s, docs, 1000) // in folders d000, d100, d200, d300, d400
	h, err := s.Horizon(ctx)
	testkit.NoErr(b, err, "horizon")
	for _, w := range []struct {
		name   string
		folder string
		after  uint64
		limit  int
	}{
		{"recent", "", h0.Last, 50_000},
		{"first", "", 0, 3001},
		{"middle", "", h0.Last / 2, 3001},
		{"folder-unchanged-recent", "d007", h0.Last, 50_000},
		{"folder-first", "d007", 0, 3001},
	} {
		b.Run(w.name, func(b *testing.B) {
			var ds []float64
			cpu := testkit.CPUTime()
			for b.Loop() {
				t := time.Now()
				_, _, _, err := s.Window(ctx, h, "bench", w.folder, w.after, w.limit)
				ds = append(ds, float64(time.Since(t))/float64(time.Millisecond))
				testkit.NoErr(b, err, "window")
			}
			b.ReportMetric(stats.Percentile(ds, 50), "p50-ms")
			b.ReportMetric(stats.Percentile(ds, 95), "p95-ms")
			b.ReportMetric(float64(testkit.CPUTime()-cpu)/float64(time.Millisecond)/float64(len(ds)), "cpu-ms/op")
		})
	}
}
