package projection_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// ownRecorder is a projection of some partitions (projection.OwnFollower): it records every
// event delivered to it, and its checkpoint passes a batch's Through.
type ownRecorder struct {
	testState
	got []events.Event
}

func (p *ownRecorder) Name() string     { return "own" }
func (p *ownRecorder) FollowsOwn() bool { return true }
func (p *ownRecorder) Reset(st projection.State) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset(st)
	p.got = nil
	return nil
}
func (p *ownRecorder) Apply(b events.Batch) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range b.Events {
		if e.Seq > p.seq {
			p.got = append(p.got, e)
		}
	}
	p.seq = max(p.seq, b.Last())
	return nil
}

// runOwn runs, on s, a replica of partition 1 of 4: a catalog, then an ownRecorder, in
// batches of at most maxBatch events, until the test ends.
func runOwn(t *testing.T, s *events.Stream, maxBatch int) (*projection.Catalog, *ownRecorder, *projection.Runner) {
	t.Helper()
	set := events.PartitionSet{Count: 4, Own: []int{1}}
	s.Folds = set
	cat := &projection.Catalog{Dir: t.TempDir(), Logger: testkit.Logger(), Holds: set.Holds}
	testkit.NoErr(t, cat.Open(), "open catalog")
	t.Cleanup(func() { _ = cat.Close() })
	own := &ownRecorder{}
	r := &projection.Runner{Stream: s, Project: "p", Projections: []projection.Projection{cat, own}, Logger: testkit.Logger(), MaxBatch: maxBatch}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return cat, own, r
}

// pathIn returns the i-th path of partition k of 4 (and of no other).
func pathIn(k, i int) string {
	for j := 0; ; j++ {
		p := fmt.Sprintf("f%d/doc-%d-%d.md", j%7, i, j)
		if events.PartitionOf(events.DocKey{Path: p}, 4) == k {
			return p
		}
	}
}

func publishTo(t *testing.T, s *events.Stream, paths []string) uint64 {
	t.Helper()
	ctx := testkit.Context(t)
	pub := s.Publisher()
	for _, p := range paths {
		c := fmt.Appendf(nil, "# %s\n\nwords of %s\n", p, p)
		testkit.NoErr(t, pub.Publish(ctx, &events.Event{Op: events.OpUpsert, Project: "p", Path: p, Size: int64(len(c)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}), "publish")
	}
	acks, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")
	return acks[len(acks)-1].Seq
}

// TestOwnFollowerReadsOnlyItsPartitions: on a stream of four partitions, the projection of
// a replica of partition 1 that follows its own (the search index) is delivered the events
// of partition 1 and the control events, and none of another partition's; its checkpoint
// still reaches the stream's last sequence when the last events are other partitions',
// at the catch-up and while following, and the runner counts it caught up only then.
func TestOwnFollowerReadsOnlyItsPartitions(t *testing.T) {
	b := testkit.NATS(t)
	s := &events.Stream{Conn: b.Conn, Partitions: 4}
	ctx := testkit.Context(t)
	testkit.NoErr(t, s.Open(ctx), "stream")
	var paths []string
	for i := range 120 {
		paths = append(paths, pathIn(i%4, i))
	}
	publishTo(t, s, paths)
	_, err := s.PublishSync(ctx, &events.Event{Op: events.OpScanEnd, Project: "p", Scan: &events.Scan{ID: "s", Documents: 120, Published: 120}})
	testkit.NoErr(t, err, "scan end")
	// The last events are of other partitions.
	last := publishTo(t, s, []string{pathIn(0, 500), pathIn(2, 501), pathIn(3, 502), pathIn(0, 503)})

	_, own, r := runOwn(t, s, 50)
	select {
	case <-r.CaughtUp():
	case <-time.After(2 * time.Minute):
		t.Fatalf("no catch-up: %v", r.Err())
	}
	testkit.Equal(t, own.Checkpoint(), last, "the own follower's checkpoint once caught up")
	check := func(wantOwn int) {
		t.Helper()
		own.mu.Lock()
		defer own.mu.Unlock()
		mine, others, control := 0, 0, 0
		for _, e := range own.got {
			switch {
			case e.Op != events.OpUpsert && e.Op != events.OpDelete:
				control++
			case s.Folds.Holds(events.DocKey{Path: e.Path}):
				mine++
				if e.Slim || len(e.Content) == 0 {
					t.Errorf("%s: delivered without its content", e.Path)
				}
			default:
				others++
			}
		}
		if others != 0 || mine != wantOwn || control != 1 {
			t.Errorf("delivered %d events of other partitions, %d of its own, %d control; want 0, %d, 1", others, mine, control, wantOwn)
		}
	}
	check(30)

	// While following: another partition's events alone move the checkpoint too.
	last = publishTo(t, s, []string{pathIn(2, 600), pathIn(3, 601)})
	waitFor(t, r, func() bool { return own.Checkpoint() >= last }, "the own follower passes other partitions' new events")
	testkit.Equal(t, own.Checkpoint(), last, "checkpoint")
	last = publishTo(t, s, []string{pathIn(1, 700), pathIn(0, 701)})
	waitFor(t, r, func() bool { return own.Checkpoint() >= last }, "the own follower applies its new event and passes the other")
	testkit.Equal(t, own.Checkpoint(), last, "checkpoint")
	check(31)
}

// waitFor waits, on the runner's applied batches, until cond holds.
func waitFor(t *testing.T, r *projection.Runner, cond func() bool, what string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		change := r.AppliedChange()
		if cond() {
			return
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("%s: not after a minute (%v)", what, r.Err())
		}
	}
}

// TestOwnFollowerFollowsEveryEventAfterAnOlderPublishersEvent: an event of the replica's
// partition on a subject without its partition (an older indexer's) is one a filtered
// consumer never delivers: once the catalog meets it, the own follower follows every
// event, and is delivered it whole.
func TestOwnFollowerFollowsEveryEventAfterAnOlderPublishersEvent(t *testing.T) {
	b := testkit.NATS(t)
	s := &events.Stream{Conn: b.Conn, Partitions: 4}
	ctx := testkit.Context(t)
	testkit.NoErr(t, s.Open(ctx), "stream")
	var paths []string
	for i := range 40 {
		paths = append(paths, pathIn(i%4, i))
	}
	publishTo(t, s, paths)
	old := pathIn(1, 900)
	c := []byte("# old\n\nan older indexer's words\n")
	e := &events.Event{Op: events.OpUpsert, Project: "p", Path: old, Size: int64(len(c)),
		Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}
	m, err := e.Msg() // no partition in its subject
	testkit.NoErr(t, err, "msg")
	_, err = s.JS.PublishMsg(ctx, m)
	testkit.NoErr(t, err, "publish an older indexer's event")
	last := publishTo(t, s, []string{pathIn(0, 901), pathIn(2, 902)})

	cat, own, r := runOwn(t, s, 10)
	waitFor(t, r, func() bool { return own.Checkpoint() >= last && cat.Checkpoint() >= last }, "both projections at the end")
	own.mu.Lock()
	defer own.mu.Unlock()
	for _, e := range own.got {
		if e.Path == old {
			if string(e.Content) != string(c) {
				t.Fatalf("the older indexer's event delivered with %q", e.Content)
			}
			return
		}
	}
	t.Fatalf("the older indexer's event of partition 1 was never delivered to the own follower")
}
