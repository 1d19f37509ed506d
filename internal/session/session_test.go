package session_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
	"github.com/guide/guide/internal/testkit"
)

// TestAttachPublishFailure: when the document cannot be published, the client reads a
// clean io_error and the cause stays on the error for the operator's log.
func TestAttachPublishFailure(t *testing.T) {
	p := testkit.NewPipeline(t, nil, testkit.CopyTree(t, "../../testdata/sample"), "")
	b := testkit.NATS(t)
	stream := testkit.Stream(t, b)
	b.Conn.Close() // every publish now fails
	r := &session.Registry{Project: p.Project, Catalog: p.Catalog, Stream: stream}
	_, qerr := r.Attach(testkit.Context(t), "client-1", "notes.md", "some notes")
	if qerr == nil {
		t.Fatal("attach succeeded on a closed connection")
	}
	testkit.Equal(t, qerr.Type, query.ErrIO, "error type")
	if !strings.Contains(qerr.Message, "internal error") || strings.Contains(qerr.Message, "nats") {
		t.Errorf("message %q: want a clean internal error", qerr.Message)
	}
	if qerr.Cause == nil || !strings.Contains(qerr.Cause.Error(), "nats") {
		t.Errorf("cause %v: want the publish failure", qerr.Cause)
	}
	if !errors.Is(qerr, qerr.Cause) {
		t.Error("the error does not unwrap to its cause")
	}
}

// TestNoDocumentOutlivesItsSession: under load the projections lag, and attach answers
// processing before the catalog holds the document. A detach of it, or the end of its
// session, must still delete it on the stream: none is left behind (an orphan indexed
// until the TTL).
func TestNoDocumentOutlivesItsSession(t *testing.T) {
	b := testkit.NATS(t)
	stream := testkit.Stream(t, b)
	// A catalog that never follows the stream: the projections as far behind as can be.
	lagging := &projection.Catalog{Dir: t.TempDir(), Logger: testkit.Logger()}
	testkit.NoErr(t, lagging.Open(), "catalog")
	t.Cleanup(func() { _ = lagging.Close() })
	r := &session.Registry{Project: "test", Catalog: lagging, Stream: stream, AttachWait: time.Millisecond,
		Logger: testkit.Logger()}
	ctx := testkit.Context(t)
	deleted := func(t *testing.T, id, name string) {
		t.Helper()
		e, err := stream.LatestSession(ctx, "test", session.Token(id), name)
		testkit.NoErr(t, err, "latest event of "+name)
		testkit.Equal(t, e.Op, events.OpDelete, "last event of "+name)
	}

	t.Run("Detach", func(t *testing.T) {
		res, qerr := r.Attach(ctx, "client-1", "a.md", "# A")
		if qerr != nil {
			t.Fatal(qerr)
		}
		testkit.Equal(t, res.Status, query.StatusProcessing, "attach status")
		if _, qerr := r.Detach(ctx, "client-1", "a.md"); qerr != nil {
			t.Fatalf("detach of a document still processing: %v", qerr)
		}
		deleted(t, "client-1", "a.md")
	})
	t.Run("End", func(t *testing.T) {
		for _, n := range []string{"b.md", "c.md"} {
			if _, qerr := r.Attach(ctx, "client-2", n, "# "+n); qerr != nil {
				t.Fatal(qerr)
			}
		}
		r.End(ctx, "client-2")
		deleted(t, "client-2", "b.md")
		deleted(t, "client-2", "c.md")
	})
}

// twoProcesses returns the session registries of two processes of one project, on the
// same NATS, each with its own catalog.
func twoProcesses(t *testing.T) (one, two *session.Registry, ctx context.Context) {
	stream := testkit.Stream(t, testkit.NATS(t))
	registry := func() *session.Registry {
		c := &projection.Catalog{Dir: t.TempDir(), Logger: testkit.Logger()}
		testkit.NoErr(t, c.Open(), "catalog")
		t.Cleanup(func() { _ = c.Close() })
		r := &session.Registry{Project: "test", Catalog: c, Logger: testkit.Logger()}
		testkit.NoErr(t, r.Connect(testkit.Context(t), stream, nil), "connect")
		return r
	}
	return registry(), registry(), testkit.Context(t)
}

