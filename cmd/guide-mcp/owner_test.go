package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/testkit"
)

// bridged is a stdio MCP client of the built guide-mcp, and its process.
type bridged struct {
	*client.Client
	cmd *exec.Cmd
}

// bridgedClient starts guide-mcp --root over stdio, as an editor would, and initializes it.
func bridgedClient(t *testing.T, root, data string, extra ...string) *bridged {
	t.Helper()
	return bridgedClientOf(t, filepath.Join(binDir, "guide-mcp"), root, data, extra...)
}

// bridgedClientOf is bridgedClient of the guide-mcp binary at exe.
func bridgedClientOf(t *testing.T, exe, root, data string, extra ...string) *bridged {
	t.Helper()
	b := &bridged{}
	tr := transport.NewStdioWithOptions(exe, []string{"HOME=" + t.TempDir()},
		append([]string{"--root", root, "--data", data, "--idle-timeout", "1m"}, extra...),
		transport.WithCommandFunc(func(_ context.Context, command string, env, args []string) (*exec.Cmd, error) {
			b.cmd = exec.Command(command, args...)
			b.cmd.Env = append(os.Environ(), env...)
			return b.cmd, nil
		}))
	b.Client = client.NewClient(tr)
	testkit.NoErr(t, b.Start(testkit.Context(t)), "start guide-mcp") // and hear its notifications
	// Runs after the bridge is closed (cleanups run last first), before data is removed.
	t.Cleanup(func() { stopOwners(t, data) })
	t.Cleanup(func() { _ = b.Close() })
	initialize(t, b.Client)
	return b
}

