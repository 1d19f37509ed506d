package events_test

import (
	"context"
	"fmt"
	"time"

	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestReadsLeaveNoConsumers: reading what is unapplied, the current state, or the events
// after a cursor (changes), as often as queries ask leaves no consumer behind on the server: a server has a limit on consumers,
// and a replica that cannot create its own cannot follow the stream.
func TestReadsLeaveNoConsumers(t *testing.T) {
	b := testkit.NATS(t)
	s := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	testkit.PublishDocs(t, s, "p", "d%d.md", "doc %d", 20)
	for range 50 {
		ev, _, complete, err := s.Unapplied(ctx, "p", 5, 2000)
		testkit.NoErr(t, err, "unapplied")
		if len(ev) != 15 || !complete {
			t.Fatalf("unapplied: %d events, complete %v; want 15, true", len(ev), complete)
		}
		cur, _, err := testkit.Current(ctx, s, "p")
		testkit.NoErr(t, err, "current")
		testkit.Equal(t, len(cur), 20, "documents in the current state")
		h, err := s.Horizon(ctx)
		testkit.NoErr(t, err, "horizon")
		evs, _, complete, err := s.Window(ctx, h, "p", "", 5, 2000)
		testkit.NoErr(t, err, "window")
		if len(evs) != 15 || !complete {
			t.Fatalf("window: %d events, complete %v; want 15, true", len(evs), complete)
		}
	}
	info, err := s.Info(ctx)
	testkit.NoErr(t, err, "stream info")
	if n := info.State.Consumers; n > 0 {
		t.Errorf("%d consumers left on the stream after 150 reads; want none", n)
	}
}

// TestReadsCutShortLeaveNoConsumers: a read whose caller gives up at any moment — while
// the server creates its consumer, or while it fetches — leaves no consumer behind either.
// The server creates a consumer whose creation the caller stopped waiting for; one whose
// name the reader never learnt would stay until the server expires it, and a query
// process whose clients time out under load would fill the server's limit.
func TestReadsCutShortLeaveNoConsumers(t *testing.T) {
	b := testkit.NATS(t)
	s := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	testkit.PublishDocs(t, s, "p", "d%d.md", "doc %d", 200)
	h, err := s.Horizon(ctx)
	testkit.NoErr(t, err, "horizon")
	for i := range 300 {
		// Deadlines from 0 to ~3 ms: some end before the request leaves, some while the
		// server creates the consumer, some during the fetch, some never.
		cctx, cancel := context.WithTimeout(ctx, time.Duration(i%30)*100*time.Microsecond)
		switch i % 3 {
		case 0:
			_, _, _, _ = s.Unapplied(cctx, "p", 5, 2000)
		case 1:
			_, _, _ = testkit.Current(cctx, s, "p")
		default:
			_, _, _, _ = s.Window(cctx, h, "p", "", 5, 2000)
		}
		cancel()
	}
	// Deletions run after the read returns; they take well under the server's 30 s expiry.
	testkit.Eventually(t, 10*time.Second, func() (bool, string) {
		info, err := s.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		n := info.State.Consumers
		return n == 0, fmt.Sprintf("%d consumers left on the stream after 300 reads cut short; want none", n)
	})
}