// TestRestoreInAnotherRegistry: a session issued by one registry (a process) is restored,
// focus and history, by another on the same NATS; one never issued is unknown; ended in
// one, the other refuses it.
func TestRestoreInAnotherRegistry(t *testing.T) {
	one, two, ctx := twoProcesses(t)
	caught := make(chan struct{})
	close(caught)
	go two.Run(ctx, caught) // which watches for sessions ended elsewhere

	const id = "bridge-client-1"
	testkit.NoErr(t, one.Issue(ctx, id), "issue")
	if _, qerr := one.SetFocus(ctx, id, "a"); qerr != nil {
		t.Fatal(qerr)
	}
	if _, qerr := one.SetFocus(ctx, id, "a/b"); qerr != nil {
		t.Fatal(qerr)
	}
	c, err := two.Restore(ctx, id)
	testkit.NoErr(t, err, "restore")
	testkit.Equal(t, [2]any{c.Focus, c.History}, [2]any{"a/b", []string{"a"}}, "restored contexts")
	testkit.Equal(t, c.Session, session.Token(id), "token")

	if _, err := two.Restore(ctx, "never-issued"); !errors.Is(err, session.ErrUnknownSession) {
		t.Errorf("restore of an id never issued: %v", err)
	}
	one.End(ctx, id)
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		_, err := two.Restore(ctx, id)
		return errors.Is(err, session.ErrEnded), fmt.Sprintf("restore of a session ended elsewhere: %v", err)
	})
}

// TestSessionEndedBeforeTheWatchStarts: a process that holds a session learns that it
// ended elsewhere even when it ended before this process's watch for ends started (the
// watch sees only what is written after it starts; a sweep at start-up, which reads every
// record, may well have run before the end): it refuses the session from then on.
func TestSessionEndedBeforeTheWatchStarts(t *testing.T) {
	one, two, ctx := twoProcesses(t)

	const id = "bridge-client-2"
	testkit.NoErr(t, one.Issue(ctx, id), "issue")
	_, err := two.Restore(ctx, id)
	testkit.NoErr(t, err, "restore")
	one.End(ctx, id) // before two watches
	go session.WatchEnded(two, ctx)
	testkit.Eventually(t, 10*time.Second, func() (bool, string) {
		_, err := two.Restore(ctx, id)
		return errors.Is(err, session.ErrEnded), fmt.Sprintf("restore of a session ended elsewhere before the watch: %v", err)
	})
}