// owners returns the pids of the owner daemons running on data.
func owners(t *testing.T, data string) []int {
	t.Helper()
	var pids []int
	entries, err := os.ReadDir("/proc")
	testkit.NoErr(t, err, "read /proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		if len(args) > 1 && args[1] == "--serve-owner" && strings.Contains(string(cmdline), "\x00"+data+"\x00") && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopOwners kills the owner daemons running on data and waits until they are gone, so
// that none writes into data while the test removes it. A closing bridge may have started
// one more: that one is killed too.
func stopOwners(t *testing.T, data string) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); <-tick.C {
		pids := owners(t, data)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	t.Errorf("owner daemons still running on %s", data)
}

func zombie(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// oneOwner waits for exactly one owner daemon on data (starts that lost the race exit)
// and returns its pid; the test kills the owners it started when it ends.
func oneOwner(t *testing.T, data string) int {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			if log, err := os.ReadFile(owner.Log(data)); err == nil {
				t.Logf("the owner's log:\n%s", log)
			}
		}
		for _, pid := range owners(t, data) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	var pids []int
	testkit.Eventually(t, 10*time.Second, func() (bool, string) {
		pids = owners(t, data)
		return len(pids) == 1, fmt.Sprintf("owner daemons on %s: %v", data, pids)
	})
	testkit.Eventually(t, 10*time.Second, func() (bool, string) { // published once its NATS is up
		r, err := owner.Read(data)
		return err == nil && r.PID == pids[0], fmt.Sprintf("the owner's record names %d, want %d (%v)", r.PID, pids[0], err)
	})
	return pids[0]
}

// statusCall is a cheap call that reads the projections: list the focus (the root).
func statusCall() mcp.CallToolRequest {
	var r mcp.CallToolRequest
	r.Params.Name = "list"
	r.Params.Arguments = map[string]any{}
	return r
}

// answersIn calls status on c and reports how long the answer took.
func answersIn(t *testing.T, c client.MCPClient) time.Duration {
	t.Helper()
	start := time.Now()
	testkit.ReadStatus(t, c)
	return time.Since(start)
}

// TestClientsShareOneOwner: three stdio clients on one folder share one owner, one store and
// one index; the second and third answer from it at once, without indexing again.
func TestClientsShareOneOwner(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	a := bridgedClient(t, root, data)
	first := testkit.WaitCaughtUp(t, a)
	testkit.RequireMatchesDisk(t, a, root)
	pid := oneOwner(t, data)

	for _, name := range []string{"second", "third"} {
		c := bridgedClient(t, root, data)
		st := testkit.ReadStatus(t, c)
		testkit.Equal(t, st.StreamLastSeq, first.StreamLastSeq, name+" client: nothing indexed again")
		testkit.Equal(t, st.AppliedSeq >= first.AppliedSeq, true, name+" client: answers from the caught-up projections")
		testkit.RequireMatchesDisk(t, c, root)
	}
	testkit.Equal(t, oneOwner(t, data), pid, "the same owner serves every client")

	// Each client has a session of its own on the owner, whatever protocol it asked for.
	focus(t, a.Client, "Characters")
	f := focus(t, a.Client, "")
	testkit.Equal(t, slices.Contains(f.History, "Characters"), true, fmt.Sprintf("the session's history %v holds its last focus", f.History))
	stores, err := filepath.Glob(filepath.Join(data, "*", "jetstream"))
	testkit.NoErr(t, err, "glob")
	testkit.Equal(t, len(stores), 1, "one JetStream store")
}

// TestAnyProcessMayDie kills each process in turn, the owner included: the other clients
// keep answering, and a new owner takes the lock the killed one held.
func TestAnyProcessMayDie(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	clients := []*bridged{bridgedClient(t, root, data), bridgedClient(t, root, data), bridgedClient(t, root, data)}
	testkit.WaitCaughtUp(t, clients[0])
	pid := oneOwner(t, data)

	// Each client's session: a focus, a history, an attached document.
	attached := map[int]string{}
	for i, c := range clients[:2] {
		focus(t, c.Client, "Characters")
		focus(t, c.Client, "")
		r := attach(t, c.Client, fmt.Sprintf("notes-%d.md", i), fmt.Sprintf("# Notes %d\n\nkept by session %d\n", i, i))
		testkit.Equal(t, r.Status, "ready", "attach")
		attached[i] = r.Path
	}
	sessionIntact := func(round, i int, c *bridged) {
		f := focus(t, c.Client, "")
		if !slices.Contains(f.History, "Characters") {
			t.Errorf("round %d, client %d: the session's history was lost: %v", round, i, f.History)
		}
		// A new owner restores the session at once, and its attached documents as its
		// projections catch up with the stream: moments, not seconds.
		start := time.Now()
		testkit.Eventually(t, 10*time.Second, func() (bool, string) {
			v := testkit.Text(t, testkit.Call(t, c.Client, "view", map[string]any{"path": attached[i]}))
			return strings.Contains(v, fmt.Sprintf("kept by session %d", i)),
				fmt.Sprintf("round %d, client %d: the attached document was lost: %.300s", round, i, v)
		})
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Logf("round %d, client %d: the attached document was back after %s", round, i, d)
		}
	}

	sessionIntact(-1, 0, clients[0]) // before any owner died

	// A bridge dies: the others and the owner do not notice.
	kill9(t, clients[2].cmd)
	for _, c := range clients[:2] {
		answersIn(t, c)
	}
	testkit.Equal(t, oneOwner(t, data), pid, "the owner outlives a client")

	// The owner dies, twice, while a client keeps calling: its lock and socket are left
	// behind, and taken over; the calls in flight are answered by the next owner.
	for round := range 2 {
		stop, calls := make(chan struct{}), make(chan int)
		go func() {
			n := 0
			defer func() { calls <- n }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := clients[1].CallTool(testkit.Context(t), statusCall()); err != nil {
					t.Errorf("round %d: a call while the owner died: %v", round, err)
					return
				}
				n++
			}
		}()
		testkit.NoErr(t, syscall.Kill(pid, syscall.SIGKILL), "kill -9 the owner")
		for i, c := range clients[:2] {
			t.Logf("round %d: client %d answered again after %s", round, i, answersIn(t, c))
			sessionIntact(round, i, c)
		}
		next := oneOwner(t, data)
		if next == pid {
			t.Fatalf("round %d: the killed owner %d still serves", round, pid)
		}
		pid = next
		close(stop)
		t.Logf("round %d: %d calls answered while the owner was killed and replaced", round, <-calls)
		testkit.RequireMatchesDisk(t, clients[round%2], root)
	}

	// A change on disk still reaches the clients, through the new owner's indexer.
	testkit.WriteFile(t, root, "Characters/New.md", "# New\n\nwritten after the owners died\n")
	for _, c := range clients[:2] {
		testkit.EventuallyMatchesDisk(t, c, root, 20*time.Second)
	}
}

