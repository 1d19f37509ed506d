package main

import (
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