// TestDetachForgetsAfterAnswering: attach answers ready once every projection (the search
// index included) has applied the document, woken by the runner; detach answers once
// every projection has dropped it, and the purge of its history that follows leaves the
// stream with the delete alone.
func TestDetachForgetsAfterAnswering(t *testing.T) {
	p := testkit.NewPipeline(t, nil, testkit.CopyTree(t, "../../testdata/sample"), "")
	r := &session.Registry{Project: p.Project, Catalog: p.Catalog, Logger: testkit.Logger()}
	testkit.NoErr(t, r.Connect(testkit.Context(t), p.Stream, p.Server.Freshness), "connect")
	ctx := testkit.Context(t)
	const id, name = "client-1", "brakes.md"
	token := session.Token(id)
	for range 3 { // attached again over itself: three events on the subject
		res, qerr := r.Attach(ctx, id, name, "# Brakes\n\nThe brakes squeal in the cold.")
		if qerr != nil {
			t.Fatal(qerr)
		}
		testkit.Equal(t, res.Status, query.StatusReady, "attach status")
		var seq uint64
		_ = p.Catalog.Read(func(s *projection.Snapshot) error {
			if d, ok := s.SessionDocument(token, name); ok {
				seq = d.Seq
			}
			return nil
		})
		if x := p.Index.Checkpoint(); seq == 0 || x < seq {
			t.Fatalf("attach answered ready with the document at %d and the index at %d", seq, x)
		}
	}
	if _, qerr := r.Detach(ctx, id, name); qerr != nil {
		t.Fatal(qerr)
	}
	testkit.Equal(t, r.Documents(), 0, "session documents after detach")
	r.Forgotten(ctx)

	subj, err := events.NewSubjects(p.Project).SessionDocument(token, name)
	testkit.NoErr(t, err, "subject")
	js, err := p.Stream.JS.Stream(ctx, p.Stream.Name)
	testkit.NoErr(t, err, "stream")
	info, err := js.Info(ctx, jetstream.WithSubjectFilter(subj))
	testkit.NoErr(t, err, "stream info")
	testkit.Equal(t, info.State.Subjects[subj], uint64(1), "events left on the document's subject")
	e, err := p.Stream.LatestSession(ctx, p.Project, token, name)
	testkit.NoErr(t, err, "latest event")
	testkit.Equal(t, e.Op, events.OpDelete, "the event left")
}

// TestAttachLimitExact: a session's limit of documents counts those published and not yet
// applied (the projections lag) and those being attached at the same moment: concurrent
// attaches never pass it. A catalog that cannot be read refuses the attach.
func TestAttachLimitExact(t *testing.T) {
	stream := testkit.Stream(t, testkit.NATS(t))
	lagging := &projection.Catalog{Dir: t.TempDir(), Logger: testkit.Logger()}
	testkit.NoErr(t, lagging.Open(), "catalog")
	t.Cleanup(func() { _ = lagging.Close() })
	r := &session.Registry{Project: "test", Catalog: lagging, Stream: stream, AttachWait: time.Millisecond,
		MaxDocs: 3, Logger: testkit.Logger()}
	ctx := testkit.Context(t)

	t.Run("OneAfterAnother", func(t *testing.T) {
		ok := 0
		for i := range 5 {
			if _, qerr := r.Attach(ctx, "one", fmt.Sprintf("d%d.md", i), "# D"); qerr == nil {
				ok++
			} else {
				testkit.Equal(t, qerr.Type, query.ErrTooLarge, "refusal")
			}
		}
		testkit.Equal(t, ok, 3, "documents attached")
		_, qerr := r.Attach(ctx, "one", "d0.md", "# D again")
		testkit.Equal(t, qerr == nil, true, fmt.Sprintf("attached again over itself at the limit: %v", qerr))
	})
	t.Run("Concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		var ok atomic.Int32
		for i := range 12 {
			wg.Go(func() {
				if _, qerr := r.Attach(ctx, "two", fmt.Sprintf("c%d.md", i), "# C"); qerr == nil {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		testkit.Equal(t, ok.Load(), int32(3), "documents attached concurrently")
	})
	t.Run("ErrCatalogUnreadable", func(t *testing.T) {
		closed := &projection.Catalog{Dir: t.TempDir(), Logger: testkit.Logger()}
		testkit.NoErr(t, closed.Open(), "catalog")
		testkit.NoErr(t, closed.Close(), "close")
		r := &session.Registry{Project: "test", Catalog: closed, Stream: stream, AttachWait: time.Millisecond, Logger: testkit.Logger()}
		_, qerr := r.Attach(ctx, "three", "x.md", "# X")
		if qerr == nil || qerr.Type != query.ErrIO {
			t.Fatalf("attach with an unreadable catalog: %v, want io_error", qerr)
		}
		if _, err := stream.LatestSession(ctx, "test", session.Token("three"), "x.md"); err == nil {
			t.Error("the document was published all the same")
		}
	})
}

// TestConnectHonoursContext: opening the session store ends with the caller's context,
// and says so, when JetStream does not answer.
func TestConnectHonoursContext(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Port: server.RANDOM_PORT, NoLog: true, NoSigs: true}) // no JetStream
	testkit.NoErr(t, err, "nats server")
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	testkit.NoErr(t, err, "connect")
	t.Cleanup(nc.Close)
	asked := make(chan struct{}, 16)
	_, err = nc.Subscribe("$JS.API.>", func(*nats.Msg) { asked <- struct{}{} }) // and never answers
	testkit.NoErr(t, err, "subscribe")
	js, err := jetstream.New(nc)
	testkit.NoErr(t, err, "jetstream")
	r := &session.Registry{Project: "test", Catalog: testkit.Catalog(t, nil), Logger: testkit.Logger()}
	stalled := *testkit.Stream(t, testkit.NATS(t)) // the stream answers; the store's JetStream does not
	stalled.JS = js

	ctx, cancel := context.WithCancel(testkit.Context(t))
	done := make(chan error, 1)
	go func() { done <- r.Connect(ctx, &stalled, nil) }()
	<-asked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect: %v, want the caller's context.Canceled", err)
	}
}