// TestIndexerPublishesThroughOwner: indexer --once without --nats, while clients are
// served, publishes through the owner's NATS server; no second server opens the store.
func TestIndexerPublishesThroughOwner(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	c := bridgedClient(t, root, data)
	before := testkit.WaitCaughtUp(t, c)
	pid := oneOwner(t, data)

	testkit.WriteFile(t, root, "Characters/Indexed.md", "# Indexed\n\nby indexer --once\n")
	cmd := exec.Command(filepath.Join(binDir, "indexer"), "--once", "--root", root, "--data", filepath.Join(data, "nats"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	testkit.NoErr(t, cmd.Run(), "indexer --once: "+stderr.String())
	if !strings.Contains(stderr.String(), "publishing through the project's owner") ||
		!strings.Contains(stderr.String(), fmt.Sprintf("pid=%d", pid)) {
		t.Fatalf("indexer --once did not publish through the owner %d:\n%s", pid, stderr.String())
	}
	testkit.EventuallyMatchesDisk(t, c, root, 20*time.Second)
	after := testkit.ReadStatus(t, c)
	if after.StreamLastSeq <= before.StreamLastSeq {
		t.Errorf("the owner's stream did not grow: %d, then %d", before.StreamLastSeq, after.StreamLastSeq)
	}
	testkit.Equal(t, oneOwner(t, data), pid, "the owner still serves")
}

// TestSecondHTTPOwnerRefused: --http on a project that has an owner fails and says what to
// do, instead of opening the store a second time.
func TestSecondHTTPOwnerRefused(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	c := bridgedClient(t, root, data)
	testkit.WaitCaughtUp(t, c)
	oneOwner(t, data)

	cmd := exec.Command(filepath.Join(binDir, "guide-mcp"), "--root", root, "--data", data, "--http", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a second owner started:\n%s", out)
	}
	if !strings.Contains(string(out), "served on this machine already") {
		t.Errorf("the refusal does not say why:\n%s", out)
	}
	answersIn(t, c)
}

// TestOwnerExitsWhenIdle: the owner daemon stops once its last client has gone for
// --idle-timeout, and releases the project.
func TestOwnerExitsWhenIdle(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	c := bridgedClient(t, root, data, "--idle-timeout", "300ms")
	testkit.WaitCaughtUp(t, c)
	pid := oneOwner(t, data)
	testkit.NoErr(t, c.Close(), "close the client")
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		return len(owners(t, data)) == 0, fmt.Sprintf("owner %d still runs", pid)
	})
	testkit.Equal(t, owner.Held(data), false, "the project is free")
}

// TestStdioBridgesToHTTPOwner: with guide-mcp --http serving a project, a stdio client on
// it bridges to that process instead of starting an owner.
func TestStdioBridgesToHTTPOwner(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	addr := freeAddr(t)
	srv := spawn(t, "guide-mcp", "--root", root, "--data", data, "--http", addr)
	testkit.WaitCaughtUp(t, connectHTTP(t, addr))

	c := bridgedClient(t, root, data)
	testkit.RequireMatchesDisk(t, c, root)
	r, err := owner.Read(data)
	testkit.NoErr(t, err, "the owner's record")
	testkit.Equal(t, r.PID, srv.Process.Pid, "the HTTP server owns the project")
	testkit.Equal(t, len(owners(t, data)), 0, "no owner daemon started")
}

