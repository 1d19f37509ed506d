package events_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

func scanBegin(project string) *events.Event {
	return &events.Event{Project: project, Op: events.OpScanBegin, Scan: &events.Scan{ID: "s1"}}
}

func TestAwaitBindWaitsForTheStream(t *testing.T) {
	events.AwaitEvery = 10 * time.Millisecond
	b := testkit.NATS(t)
	ctx := testkit.Context(t)
	reader := &events.Stream{Conn: b.Conn}
	waiting, done := make(chan error, 1), make(chan error, 1)
	go func() { done <- reader.AwaitBind(ctx, func(err error) { waiting <- err }) }()
	if err := <-waiting; err == nil {
		t.Fatal("told of waiting without a cause")
	}
	testkit.Stream(t, b) // the writer creates the stream
	testkit.NoErr(t, <-done, "AwaitBind")
	_, err := reader.Info(ctx)
	testkit.NoErr(t, err, "info of the bound stream")
}

func TestAwaitBindEndsWithContext(t *testing.T) {
	events.AwaitEvery = 10 * time.Millisecond
	b := testkit.NATS(t)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	reader := &events.Stream{Conn: b.Conn}
	err := reader.AwaitBind(ctx, func(error) { cancel() })
	if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		t.Fatalf("AwaitBind = %v after the context ended", err)
	}
}

func TestAwaitProject(t *testing.T) {
	events.AwaitEvery = 10 * time.Millisecond
	s := testkit.Stream(t, testkit.NATS(t))
	ctx := testkit.Context(t)
	pub := s.Publisher()
	publish := func(e *events.Event) {
		t.Helper()
		testkit.NoErr(t, pub.Publish(ctx, e), "publish")
		_, err := pub.Flush(ctx)
		testkit.NoErr(t, err, "flush")
	}

	t.Run("WaitsForOne", func(t *testing.T) {
		type result struct {
			p   string
			err error
		}
		waiting, done := make(chan struct{}), make(chan result, 1)
		go func() {
			p, err := s.AwaitProject(ctx, func() { close(waiting) })
			done <- result{p, err}
		}()
		<-waiting
		publish(scanBegin("alpha"))
		r := <-done
		testkit.NoErr(t, r.err, "AwaitProject")
		testkit.Equal(t, r.p, "alpha", "project")
	})
	t.Run("ErrSeveralProjects", func(t *testing.T) {
		publish(scanBegin("beta"))
		_, err := s.AwaitProject(ctx, nil)
		if !errors.Is(err, events.ErrSeveralProjects) {
			t.Fatalf("AwaitProject = %v, want ErrSeveralProjects", err)
		}
		testkit.Equal(t, err.Error(), "the stream holds several projects ([alpha beta])", "message")
	})
}
