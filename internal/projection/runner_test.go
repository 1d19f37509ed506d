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

// testState is a test projection's checkpoint and identity, under its mutex.
type testState struct {
	mu       sync.Mutex
	seq      uint64
	sid, prj string
}

func (s *testState) Checkpoint() uint64 { s.mu.Lock(); defer s.mu.Unlock(); return s.seq }
func (s *testState) Identity() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sid, s.prj
}

// reset starts the state over for st's stream; under mu.
func (s *testState) reset(st projection.State) { s.seq, s.sid, s.prj = 0, st.StreamID, st.Project }

// preparer is a projection that records what it prepares and applies; fail, when set,
// fails the apply of the batch holding that sequence, once.
type preparer struct {
	testState
	applied  []uint64 // every event applied, in order
	prepared chan uint64
	// during, when set, runs inside the apply of each batch.
	during func(first uint64)
	fail   uint64
}

func (p *preparer) Name() string { return "preparer" }
func (p *preparer) Reset(st projection.State) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset(st)
	p.applied = nil
	return nil
}
func (p *preparer) Apply(b events.Batch) error { return p.Prepare(b)() }
func (p *preparer) Prepare(b events.Batch) func() error {
	first := b.Events[0].Seq
	select {
	case p.prepared <- first:
	default:
	}
	return func() error {
		if p.during != nil {
			p.during(first)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.fail != 0 && first <= p.fail && p.fail <= b.Last() {
			p.fail = 0
			return fmt.Errorf("failing the batch of %d once", first)
		}
		for _, e := range b.Events {
			if e.Seq > p.seq {
				p.applied = append(p.applied, e.Seq)
				p.seq = e.Seq
			}
		}
		return nil
	}
}

// follow runs a runner of p until it has applied up to last.
func follow(t *testing.T, s *events.Stream, p projection.Projection, last uint64) {
	t.Helper()
	r := &projection.Runner{Stream: s, Project: "p", Projections: []projection.Projection{p}, Logger: testkit.Logger(),
		MaxBatch: 100}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.After(2 * time.Minute)
	for {
		// The channel before the checkpoint: a batch applied between the two wakes it.
		change := r.AppliedChange()
		if p.Checkpoint() >= last {
			return
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("applied up to %d of %d: %v", p.Checkpoint(), last, r.Err())
		}
	}
}

// TestRunnerPreparesTheNextBatchWhileApplying: a projection that prepares its batches has
// the next one prepared while the one before it is applied, and applies every event once,
// in order.
func TestRunnerPreparesTheNextBatchWhileApplying(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	last := publishDocs(t, s, 1000)
	p := &preparer{prepared: make(chan uint64, 100)}
	var overlapped bool
	p.during = func(first uint64) {
		if first != 1 {
			return
		}
		// Inside the first batch's apply: the next batch is prepared meanwhile.
		for {
			select {
			case n := <-p.prepared:
				if n > first {
					overlapped = true
					return
				}
			case <-time.After(30 * time.Second):
				return
			}
		}
	}
	follow(t, s, p, last)
	if !overlapped {
		t.Fatal("the second batch was not prepared while the first was applied")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, seq := range p.applied {
		if seq != uint64(i+1) {
			t.Fatalf("event %d applied as the %dth", seq, i+1)
		}
	}
	testkit.Equal(t, len(p.applied), int(last), "events applied")
}

// TestRunnerDropsPreparedBatchesAfterAFailedApply: when a batch fails to apply, the batch
// prepared after it is dropped, and following again from the checkpoint applies every
// event once, in order.
func TestRunnerDropsPreparedBatchesAfterAFailedApply(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	last := publishDocs(t, s, 1000)
	p := &preparer{prepared: make(chan uint64, 1), fail: 450}
	follow(t, s, p, last)
	p.mu.Lock()
	defer p.mu.Unlock()
	testkit.Equal(t, p.fail, uint64(0), "the failing batch was applied")
	for i, seq := range p.applied {
		if seq != uint64(i+1) {
			t.Fatalf("event %d applied as the %dth", seq, i+1)
		}
	}
	testkit.Equal(t, len(p.applied), int(last), "events applied")
}
