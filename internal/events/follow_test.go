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
		err := s.Follow(ctx, "p", 0, 10, func(events.Batch) error { return failed })
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
