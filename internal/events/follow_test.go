package events_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// TestFollowEndsItsGoroutines: every Follow call ends the goroutines it started, and
// deletes its consumer, before it returns, though the caller's context lives on: a runner
// retrying through an outage calls it again and again under one context. (The server is
// embedded: its goroutines for a consumer count too.)
func TestFollowEndsItsGoroutines(t *testing.T) {
	b := testkit.NATS(t)
	s := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	testkit.PublishDocs(t, s, "p", "d%d.md", "doc %d", 5)
	failed := errors.New("apply failed")
	follow := func() {
		err := s.Follow(ctx, "p", 0, events.Budget{Events: 10}, func(events.Batch) error { return failed })
		if !errors.Is(err, failed) {
			t.Fatalf("Follow = %v, want the apply's error", err)
		}
	}
	follow() // the connection's own goroutines start with the first consumer
	before := runtime.NumGoroutine()
	for range 30 {
		follow()
	}
	testkit.Eventually(t, 10*time.Second, func() (bool, string) {
		n := runtime.NumGoroutine()
		return n <= before+2, fmt.Sprintf("%d goroutines after 30 calls of Follow, %d before", n, before)
	})
	info, err := s.Info(ctx)
	testkit.NoErr(t, err, "stream info")
	testkit.Equal(t, info.State.Consumers, 0, "consumers left on the stream")
}

// TestFollowKeepsBatchesWithinTheirBytes: a batch holds at most Budget.Bytes of content,
// but for an event larger than that, delivered alone; every event comes once, in order,
// none lost at the cut (the one that would overflow a batch starts the next).
func TestFollowKeepsBatchesWithinTheirBytes(t *testing.T) {
	b := testkit.NATS(t)
	s := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	const budget, n = 10_000, 60
	pub := s.Publisher()
	for i := range n {
		size := 500 + 900*(i%7)
		if i == 30 {
			size = 3 * budget // larger than a batch may be
		}
		c := make([]byte, size)
		for j := range c {
			c[j] = 'a' + byte(j%26)
		}
		e := &events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("d%02d.md", i), Size: int64(len(c)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}
		testkit.NoErr(t, pub.Publish(ctx, e), "publish")
	}
	_, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")

	done := errors.New("every event delivered")
	var seqs []uint64
	batches := 0
	err = s.Follow(ctx, "p", 0, events.Budget{Events: 1000, Bytes: budget}, func(bt events.Batch) error {
		batches++
		bytes := 0
		for _, e := range bt.Events {
			bytes += len(e.Content)
			seqs = append(seqs, e.Seq)
		}
		if bytes > budget && len(bt.Events) > 1 {
			t.Errorf("batch %d: %d events of %d bytes, over the budget of %d", batches, len(bt.Events), bytes, budget)
		}
		if len(seqs) == n {
			return done
		}
		return nil
	})
	if !errors.Is(err, done) {
		t.Fatalf("Follow = %v after %d events", err, len(seqs))
	}
	for i, seq := range seqs {
		testkit.Equal(t, seq, uint64(i+1), fmt.Sprintf("sequence of event %d", i))
	}
	if batches < 2 {
		t.Errorf("%d batch(es) for %d bytes of content: the budget cut none", batches, n*3000)
	}
}

// TestFollowHoldsFewMessagesAheadOfTheBatch: between the client's pull buffer (two batches'
// events) and the batch being cut, a delivery holds a few dozen messages, not as many
// again as the pull buffer: for a projection that lags, that was another two batches'
// content in memory.
func TestFollowHoldsFewMessagesAheadOfTheBatch(t *testing.T) {
	b := testkit.NATS(t)
	s := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	testkit.PublishDocs(t, s, "p", "d%d.md", "doc %d", 5)
	for _, maxBatch := range []int{10, 1000} {
		n, err := events.DeliveryAhead(ctx, s, "p", maxBatch)
		testkit.NoErr(t, err, "delivery")
		if n > 64 || n > 2*maxBatch {
			t.Errorf("batches of %d events: %d messages held ahead of the batch, want at most min(64, %d)", maxBatch, n, 2*maxBatch)
		}
	}
}

// TestFollowGathersABurst: events published one at a time while the follower keeps up (a
// scan of a tree, a checkout) are applied in batches of many, not each as it comes.
func TestFollowGathersABurst(t *testing.T) {
	b := testkit.NATS(t)
	s := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	const n = 400
	pub := s.Publisher()
	published := make(chan error, 1)
	go func() {
		for i := range n {
			c := fmt.Appendf(nil, "doc %d", i)
			e := &events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("d%03d.md", i), Size: int64(len(c)),
				Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}
			if err := pub.Publish(ctx, e); err != nil {
				published <- err
				return
			}
			if _, err := pub.Flush(ctx); err != nil { // one at a time: each acknowledged before the next
				published <- err
				return
			}
		}
		published <- nil
	}()
	done := errors.New("every event delivered")
	var sizes []int
	got := 0
	err := s.Follow(ctx, "p", 0, events.Budget{Events: 1000, Bytes: 1 << 20}, func(bt events.Batch) error {
		sizes = append(sizes, len(bt.Events))
		if got += len(bt.Events); got == n {
			return done
		}
		return nil
	})
	if !errors.Is(err, done) {
		t.Fatalf("Follow = %v after %d events", err, got)
	}
	testkit.NoErr(t, <-published, "publish")
	t.Logf("%d events in %d batches", n, len(sizes))
	if len(sizes) > n/8 {
		t.Errorf("%d events published one at a time came in %d batches (%v), want at most %d", n, len(sizes), sizes, n/8)
	}
}

// TestGather: how long a batch waits for its next event when none is buffered.
func TestGather(t *testing.T) {
	one := []events.Event{{}}
	now := time.Now()
	for _, c := range []struct {
		name      string
		b         events.Batch
		streaming bool
		began     time.Time
		want      func(time.Duration) bool
	}{
		{"a save after a quiet moment: at once", events.Batch{Events: one}, false, now, func(d time.Duration) bool { return d <= 0 }},
		{"more pending on the server", events.Batch{Events: one, Pending: 5}, false, now, func(d time.Duration) bool { return d == events.GatherGap }},
		{"events streaming in", events.Batch{Events: one}, true, now, func(d time.Duration) bool { return d > 0 && d <= events.GatherGap }},
		{"streaming, past the window", events.Batch{Events: one}, true, now.Add(-events.BurstWindow), func(d time.Duration) bool { return d <= 0 }},
	} {
		if d := events.Gather(c.b, c.streaming, c.began); !c.want(d) {
			t.Errorf("%s: waits %v", c.name, d)
		}
	}
}