// TestSessionLimits: a process holds at most MaxSessions sessions and MaxClientSessions of
// one client; past either, a new session ends the one unused longest, once unused for
// PressureIdle, or is refused with ErrTooManySessions; a reservation not issued is given back.
func TestSessionLimits(t *testing.T) {
	stream := testkit.Stream(t, testkit.NATS(t))
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	r := &session.Registry{Project: "test", Catalog: testkit.Catalog(t, nil), Logger: testkit.Logger(),
		MaxSessions: 3, MaxClientSessions: 2, PressureIdle: time.Minute,
		Now: func() time.Time { return time.Unix(0, clock.Load()) }}
	ctx := testkit.Context(t)
	testkit.NoErr(t, r.Connect(ctx, stream, nil), "connect")
	open := func(client string) (string, []string, error) {
		id, evict, err := r.Admit(client)
		for _, v := range evict {
			r.End(ctx, v)
		}
		if err == nil {
			testkit.NoErr(t, r.Issue(ctx, id), "issue")
		}
		return id, evict, err
	}

	a1, _, err := open("10.0.0.1")
	testkit.NoErr(t, err, "first session of a client")
	advance(time.Second)
	_, _, err = open("10.0.0.1")
	testkit.NoErr(t, err, "second session of a client")
	t.Run("ErrTooManySessionsOfClient", func(t *testing.T) {
		_, _, err := open("10.0.0.1")
		if !errors.Is(err, session.ErrTooManySessions) || !strings.Contains(err.Error(), "10.0.0.1 has 2 sessions open") {
			t.Fatalf("a third session of one client: %v", err)
		}
	})
	b1, _, err := open("10.0.0.2")
	testkit.NoErr(t, err, "another client's session")
	t.Run("ErrTooManySessions", func(t *testing.T) {
		_, _, err := open("")
		if !errors.Is(err, session.ErrTooManySessions) || !strings.Contains(err.Error(), "holds 3 sessions") {
			t.Fatalf("a fourth session: %v", err)
		}
	})
	t.Run("OldestIdleEnded", func(t *testing.T) {
		advance(2 * time.Minute)
		_, err := r.Restore(ctx, b1) // in use: not the one to go
		testkit.NoErr(t, err, "restore")
		_, evict, err := open("10.0.0.1")
		testkit.NoErr(t, err, "a new session once the others are idle")
		testkit.Equal(t, evict, []string{a1}, "sessions ended to make room")
		_, err = r.Restore(ctx, a1)
		testkit.Equal(t, errors.Is(err, session.ErrEnded), true, "the session ended to make room is ended")
	})
	t.Run("Unadmit", func(t *testing.T) {
		advance(2 * time.Minute)
		_, err := r.Restore(ctx, b1)
		testkit.NoErr(t, err, "restore")
		id, evict, err := r.Admit("10.0.0.3") // the process's limit: one idle session goes
		testkit.NoErr(t, err, "admit")
		testkit.Equal(t, len(evict), 1, "sessions ended to make room")
		r.Unadmit(id)
		_, evict, err = r.Admit("10.0.0.3")
		testkit.NoErr(t, err, "admit again")
		testkit.Equal(t, len(evict), 0, "room given back by the reservation not issued")
	})
}

