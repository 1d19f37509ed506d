package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/testkit"
)

func runOnce(t *testing.T, args ...string) (int, map[string]any) {
	t.Helper()
	var out bytes.Buffer
	m := &Main{Stdout: &out, Logger: testkit.Logger()}
	if err := m.ParseFlags(args); err != nil {
		t.Fatalf("flags %v: %v", args, err)
	}
	code := m.Run(testkit.Context(t))
	m.Close()
	var sum map[string]any
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
			t.Fatalf("summary %q: %v", out.String(), err)
		}
	}
	return code, sum
}

func TestOnce(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	args := []string{"--root", root, "--data", data, "--once", "--json"}
	n := float64(len(testkit.Disk(t, root)))

	code, sum := runOnce(t, args...)
	testkit.Equal(t, code, ExitOK, "exit code")
	testkit.Equal(t, [4]any{sum["documents"], sum["published"], sum["unchanged"], sum["deleted"]}, [4]any{n, n, 0.0, 0.0}, "first run")
	testkit.Equal(t, sum["stream_seq"], any(n+2), "stream_seq")
	testkit.Equal(t, sum["project"], any(datadir.ProjectName(root)), "project from the root's path")
	if !strings.HasPrefix(sum["project"].(string), "sample-") {
		t.Errorf("project %q: want the root's name and a hash", sum["project"])
	}

	code, sum = runOnce(t, args...)
	testkit.Equal(t, code, ExitOK, "exit code")
	testkit.Equal(t, [2]any{sum["published"], sum["unchanged"]}, [2]any{0.0, n}, "second run")
	// The first run kept what it knew beside the store: the second read none of the stream.
	testkit.Equal(t, sum["known"], any("state file"), "second run's state from")

	testkit.WriteFile(t, root, "Characters/New.md", "new")
	_, sum = runOnce(t, args...)
	testkit.Equal(t, [2]any{sum["published"], sum["known"]}, [2]any{1.0, "state file"}, "published after adding one file, state from")
}

func TestOnceAgainstExternalNATS(t *testing.T) {
	b := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	code, sum := runOnce(t, "--root", root, "--nats", b.ClientURL(), "--once", "--json", "--project", "docs")
	testkit.Equal(t, code, ExitOK, "exit code")
	testkit.Equal(t, sum["project"], "docs", "project")
}

func TestExitCodes(t *testing.T) {
	t.Run("ErrNATSUnreachable", func(t *testing.T) {
		code, _ := runOnce(t, "--root", "../../testdata/sample", "--nats", "nats://127.0.0.1:1", "--once")
		testkit.Equal(t, code, ExitNATS, "exit code")
	})
	t.Run("ErrPartial", func(t *testing.T) {
		root := t.TempDir()
		testkit.WriteFile(t, root, "ok.md", "fine")
		// A name that is not valid UTF-8 is not indexed: the run says so.
		testkit.WriteFile(t, root, "bad\xff.md", "unnamable")
		code, sum := runOnce(t, "--root", root, "--data", t.TempDir(), "--once", "--json")
		testkit.Equal(t, code, ExitPartial, "exit code")
		testkit.Equal(t, [2]any{sum["published"], sum["failed"]}, [2]any{1.0, 1.0}, "published, failed")
	})
	t.Run("ErrUsage", func(t *testing.T) {
		for _, args := range [][]string{{}, {"--root", "/does/not/exist"}, {"--root", ".", "extra"}} {
			m := &Main{}
			if err := m.ParseFlags(args); err == nil {
				t.Errorf("ParseFlags(%v) accepted", args)
			}
		}
	})
}

// TestListenAddressTaken: with its embedded server's address taken, the indexer stops at
// once and says that the address is in use.
func TestListenAddressTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	testkit.NoErr(t, err, "listen")
	defer l.Close()
	var log bytes.Buffer
	m := &Main{Stdout: &bytes.Buffer{}, Logger: slog.New(slog.NewTextHandler(&log, nil))}
	testkit.NoErr(t, m.ParseFlags([]string{"--root", "../../testdata/sample", "--data", t.TempDir(), "--listen", l.Addr().String()}), "flags")
	code := m.Run(testkit.Context(t))
	m.Close()
	testkit.Equal(t, code, ExitNATS, "exit code")
	if !strings.Contains(log.String(), "already in use") || !strings.Contains(log.String(), "embedded NATS server") {
		t.Fatalf("the log does not say the address is taken: %s", log.String())
	}
}
