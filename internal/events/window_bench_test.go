package events_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
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
	docs := 100_000
	if v := os.Getenv("GUIDE_BENCH_WINDOW_DOCS"); v != "" {
		n, err := strconv.Atoi(v)
		testkit.NoErr(b, err, "GUIDE_BENCH_WINDOW_DOCS")
		docs = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s := testkit.Stream(b, testkit.NATS(b))
	body := strings.Repeat("Words of a generated document, about one kilobyte of them in all.\n", 15)
	path := func(i int) string { return fmt.Sprintf("d%03d/doc-%06d.md", i%500, i) }
	publish := func(ids []int, version string, prev map[string]uint64) map[string]uint64 {
		pub := s.Publisher()
		for _, i := range ids {
			c := fmt.Appendf(nil, "# Document %d\n\n%s%s\n", i, body, version)
			e := &events.Event{Op: events.OpUpsert, Project: "bench", Path: path(i), Size: int64(len(c)),
				Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c,
				PrevSeq: prev[path(i)]}
			testkit.NoErr(b, pub.Publish(ctx, e), "publish")
		}
		acks, err := pub.Flush(ctx)
		testkit.NoErr(b, err, "flush")
		seqs := make(map[string]uint64, len(acks))
		for _, a := range acks {
			seqs[a.State.Path] = a.Seq
		}
		return seqs
	}
	all := make([]int, docs)
	for i := range all {
		all[i] = i
	}
	seqs := publish(all, "first", nil)
	h0, err := s.Horizon(ctx)
	testkit.NoErr(b, err, "horizon")
	var some []int
	for i := range 1000 {
		some = append(some, i*(docs/1000)) // in folders d000, d100, d200, d300, d400
	}
	publish(some, "second", seqs)
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
