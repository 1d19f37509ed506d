package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// natsServerBinary finds Debian's nats-server. Outside CI a machine without it skips the
// cluster tests with a message; in CI (CI=true) its absence is a failure, since .ci/run
// installs it.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the cluster test starts three nats-server processes")
	}
	for _, p := range []string{"nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server"} {
		if bin, err := exec.LookPath(p); err == nil {
			return bin
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("nats-server not found; .ci/run installs it with apt-get install -y nats-server")
	}
	t.Skip("nats-server not found: apt-get install -y nats-server to run the cluster test (CI=true makes this a failure)")
	return ""
}

// natsNode is one nats-server process of a test cluster.
type natsNode struct {
	name, conf, url string
	bin             string
	cmd             *exec.Cmd
	t               *testing.T
}

func (n *natsNode) start() {
	n.t.Helper()
	n.cmd = exec.Command(n.bin, "-c", n.conf)
	log, err := os.Create(n.conf + ".log")
	testkit.NoErr(n.t, err, "log file")
	n.cmd.Stdout, n.cmd.Stderr = log, log
	testkit.NoErr(n.t, n.cmd.Start(), "start "+n.name)
	cmd := n.cmd
	n.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); log.Close() })
}

func (n *natsNode) kill() {
	n.t.Helper()
	testkit.NoErr(n.t, n.cmd.Process.Kill(), "kill -9 "+n.name)
	_ = n.cmd.Wait()
}

// natsCluster starts three JetStream nodes clustered on loopback.
func natsCluster(t *testing.T, bin string) []*natsNode {
	t.Helper()
	dir := t.TempDir()
	client := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	route := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	var nodes []*natsNode
	for i := range 3 {
		var routes []string
		for j := range 3 {
			if j != i {
				routes = append(routes, `"nats://`+route[j]+`"`)
			}
		}
		name := fmt.Sprintf("n%d", i+1)
		conf := filepath.Join(dir, name+".conf")
		body := fmt.Sprintf(`server_name: %s
listen: %s
max_payload: 8MB
jetstream { store_dir: %q }
cluster { name: guide, listen: %s, routes: [%s] }
`, name, client[i], filepath.Join(dir, name), route[i], strings.Join(routes, ", "))
		testkit.NoErr(t, os.WriteFile(conf, []byte(body), 0o644), "config")
		n := &natsNode{name: name, conf: conf, url: "nats://" + client[i], bin: bin, t: t}
		n.start()
		nodes = append(nodes, n)
	}
	return nodes
}

func urls(nodes []*natsNode) string {
	var u []string
	for _, n := range nodes {
		u = append(u, n.url)
	}
	return strings.Join(u, ",")
}

// waitJetStream waits until the cluster has elected a meta leader and answers JetStream.
func waitJetStream(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc := testkit.NATSClientEventually(t, url, 30*time.Second)
	js, err := jetstream.New(nc)
	testkit.NoErr(t, err, "jetstream")
	testkit.Eventually(t, 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err == nil, fmt.Sprintf("JetStream cluster not ready: %v", err)
	})
	return nc
}

// churn changes the tree until stop closes: new documents, rewrites and deletions.
func churn(t *testing.T, root string, seed uint64, stop <-chan struct{}) (ops int) {
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; ; i++ {
		select {
		case <-stop:
			return i
		default:
		}
		p := filepath.Join(root, fmt.Sprintf("part-%d/chapter-%d/note-%d.md", r.IntN(7), r.IntN(31), r.IntN(600)))
		switch r.IntN(4) {
		case 0:
			_ = os.Remove(p)
		default:
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, fmt.Appendf(nil, "# churn %d\n\nseed %d step %d\n", i, seed, i), 0o644)
		}
		time.Sleep(5 * time.Millisecond) // paces the churn: a few hundred changes a second, not a flood
	}
}

// TestClusterNodeKilledDuringChurn: three Debian nats-server nodes clustered on loopback,
// the stream replicated on all three, an indexer watching a tree and two query processes.
// While the tree churns, the stream's leader is killed with SIGKILL, and later started
// again. No event is lost: both query processes end equal to the disk, and ready.
func TestClusterNodeKilledDuringChurn(t *testing.T) {
	bin := natsServerBinary(t)
	nodes := natsCluster(t, bin)
	nc := waitJetStream(t, urls(nodes))

	root := t.TempDir()
	manyFiles(t, root, 500)
	spawn(t, "indexer", "--root", root, "--project", "p", "--nats", urls(nodes), "--replicas", "3", "--interval", "5s")

	var clients []string
	for i := range 2 {
		addr := freeAddr(t)
		// Each query process lists the nodes in another order, so they connect to different ones.
		order := append(append([]*natsNode{}, nodes[i+1:]...), nodes[:i+1]...)
		spawn(t, "guide-mcp", "--nats", urls(order), "--project", "p", "--data", t.TempDir(), "--http", addr)
		clients = append(clients, addr)
	}
	for _, addr := range clients {
		testkit.WaitCaughtUp(t, connectHTTP(t, addr))
	}

	s := &events.Stream{Conn: nc}
	testkit.NoErr(t, s.Bind(testkit.Context(t)), "bind")
	info, err := s.Info(testkit.Context(t))
	testkit.NoErr(t, err, "stream info")
	testkit.Equal(t, info.Config.Replicas, 3, "stream replicas")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ops int
	wg.Go(func() { ops = churn(t, root, 7, stop) })

	time.Sleep(time.Second) // the kill lands in the middle of the churn, not before it
	info, err = s.Info(testkit.Context(t))
	testkit.NoErr(t, err, "stream info")
	var victim *natsNode
	for _, n := range nodes {
		if info.Cluster != nil && n.name == info.Cluster.Leader {
			victim = n
		}
	}
	if victim == nil {
		t.Fatalf("no stream leader among the nodes: %+v", info.Cluster)
	}
	t.Logf("killing %s, the stream leader, at stream seq %d", victim.name, info.State.LastSeq)
	victim.kill()

	time.Sleep(3 * time.Second) // churn on two nodes of three
	victim.start()
	time.Sleep(time.Second) // churn goes on while the restarted node catches up
	close(stop)
	wg.Wait()
	t.Logf("%d changes made during the churn", ops)

	for _, addr := range clients {
		c := connectHTTP(t, addr)
		testkit.EventuallyMatchesDisk(t, c, root, 90*time.Second)
		st := testkit.WaitCaughtUp(t, c)
		t.Logf("query process %s: %d documents, applied seq %d", addr, st.Documents, st.AppliedSeq)
		code, body := get(t, "http://"+addr+"/healthz", "")
		testkit.Equal(t, code, 200, "healthz: "+body)
	}
}