// TestBridgedSubscriptions: a stdio client subscribed to a resource hears its updates, which
// the owner sends outside any call, through the bridge.
func TestBridgedSubscriptions(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/content")
	data := t.TempDir()
	c := bridgedClient(t, root, data)
	n := &notes{}
	c.OnNotification(n.add)
	testkit.WaitCaughtUp(t, c)
	oneOwner(t, data)
	const uri = "guide://guidelines"
	req := mcp.SubscribeRequest{}
	req.Params.URI = uri
	testkit.NoErr(t, c.Subscribe(testkit.Context(t), req), "subscribe")
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		// The bridge opens its event stream as the session starts; write until one arrives.
		testkit.WriteFile(t, root, "guidelines/style.md", fmt.Sprintf("# Style\n\nrewritten at %s", time.Now()))
		n.mu.Lock()
		got := len(n.got)
		n.mu.Unlock()
		return n.count("notifications/resources/updated", uri) > 0, fmt.Sprintf("no update through the bridge (%d notifications)", got)
	})
}

// TestDeletedDataDirStopsOwner: rm -rf of a running owner's data directory; the owner
// stops rather than serve deleted files beside the second owner the next client starts,
// and the client is answered by that one owner, rebuilt from the disk.
func TestDeletedDataDirStopsOwner(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := filepath.Join(t.TempDir(), "data")
	c := bridgedClient(t, root, data)
	testkit.WaitCaughtUp(t, c)
	pid := oneOwner(t, data)

	testkit.Eventually(t, 10*time.Second, func() (bool, string) {
		err := os.RemoveAll(data) // the owner may write into it meanwhile: again until gone
		return err == nil, fmt.Sprintf("rm -rf %s: %v", data, err)
	})
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		return !slices.Contains(owners(t, data), pid), fmt.Sprintf("the owner %d still runs on its deleted data directory", pid)
	})
	c2 := bridgedClient(t, root, data)
	testkit.EventuallyMatchesDisk(t, c2, root, 30*time.Second)
	testkit.EventuallyMatchesDisk(t, c, root, 30*time.Second)
	if next := oneOwner(t, data); next == pid {
		t.Fatalf("the owner of the deleted directory %d still serves", pid)
	}
}

// TestIndexerWithOwnersDataDir: indexer --once --data names the data directory guide-mcp
// was given (not the store inside it): it finds the owner all the same, and publishes
// through it rather than open a second store that nobody reads.
func TestIndexerWithOwnersDataDir(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	c := bridgedClient(t, root, data)
	testkit.WaitCaughtUp(t, c)
	pid := oneOwner(t, data)

	testkit.WriteFile(t, root, "Characters/Indexed.md", "# Indexed\n\nby indexer --once --data\n")
	cmd := exec.Command(filepath.Join(binDir, "indexer"), "--once", "--root", root, "--data", data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	testkit.NoErr(t, cmd.Run(), "indexer --once: "+stderr.String())
	if !strings.Contains(stderr.String(), fmt.Sprintf("pid=%d", pid)) {
		t.Fatalf("indexer --once --data %s did not publish through the owner %d:\n%s", data, pid, stderr.String())
	}
	testkit.EventuallyMatchesDisk(t, c, root, 20*time.Second)
	stores, err := filepath.Glob(filepath.Join(data, "*", "jetstream"))
	testkit.NoErr(t, err, "glob")
	more, err := filepath.Glob(filepath.Join(data, "jetstream"))
	testkit.NoErr(t, err, "glob")
	testkit.Equal(t, len(stores)+len(more), 1, "JetStream stores in the data directory")
}
