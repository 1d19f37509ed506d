package testkit

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/tools/stats"
)

// EnvInt is the integer in the environment variable name, or def when it is unset.
func EnvInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	NoErr(t, err, name)
	return n
}

// Changed fills s, as the indexer would, with docs documents of about 1 KB in 500
// folders (d000 … d499) of project "bench", then writes changed of them again, each
// event saying what its document was before (PrevSeq, Prev). It returns the stream's
// horizon between the two: a cursor before the changes. The benchmarks of reading the
// changes use it.
func Changed(t testing.TB, ctx context.Context, s *events.Stream, docs, changed int) events.Horizon {
	t.Helper()
	body := strings.Repeat("Words of a generated document, about one kilobyte of them in all.\n", 15)
	path := func(i int) string { return fmt.Sprintf("d%03d/doc-%06d.md", i%500, i) }
	content := func(i int, version string) []byte {
		return fmt.Appendf(nil, "# Document %d\n\n%s%s\n", i, body, version)
	}
	publish := func(ids []int, version string, prev map[string]uint64) map[string]uint64 {
		pub := s.Publisher()
		for _, i := range ids {
			c := content(i, version)
			e := &events.Event{Op: events.OpUpsert, Project: "bench", Path: path(i), Size: int64(len(c)),
				Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c,
				PrevSeq: prev[path(i)]}
			if e.PrevSeq != 0 {
				old := content(i, "first")
				e.Prev = &events.Prev{Op: events.OpUpsert, Size: int64(len(old)), Hash: events.HashContent(old), Status: events.StatusOK}
			}
			NoErr(t, pub.Publish(ctx, e), "publish")
		}
		acks, err := pub.Flush(ctx)
		NoErr(t, err, "flush")
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
	h, err := s.Horizon(ctx)
	NoErr(t, err, "horizon")
	some := make([]int, 0, changed)
	for i := range changed {
		some = append(some, i*(docs/changed)) // spread over the folders
	}
	publish(some, "second", seqs)
	return h
}

// BenchWindows times read over the windows of a stream filled by Changed whose last
// sequence before the changes is last: a recent cursor, the first and middle windows of
// 3,001 events, and a folder with no change and a folder from the start. Each window is a
// sub-benchmark reporting the p50 and p95 of the reads and the process's CPU time per read.
func BenchWindows(b *testing.B, last uint64, read func(folder string, after uint64, limit int) error) {
	for _, w := range []struct {
		name   string
		folder string
		after  uint64
		limit  int
	}{
		{"recent", "", last, 50_000},
		{"first", "", 0, 3001},
		{"middle", "", last / 2, 3001},
		{"folder-unchanged-recent", "d007", last, 50_000},
		{"folder-first", "d007", 0, 3001},
	} {
		b.Run(w.name, func(b *testing.B) {
			var ds []float64
			cpu := CPUTime()
			for b.Loop() {
				t := time.Now()
				err := read(w.folder, w.after, w.limit)
				ds = append(ds, float64(time.Since(t))/float64(time.Millisecond))
				NoErr(b, err, "window")
			}
			b.ReportMetric(stats.Percentile(ds, 50), "p50-ms")
			b.ReportMetric(stats.Percentile(ds, 95), "p95-ms")
			b.ReportMetric(float64(CPUTime()-cpu)/float64(time.Millisecond)/float64(len(ds)), "cpu-ms/op")
		})
	}
}

// FollowedCatalog opens a catalog in a temporary folder, has a runner fold the project's
// stream into it until the test ends, and returns it once it has caught up, with its
// change log.
func FollowedCatalog(tb testing.TB, ctx context.Context, s *events.Stream, project string) *projection.Catalog {
	tb.Helper()
	c := &projection.Catalog{Dir: tb.TempDir(), Logger: Logger()}
	NoErr(tb, c.Open(), "open the catalog")
	r := &projection.Runner{Stream: s, Project: project, Projections: []projection.Projection{c}, Logger: Logger()}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done; _ = c.Close() })
	select {
	case <-r.CaughtUp():
	case <-ctx.Done():
		tb.Fatal("the catalog did not catch up with the stream")
	}
	if _, _, ok := c.LogHorizon(); !ok {
		tb.Fatal("the catalog keeps no change log")
	}
	return c
}
