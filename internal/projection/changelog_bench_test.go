package projection_test

import (
	"context"
	"testing"
	"time"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/stats"
)

// BenchmarkLogWindow times LogWindow, the read of the events after a cursor from the
// catalog's change log, on the stream and windows of BenchmarkWindow (internal/events):
// GUIDE_BENCH_WINDOW_DOCS documents of about 1 KB (default 100,000) in 500 folders, 1,000
// of them changed after the cursor "recent", followed by a catalog. It reports the p50 and
// p95 of the reads and the process's CPU time per read.
//
//	go test ./internal/projection -run '^$' -bench '^BenchmarkLogWindow$' -benchtime 20x
func BenchmarkLogWindow(b *testing.B) {
	docs := testkit.EnvInt(b, "GUIDE_BENCH_WINDOW_DOCS", 100_000)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s := testkit.Stream(b, testkit.NATS(b))
	h0 := testkit.Changed(b, ctx, s, docs, 1000) // in folders d000, d100, d200, d300, d400
	c := &projection.Catalog{Dir: b.TempDir(), Logger: testkit.Logger()}
	testkit.NoErr(b, c.Open(), "open the catalog")
	r := &projection.Runner{Stream: s, Project: "bench", Projections: []projection.Projection{c}, Logger: testkit.Logger()}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(rctx) }()
	defer func() { stop(); <-done; _ = c.Close() }()
	<-r.CaughtUp()
	h, _, ok := c.LogHorizon()
	if !ok {
		b.Fatal("no change log")
	}
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
				_, _, _, err := c.LogWindow(ctx, h, "bench", w.folder, w.after, w.limit)
				ds = append(ds, float64(time.Since(t))/float64(time.Millisecond))
				testkit.NoErr(b, err, "window")
			}
			b.ReportMetric(stats.Percentile(ds, 50), "p50-ms")
			b.ReportMetric(stats.Percentile(ds, 95), "p95-ms")
			b.ReportMetric(float64(testkit.CPUTime()-cpu)/float64(time.Millisecond)/float64(len(ds)), "cpu-ms/op")
		})
	}
}
