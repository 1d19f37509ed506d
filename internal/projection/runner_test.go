package projection_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// publishDocs puts n small documents and a completed scan of project p on the stream, and
// returns the last sequence.
func publishDocs(t testing.TB, s *events.Stream, n int) uint64 {
	t.Helper()
	ctx := testkit.Context(t)
	pub := s.Publisher()
	for i := range n {
		content := fmt.Appendf(nil, "# Note %d\n\nsome words of note %d\n", i, i)
		e := &events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("part-%d/note-%d.md", i%50, i),
			Size: int64(len(content)), Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(content),
			Status: events.StatusOK, Content: content}
		testkit.NoErr(t, pub.Publish(ctx, e), "publish")
	}
	testkit.NoErr(t, pub.Publish(ctx, &events.Event{Op: events.OpScanEnd, Project: "p",
		Scan: &events.Scan{ID: "s", Documents: n, Published: n}}), "publish scan end")
	acks, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")
	return acks[len(acks)-1].Seq
}

// catchUp follows the stream with a new catalog until it has applied everything.
func catchUp(t testing.TB, s *events.Stream, onProgress func(projection.Progress)) (*projection.Catalog, *projection.Runner) {
	t.Helper()
	c := &projection.Catalog{Dir: t.TempDir(), Logger: testkit.Logger()}
	testkit.NoErr(t, c.Open(), "open catalog")
	t.Cleanup(func() { _ = c.Close() })
	r := &projection.Runner{Stream: s, Project: "p", Projections: []projection.Projection{c}, Logger: testkit.Logger(),
		OnProgress: onProgress, ProgressEvery: time.Nanosecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-r.CaughtUp():
	case <-time.After(2 * time.Minute):
		t.Fatalf("no catch-up: %v", r.Err())
	}
	return c, r
}

// TestRunnerReportsCatchUpProgress: a new replica reports its progress through the stream
// as it applies it, ending with one report that it is done at the stream's end.
func TestRunnerReportsCatchUpProgress(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	last := publishDocs(t, s, 3000)
	var mu sync.Mutex
	var got []projection.Progress
	c, _ := catchUp(t, s, func(p projection.Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("%d progress reports for 3000 events in batches of at most 1000", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Applied <= got[i-1].Applied || got[i].Events <= got[i-1].Events {
			t.Fatalf("progress went backwards: %+v then %+v", got[i-1], got[i])
		}
	}
	end := got[len(got)-1]
	testkit.Equal(t, [3]any{end.Done, end.Applied, end.Target}, [3]any{true, last, last}, "last report")
	for _, p := range got[:len(got)-1] {
		if p.Done {
			t.Fatalf("a report before the last says done: %+v", p)
		}
	}
	testkit.Equal(t, c.Checkpoint(), last, "checkpoint")
}

// BenchmarkRunnerCatchUp measures how fast a new replica catches up, in events/s.
func BenchmarkRunnerCatchUp(b *testing.B) {
	s := testkit.Stream(b, testkit.NATS(b))
	const n = 50_000
	publishDocs(b, s, n)
	b.ResetTimer()
	var rate float64
	for range b.N {
		start := time.Now()
		catchUp(b, s, nil)
		rate = float64(n+1) / time.Since(start).Seconds()
	}
	b.ReportMetric(rate, "events/s")
}

// TestAppliedChangeWakesAWaiter: a waiter for a sequence, given the channel before the
// runner applies it, is woken when it has, with no polling.
func TestAppliedChangeWakesAWaiter(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	publishDocs(t, s, 3)
	c, r := catchUp(t, s, nil)
	change := r.AppliedChange()
	select {
	case <-change:
		t.Fatal("woken with nothing applied since it asked")
	default:
	}
	ctx := testkit.Context(t)
	seq, err := s.PublishSync(ctx, &events.Event{Op: events.OpDelete, Project: "p", Path: "part-0/note-0.md"})
	testkit.NoErr(t, err, "publish")
	for r.Applied() < seq {
		select {
		case <-change:
			change = r.AppliedChange()
		case <-ctx.Done():
			t.Fatalf("not woken: applied %d, want %d", r.Applied(), seq)
		}
	}
	testkit.Equal(t, c.Checkpoint(), seq, "checkpoint")
}
