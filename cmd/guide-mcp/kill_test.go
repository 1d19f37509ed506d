package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	testkit.NoErr(t, err, "listen")
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// manyFiles writes n small documents in nested folders.
func manyFiles(t *testing.T, root string, n int) {
	t.Helper()
	for i := range n {
		testkit.WriteFile(t, root, fmt.Sprintf("part-%d/chapter-%d/note-%d.md", i%7, i%31, i),
			fmt.Sprintf("# Note %d\n\n%s\n", i, strings.Repeat("words of the note ", 1+i%50)))
	}
}

func spawn(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, bin), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	testkit.NoErr(t, cmd.Start(), "start "+bin)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	testkit.NoErr(t, cmd.Process.Kill(), "kill -9") // SIGKILL: no clean-up runs
	_ = cmd.Wait()
}

func connectHTTP(t *testing.T, addr string) *client.Client {
	t.Helper()
	var c *client.Client
	testkit.Eventually(t, 30*time.Second, func() (bool, string) { // the server may still be starting
		var err error
		c, err = testkit.DialHTTP(testkit.Context(t), "http://"+addr+"/mcp", testkit.HTTP{})
		return err == nil, fmt.Sprintf("connect %s: %v", addr, err)
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestKill9AllInOneRecovers kills the all-in-one server while it indexes, changes the tree,
// and starts it again on the same data: it ends equal to the disk.
func TestKill9AllInOneRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 recovery runs a few thousand documents")
	}
	root := t.TempDir()
	manyFiles(t, root, 3000)
	data := t.TempDir()
	addr := freeAddr(t)
	args := []string{"--root", root, "--data", data, "--http", addr}

	for round, wait := range []time.Duration{0, 150 * time.Millisecond, 400 * time.Millisecond} {
		cmd := spawn(t, "guide-mcp", args...)
		c := connectHTTP(t, addr)
		time.Sleep(wait) // lets the server index for a while, so that each kill lands at another point
		st := testkit.ReadStatus(t, c)
		kill9(t, cmd)
		t.Logf("round %d: killed at applied_seq %d of %d", round, st.AppliedSeq, st.StreamLastSeq)
		testkit.WriteFile(t, root, fmt.Sprintf("part-1/chapter-1/note-%d.md", round), fmt.Sprintf("changed in round %d", round))
		testkit.NoErr(t, os.RemoveAll(filepath.Join(root, fmt.Sprintf("part-%d/chapter-%d", 2+round, 2+round))), "remove a folder")
	}
	spawn(t, "guide-mcp", args...)
	c := connectHTTP(t, addr)
	testkit.WaitCaughtUp(t, c)
	testkit.EventuallyMatchesDisk(t, c, root, 20*time.Second)
}

// TestKill9IndexerRecovers kills the indexer, embedded JetStream server and all, while it
// publishes; the next run reconciles, and the stream's state equals the tree.
func TestKill9IndexerRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 recovery runs a few thousand documents")
	}
	root := t.TempDir()
	manyFiles(t, root, 3000)
	data := t.TempDir()
	addr := freeAddr(t)
	args := []string{"--root", root, "--data", data, "--listen", addr, "--project", "p"}

	for _, wait := range []time.Duration{30 * time.Millisecond, 120 * time.Millisecond} {
		cmd := spawn(t, "indexer", args...)
		time.Sleep(wait) // lets the indexer publish for a while, so that the kill lands mid-scan
		kill9(t, cmd)
	}
	testkit.WriteFile(t, root, "part-0/chapter-0/note-0.md", "changed while the indexer was down")
	testkit.NoErr(t, os.RemoveAll(filepath.Join(root, "part-3/chapter-3")), "remove a folder")

	spawn(t, "indexer", args...)
	nc := testkit.NATSClientEventually(t, "nats://"+addr, 30*time.Second)
	s := &events.Stream{Conn: nc}
	ctx := testkit.Context(t)
	testkit.Eventually(t, 60*time.Second, func() (bool, string) { // the indexer creates it as it starts
		err := s.Bind(ctx)
		return err == nil, fmt.Sprintf("stream: %v", err)
	})
	want := map[string]string{}
	for p, content := range testkit.Disk(t, root) {
		sum := sha256.Sum256([]byte(content))
		want[p] = hex.EncodeToString(sum[:])
	}
	testkit.Eventually(t, 60*time.Second, func() (bool, string) {
		cur, _, err := testkit.Current(ctx, s, "p")
		testkit.NoErr(t, err, "current")
		live := map[string]string{}
		for p, st := range cur {
			if st.Op == events.OpUpsert {
				live[p] = st.Hash
			}
		}
		return maps.Equal(live, want), fmt.Sprintf("stream holds %d live documents, disk %d", len(live), len(want))
	})
}