// TestAttachedBytesLimit: the session documents of every session together stay within
// MaxAttachedBytes; detaching makes room again.
func TestAttachedBytesLimit(t *testing.T) {
	p := testkit.NewPipeline(t, nil, testkit.CopyTree(t, "../../testdata/sample"), "")
	r := &session.Registry{Project: p.Project, Catalog: p.Catalog, Logger: testkit.Logger(), MaxAttachedBytes: 100}
	ctx := testkit.Context(t)
	testkit.NoErr(t, r.Connect(ctx, p.Stream, p.Server.Freshness), "connect")
	body := "# Notes\n\n" + strings.Repeat("x", 51)
	res, qerr := r.Attach(ctx, "one", "a.md", body)
	if qerr != nil {
		t.Fatal(qerr)
	}
	testkit.Equal(t, res.Status, query.StatusReady, "attach status")
	_, qerr = r.Attach(ctx, "two", "b.md", body)
	if qerr == nil || qerr.Type != query.ErrTooLarge || !strings.Contains(qerr.Message, "limit of 100") {
		t.Fatalf("a second session's attach past the process's limit: %v", qerr)
	}
	if _, qerr := r.Detach(ctx, "one", "a.md"); qerr != nil {
		t.Fatal(qerr)
	}
	if _, qerr := r.Attach(ctx, "two", "b.md", body); qerr != nil {
		t.Fatalf("attach once the first was detached: %v", qerr)
	}
}

// TestOpeningTheStoreHonoursEachCallersContext: while one call opens the session store
// and NATS does not answer (a full store takes no write), a call queued behind it gives
// up with its own context rather than after the first: N callers must not take N times
// the wait. Seen in the soak's disk-full phase, where a new MCP session's initialize
// waited behind every other session's.
func TestOpeningTheStoreHonoursEachCallersContext(t *testing.T) {
	b := testkit.NATS(t)
	asked := make(chan struct{}, 64)
	sub, err := b.Conn.Subscribe("silent.>", func(*nats.Msg) { asked <- struct{}{} }) // answers nothing
	testkit.NoErr(t, err, "subscribe")
	defer sub.Unsubscribe()
	js, err := jetstream.NewWithAPIPrefix(b.Conn, "silent")
	testkit.NoErr(t, err, "jetstream")
	stream := testkit.Stream(t, b)
	stream.JS = js // the store is opened through a JetStream that never answers
	r := &session.Registry{Project: "p", Catalog: testkit.Catalog(t, map[string]string{"a.md": "# A\n"}),
		Stream: stream, Logger: testkit.Logger()}

	first, cancelFirst := context.WithTimeout(context.Background(), time.Minute)
	defer cancelFirst()
	firstDone := make(chan error, 1)
	go func() { firstDone <- r.Issue(first, session.IDPrefix+"first") }()
	<-asked // the first call is opening the store, waiting for NATS

	second, cancelSecond := context.WithCancel(context.Background())
	cancelSecond()
	secondDone := make(chan error, 1)
	go func() { secondDone <- r.Issue(second, session.IDPrefix+"second") }()
	select {
	case err := <-secondDone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("second call: %v; want its context's error", err)
		}
	case err := <-firstDone:
		t.Fatalf("the first call ended (%v) though NATS never answered", err)
	case <-time.After(30 * time.Second):
		t.Fatal("a call whose context had ended still waited for another call opening the store")
	}
	cancelFirst()
	if err := <-firstDone; err == nil {
		t.Fatal("the first call succeeded though NATS never answered")
	}
}
