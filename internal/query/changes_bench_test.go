package query_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/stats"
)

// BenchmarkChanges times the answer of changes for 1,000 documents modified since the
// cursor, read from a real stream (embedded NATS, file store) that holds
// GUIDE_BENCH_CHANGES_DOCS documents of about 1 KB (default 100,000): "list" without
// diffs, "diff" with a diff of each. The bound on an answer is raised so that all 1,000
// entries fit (at the default bound of about 100k characters an answer holds some 800 of
// them, and says where to go on). It reports the p50 and p95 of the calls, and the CPU
// time of the process (the embedded server's too) per call, which the load of a shared
// machine moves less.
//
//	go test ./internal/query -run '^$' -bench '^BenchmarkChanges$' -benchtime 200x
func BenchmarkChanges(b *testing.B) {
	docs := 100_000
	if v := os.Getenv("GUIDE_BENCH_CHANGES_DOCS"); v != "" {
		n, err := strconv.Atoi(v)
		testkit.NoErr(b, err, "GUIDE_BENCH_CHANGES_DOCS")
		docs = n
	}
	const changed = 1000
	// Filling the stream takes minutes on a busy machine: longer than testkit.Context allows.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s := testkit.Stream(b, testkit.NATS(b))
	body := strings.Repeat("Words of a generated document, about one kilobyte of them in all.\n", 15)
	path := func(i int) string { return fmt.Sprintf("d%03d/doc-%06d.md", i%500, i) }
	content := func(i int, version string) []byte {
		return fmt.Appendf(nil, "# Document %d\n\n%s%s\n", i, body, version)
	}
	// As the indexer publishes: a document's event says what it was before (Prev).
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
	h, err := s.Horizon(ctx)
	testkit.NoErr(b, err, "horizon")
	cursor := query.Cursor(h.Last, h.ID)
	var some []int
	for i := range changed {
		some = append(some, i*(docs/changed))
	}
	publish(some, "second", seqs)

	for _, diff := range []bool{false, true} {
		name := "list"
		if diff {
			name = "diff"
		}
		b.Run(name, func(b *testing.B) {
			var ds []float64
			cpu := testkit.CPUTime()
			for b.Loop() {
				t := time.Now()
				v, qerr := query.Changes(ctx, s, query.ChangesArgs{Project: "bench", Cursor: cursor, Diff: diff, Limit: changed},
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
