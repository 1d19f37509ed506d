package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// TestReplicaChangesFromItsLog: a query process that follows a stream (--nats) answers
// changes from its catalog's change log, kept from the stream's start, with what the
// stream alone answers; after a restart on the same data directory the log is the same,
// not started again, and so is the answer. With the stream's document events purged by
// hand (which the log does not mirror), the answer still lists them: it is the log's.
func TestReplicaChangesFromItsLog(t *testing.T) {
	ns := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	reconcileTree(t, ns.ClientURL(), root)
	data := t.TempDir()
	start := func() (*Main, *client.Client, func()) {
		m := &Main{Logger: testkit.Logger(), Stdin: eternal{}}
		testkit.NoErr(t, m.ParseFlags([]string{"--nats", ns.ClientURL(), "--data", data, "--http", "127.0.0.1:0", "--project", "sample"}), "flags")
		ctx, cancel := context.WithCancel(context.Background())
		m.Ready = make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		<-m.Ready
		c := httpClient(t, m)
		testkit.WaitCaughtUp(t, c)
		return m, c, func() { _ = c.Close(); cancel(); testkit.NoErr(t, <-done, "run"); m.Close() }
	}
	m, c, stop := start()
	var from query.ChangesView
	testkit.Decode(t, testkit.Call(t, c, "changes", map[string]any{"since": "now"}), &from)

	testkit.WriteFile(t, root, "Characters/Elara.md", "# Elara\n\nchanged\n")
	testkit.WriteFile(t, root, "Plot/new.md", "# New\n")
	testkit.NoErr(t, os.Rename(filepath.Join(root, "README.md"), filepath.Join(root, "Plot/README.md")), "move")
	testkit.NoErr(t, os.RemoveAll(filepath.Join(root, "Worldbuilding")), "remove a folder")
	reconcileTree(t, ns.ClientURL(), root)
	testkit.EventuallyMatchesDisk(t, c, root, 20*time.Second)

	nc := testkit.NATSClient(t, ns.ClientURL())
	s := &events.Stream{Conn: nc}
	testkit.NoErr(t, s.Bind(testkit.Context(t)), "bind")
	args := query.ChangesArgs{Project: "sample", Cursor: from.Cursor, Diff: true}
	want, qerr := query.Changes(testkit.Context(t), s, args, query.DefaultLimits)
	if qerr != nil {
		t.Fatal(qerr)
	}
	if want.Count < 4 {
		t.Fatalf("the stream lists %d changes: %+v", want.Count, want.Changes)
	}
	check := func(m *Main, c *client.Client, what string) {
		t.Helper()
		if _, logFrom, ok := m.catalog.LogHorizon(); !ok || logFrom != 0 {
			t.Fatalf("%s: the catalog keeps no change log from the stream's start (ok %v, from %d)", what, ok, logFrom)
		}
		var got query.ChangesView
		testkit.Decode(t, testkit.Call(t, c, "changes", map[string]any{"cursor": from.Cursor, "diff": true}), &got)
		testkit.Equal(t, got, *want, what+": the answer")
	}
	check(m, c, "following")
	stop()
	m, c, stop = start()
	defer stop()
	check(m, c, "restarted")

	js, err := jetstream.New(nc)
	testkit.NoErr(t, err, "jetstream")
	st, err := js.Stream(testkit.Context(t), events.DefaultStream)
	testkit.NoErr(t, err, "stream")
	testkit.NoErr(t, st.Purge(testkit.Context(t), jetstream.WithPurgeSubject(events.NewSubjects("sample").Documents())), "purge")
	var got query.ChangesView
	testkit.Decode(t, testkit.Call(t, c, "changes", map[string]any{"cursor": from.Cursor}), &got)
	testkit.Equal(t, got.Count, want.Count, "changes listed once the stream's events are purged")
}
