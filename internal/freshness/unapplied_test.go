package freshness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/events"
)

// TestUnappliedBuildsOnItsAnswer: the reader of unapplied events keeps its answer and reads
// only what the stream gained since, and what the process knows from the events its
// catalog was delivered, yet every answer of both equals a whole read from the checkpoint,
// whatever the order of publishes, checkpoints that move on, and a checkpoint that goes
// back (a projection rebuilt from nothing).
func TestUnappliedBuildsOnItsAnswer(t *testing.T) {
	// testkit imports this package (through the MCP server): the test builds its parts itself.
	b := &broker.Broker{StoreDir: t.TempDir(), Name: t.Name()}
	if err := b.Open(); err != nil {
		t.Fatalf("embedded NATS: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := &events.Stream{Conn: b.Conn}
	noErr(t, s.Open(ctx), "stream")
	rng := rand.New(rand.NewPCG(1, 2))
	var u unapplied
	var rc recent // fed every event as the catalog's consumer would deliver it
	rc.start(0)
	var after, last, highest uint64 // highest: the highest checkpoint so far
	for round := range 200 {
		for range rng.IntN(4) {
			c := fmt.Appendf(nil, "round %d", round)
			e := &events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("d%d.md", rng.IntN(12)),
				Size: int64(len(c)), Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c),
				Status: events.StatusOK, Content: c}
			if rng.IntN(5) == 0 {
				e = &events.Event{Op: events.OpDelete, Project: "p", Path: e.Path}
			}
			seq, err := s.PublishSync(ctx, e)
			noErr(t, err, "publish")
			last = seq
			e.Seq = seq
			rc.note(events.Batch{Events: []events.Event{*e}})
		}
		switch {
		case rng.IntN(20) == 0:
			after = 0 // rebuilt
		case last > after:
			after += uint64(rng.IntN(int(last-after) + 1))
		}
		got, err := u.read(ctx, s, "p", after, slog.Default())
		noErr(t, err, "read")
		want, _, complete, err := s.Unapplied(ctx, "p", after, unappliedLimit)
		noErr(t, err, "whole read")
		if !complete {
			t.Fatalf("round %d: the whole read is incomplete", round)
		}
		mem, ok := rc.above(after, 0)
		if !ok && after >= highest {
			t.Fatalf("round %d (after %d): what the process knows is not the whole answer", round, after)
		}
		highest = max(highest, after)
		if ok && (len(mem) != len(want) || (len(want) > 0 && !maps.Equal(mem, want))) {
			t.Fatalf("round %d (after %d, last %d): what the process knows is\n%v\na whole read says\n%v", round, after, last, mem, want)
		}
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !maps.Equal(got, want) {
			t.Fatalf("round %d (after %d, last %d): the reader says\n%v\na whole read says\n%v", round, after, last, got, want)
		}
	}
}

func noErr(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestRecentWaitsForWhatTheProcessPublished: what the process knows is not the whole
// answer before its catalog's consumer has delivered an event the process itself
// published (a session's attach, then list at once).
func TestRecentWaitsForWhatTheProcessPublished(t *testing.T) {
	var rc recent
	rc.start(10)
	rc.note(events.Batch{Events: []events.Event{{Op: events.OpUpsert, Project: "p", Path: "a.md", Seq: 11}}})
	if _, ok := rc.above(10, 11); !ok {
		t.Fatal("delivered through 11: the whole answer")
	}
	if _, ok := rc.above(10, 12); ok {
		t.Fatal("12 published, not delivered: not the whole answer")
	}
	rc.note(events.Batch{Events: []events.Event{{Op: events.OpUpsert, Project: "p", Path: "b.md", Seq: 12}}})
	if ev, ok := rc.above(10, 12); !ok || len(ev) != 2 {
		t.Fatalf("delivered through 12: %v, %v; want both documents", ev, ok)
	}
}

// TestUnappliedWaitHonoursItsContext: a call that waits for its turn at the reader while
// another call reads the stream gives up when its context ends (Unapplied's budget, a
// client gone), rather than wait as long as the reads ahead of it take; the turn it gave
// up is not lost, and the next call reads.
func TestUnappliedWaitHonoursItsContext(t *testing.T) {
	b := &broker.Broker{StoreDir: t.TempDir(), Name: t.Name()}
	if err := b.Open(); err != nil {
		t.Fatalf("embedded NATS: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := &events.Stream{Conn: b.Conn}
	noErr(t, s.Open(ctx), "stream")
	c := []byte("unapplied")
	_, err := s.PublishSync(ctx, &events.Event{Op: events.OpUpsert, Project: "p", Path: "a.md", Size: int64(len(c)),
		Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c})
	noErr(t, err, "publish")

	var u unapplied
	release := holdTurn(&u) // a read ahead of the call, taking as long as it likes
	wctx, wcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer wcancel()
	done := make(chan error, 1)
	go func() {
		_, err := u.read(wctx, s, "p", 0, slog.Default())
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a call whose context ended while it waited for its turn: %v, want its context's error", err)
		}
	case <-time.After(20 * time.Second):
		release()
		<-done
		t.Fatal("a call waited for its turn long past the end of its context")
	}
	release()
	ev, err := u.read(ctx, s, "p", 0, slog.Default())
	noErr(t, err, "read once the turn is free")
	if len(ev) != 1 {
		t.Fatalf("read %v once the turn is free, want the one event", ev)
	}
}

// holdTurn takes the reader's turn, as a read of the stream does, until release.
func holdTurn(u *unapplied) (release func()) {
	if err := u.take(context.Background()); err != nil {
		panic(err)
	}
	return u.release
}
