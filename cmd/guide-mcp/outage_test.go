package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/testkit"
)

// TestNATSOutage: while NATS is away the query process keeps answering from what it has
// and says in its status that the stream cannot be read; when NATS is back it catches up.
func TestNATSOutage(t *testing.T) {
	store := t.TempDir()
	addr := freeAddr(t)
	start := func() *broker.Broker {
		b := &broker.Broker{StoreDir: store, Listen: addr, Name: "outage", Logger: testkit.Logger()}
		testkit.NoErr(t, b.Open(), "start NATS")
		return b
	}
	nats := start()
	root := testkit.CopyTree(t, "../../testdata/sample")
	reconcileTree(t, nats.ClientURL(), root)
	m := inProcess(t, "--nats", nats.ClientURL(), "--data", t.TempDir(), "--http", "127.0.0.1:0")
	c := httpClient(t, m)
	testkit.WaitCaughtUp(t, c)

	_ = nats.Close()
	testkit.RequireMatchesDisk(t, c, root) // answers from the projections alone
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		return testkit.ReadStatus(t, c).StreamError != "", "status does not say the stream is unreachable"
	})

	nats = start()
	defer nats.Close()
	testkit.WriteFile(t, root, "Characters/Elara.md", "written after the outage")
	reconcileTree(t, nats.ClientURL(), root)
	testkit.EventuallyMatchesDisk(t, c, root, 30*time.Second)
	if st := testkit.ReadStatus(t, c); st.StreamError != "" {
		t.Errorf("status still reports an error after recovery: %q", st.StreamError)
	}
}

// TestStartsWhileNATSAway: a query process started while its NATS server is unreachable
// serves from the projections it has on disk, says in its status that the stream cannot be
// read, and catches up once NATS is back on the same address.
func TestStartsWhileNATSAway(t *testing.T) {
	store, data := t.TempDir(), t.TempDir()
	addr := freeAddr(t)
	start := func() *broker.Broker {
		b := &broker.Broker{StoreDir: store, Listen: addr, Name: "away", Logger: testkit.Logger()}
		testkit.NoErr(t, b.Open(), "start NATS")
		return b
	}
	nats := start()
	url := nats.ClientURL()
	root := testkit.CopyTree(t, "../../testdata/sample")
	reconcileTree(t, url, root)
	// A first run builds the projections on disk, then stops.
	first := &Main{Logger: testkit.Logger(), Stdin: eternal{}, Stdout: os.Stderr, Ready: make(chan struct{})}
	testkit.NoErr(t, first.ParseFlags([]string{"--nats", url, "--data", data, "--http", "127.0.0.1:0"}), "flags")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	<-first.Ready
	testkit.WaitCaughtUp(t, httpClient(t, first))
	cancel()
	testkit.NoErr(t, <-done, "first run")
	testkit.NoErr(t, first.Close(), "close first run")
	_ = nats.Close()

	m := inProcess(t, "--nats", url, "--data", data, "--http", "127.0.0.1:0")
	c := httpClient(t, m)
	testkit.RequireMatchesDisk(t, c, root) // from the projections alone
	if st := testkit.ReadStatus(t, c); st.StreamError == "" || st.Documents == 0 {
		t.Errorf("status while NATS is away: stream_error %q, %d documents; want an error and the documents", st.StreamError, st.Documents)
	}
	if h := m.srv.Freshness.Health(testkit.Context(t), 0); h.Ready {
		t.Errorf("/healthz says ready while NATS is away: %+v", h)
	}

	nats = start()
	defer nats.Close()
	testkit.WriteFile(t, root, "Characters/Elara.md", "written while the query process waited")
	reconcileTree(t, url, root)
	testkit.EventuallyMatchesDisk(t, c, root, 30*time.Second)
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		st := testkit.ReadStatus(t, c)
		return st.StreamError == "", "status still reports " + st.StreamError
	})
}
