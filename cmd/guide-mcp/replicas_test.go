package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// answers is what a client sees of the whole project: the tree and every document.
func answers(t *testing.T, c *client.Client, root string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(testkit.Text(t, testkit.Call(t, c, "tree", map[string]any{"folder": "", "depth": 5})))
	for _, p := range slices.Sorted(maps.Keys(testkit.Disk(t, root))) {
		fmt.Fprintf(&b, "\n%s: %s", p, testkit.Text(t, testkit.Call(t, c, "view", map[string]any{"path": p})))
	}
	return b.String()
}

// TestReplicasConverge: three query processes follow one stream, each with its own data
// directory, and give identical answers, before and after the tree changes.
func TestReplicasConverge(t *testing.T) {
	nats := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	reconcileTree(t, nats.ClientURL(), root)
	var clients []*client.Client
	for range 3 {
		m := inProcess(t, "--nats", nats.ClientURL(), "--data", t.TempDir(), "--http", "127.0.0.1:0")
		c := httpClient(t, m)
		testkit.WaitCaughtUp(t, c)
		clients = append(clients, c)
	}
	testkit.WriteFile(t, root, "Characters/Elara.md", "changed for every replica")
	testkit.WriteFile(t, root, "Plot/Act 3/finale.md", "# Finale")
	testkit.NoErr(t, os.Remove(filepath.Join(root, "README.md")), "remove")
	reconcileTree(t, nats.ClientURL(), root)
	var first string
	for i, c := range clients {
		testkit.EventuallyMatchesDisk(t, c, root, 20*time.Second)
		a := answers(t, c, root)
		if i == 0 {
			first = a
		} else if a != first {
			t.Fatalf("replica %d answers differently from replica 0", i)
		}
	}
}

// TestReplicaBehindReportsLag: a replica that stops applying (here: an event of a schema
// it does not know) while the stream goes on reports how far behind it is, in the status
// resource and in /healthz, which stops saying ready.
func TestReplicaBehindReportsLag(t *testing.T) {
	ns := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	reconcileTree(t, ns.ClientURL(), root)
	m := inProcess(t, "--nats", ns.ClientURL(), "--data", t.TempDir(), "--http", "127.0.0.1:0", "--project", "sample")
	c := httpClient(t, m)
	before := testkit.WaitCaughtUp(t, c)

	// An event from a newer indexer, of a kind this one does not read either, stops this
	// replica for good.
	nc := testkit.NATSClient(t, ns.ClientURL())
	msg := nats.NewMsg(strings.TrimSuffix(events.NewSubjects("sample").All(), ">") + "ctl.future")
	msg.Header.Set(events.HdrSchema, "99")
	_, err := jetstreamPublish(nc, msg)
	testkit.NoErr(t, err, "publish")
	for i := range 5 {
		testkit.WriteFile(t, root, fmt.Sprintf("later-%d.md", i), "written after the replica stopped")
	}
	sum := reconcileTree(t, ns.ClientURL(), root)

	var st query.Status
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		st = testkit.ReadStatus(t, c)
		return st.StreamError != "" && st.Lag >= 6 && st.StreamLastSeq >= sum.StreamSeq,
			fmt.Sprintf("status does not report the lag: %+v", st)
	})
	testkit.Equal(t, st.AppliedSeq, before.AppliedSeq, "applied nothing since")
	code, body := get(t, "http://"+m.Addr().String()+"/healthz", "")
	testkit.Equal(t, code, 503, "healthz of a replica behind: "+body)
	if !strings.Contains(body, `"ready":false`) || !strings.Contains(body, "unknown event schema") {
		t.Fatalf("healthz body %s", body)
	}
}

func jetstreamPublish(nc *nats.Conn, m *nats.Msg) (uint64, error) {
	js, err := nc.JetStream()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ack, err := js.PublishMsg(m, nats.Context(ctx))
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}
