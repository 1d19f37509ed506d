package events_test

import (
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestReadsLeaveNoConsumers: reading what is unapplied, or the current state, as often as
// queries ask leaves no consumer behind on the server: a server has a limit on consumers,
// and a replica that cannot create its own cannot follow the stream.
func TestReadsLeaveNoConsumers(t *testing.T) {
	b := testkit.NATS(t)
	s := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	testkit.PublishDocs(t, s, "p", "d%d.md", "doc %d", 20)
	for range 50 {
		ev, complete, err := s.Unapplied(ctx, "p", 5, 2000)
		testkit.NoErr(t, err, "unapplied")
		if len(ev) != 15 || !complete {
			t.Fatalf("unapplied: %d events, complete %v; want 15, true", len(ev), complete)
		}
		cur, _, err := s.Current(ctx, "p")
		testkit.NoErr(t, err, "current")
		testkit.Equal(t, len(cur), 20, "documents in the current state")
	}
	info, err := s.Info(ctx)
	testkit.NoErr(t, err, "stream info")
	if n := info.State.Consumers; n > 0 {
		t.Errorf("%d consumers left on the stream after 100 reads; want none", n)
	}
}
