package projection_test

import (
	"context"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
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
	c := testkit.FollowedCatalog(b, ctx, s, "bench")
	h, _, _ := c.LogHorizon()
	testkit.BenchWindows(b, h0.Last, func(folder string, after uint64, limit int) error {
		_, _, _, err := c.LogWindow(ctx, h, "bench", folder, after, limit)
		return err
	})
}
