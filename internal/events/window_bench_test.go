package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
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
	testkit.BenchWindows(b, h0.Last, func(folder string, after uint64, limit int) error {
		_, _, _, err := s.Window(ctx, h, "bench", folder, after, limit)
		return err
	})
}
