package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/stats"
)

// BenchmarkChanges times the answer of changes for 1,000 documents modified since the
// cursor, over a real stream (embedded NATS, file store) that holds
// GUIDE_BENCH_CHANGES_DOCS documents of about 1 KB (default 100,000), and a catalog that
// follows it: "list" without diffs, "diff" with a diff of each, the events after the cursor
// read from the catalog's change log as the server reads them; "stream-list" is "list"
// read from the stream alone, as before the log. The bound on an answer is raised so that
// all 1,000 entries fit (at the default bound of about 100k characters an answer holds
// some 800 of them, and says where to go on). It reports the p50 and p95 of the calls, and
// the CPU time of the process (the embedded server's too) per call, which the load of a
// shared machine moves less.
//
//	go test ./internal/query -run '^$' -bench '^BenchmarkChanges$' -benchtime 200x
func BenchmarkChanges(b *testing.B) {
	docs := testkit.EnvInt(b, "GUIDE_BENCH_CHANGES_DOCS", 100_000)
	const changed = 1000
	// Filling the stream takes minutes on a busy machine: longer than testkit.Context allows.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s := testkit.Stream(b, testkit.NATS(b))
	h := testkit.Changed(b, ctx, s, docs, changed)
	cursor := query.Cursor(h.Last, h.ID)
	log := testkit.FollowedCatalog(b, ctx, s, "bench")

	for _, run := range []struct {
		name string
		hist query.History
		diff bool
	}{
		{"list", query.WithLog(s, log), false},
		{"diff", query.WithLog(s, log), true},
		{"stream-list", s, false},
	} {
		b.Run(run.name, func(b *testing.B) {
			var ds []float64
			cpu := testkit.CPUTime()
			for b.Loop() {
				t := time.Now()
				v, qerr := query.Changes(ctx, run.hist, query.ChangesArgs{Project: "bench", Cursor: cursor, Diff: run.diff, Limit: changed},
					query.Limits{MaxChars: 1_000_000})
				ds = append(ds, float64(time.Since(t))/float64(time.Millisecond))
				if qerr != nil {
					b.Fatal(qerr)
				}
				if v.Count != changed || !v.Complete {
					b.Fatalf("%d changes, complete %v: %s", v.Count, v.Complete, v.Message)
				}
			}
			b.ReportMetric(stats.Percentile(ds, 50), "p50-ms")
			b.ReportMetric(stats.Percentile(ds, 95), "p95-ms")
			b.ReportMetric(float64(testkit.CPUTime()-cpu)/float64(time.Millisecond)/float64(len(ds)), "cpu-ms/op")
		})
	}
}
