package bridge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// The bridge binary reads back what guide-mcp wrote, the owner's arguments untouched
// (flags of guide-mcp that the bridge's own parser would take included).
func TestCommandRoundTrip(t *testing.T) {
	want := Command{Dir: "/d/a b", MaxLine: 4 << 20, LogLevel: "debug", Owner: "/bin/guide-mcp",
		Args: []string{"--root", "/r", "--data", "/x", "--log-level", "warn", "--", "-x"}}
	got, err := ParseCommand(want.Argv())
	testkit.NoErr(t, err, "parse")
	testkit.Equal(t, got.Dir, want.Dir, "data")
	testkit.Equal(t, got.MaxLine, want.MaxLine, "max line")
	testkit.Equal(t, got.LogLevel, want.LogLevel, "log level")
	testkit.Equal(t, got.Owner, want.Owner, "owner")
	testkit.Equal(t, slices.Equal(got.Args, want.Args), true, "the owner's arguments")
}

func TestCommandRefused(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--data", "/d"},
		{"--owner", "/bin/guide-mcp"},
		{"--data", "/d", "--owner", "/bin/guide-mcp", "--max-line", "0"},
		{"--data", "/d", "--owner", "/bin/guide-mcp", "--max-line", "1", "--serve"},
	} {
		if _, err := ParseCommand(args); err == nil {
			t.Errorf("ParseCommand(%q) accepted", args)
		}
	}
}

// TestCommandRoundTripRoots: with --roots, the handshake comes through the environment, and
// leaves it (the owner daemon a bridge starts is not to see it).
func TestCommandRoundTripRoots(t *testing.T) {
	h := &Handshake{Versions: map[string]string{"": "2025-03-26"}, Latest: "2025-06-18",
		Tools: json.RawMessage(`{"tools":[]}`)}
	b, err := json.Marshal(h)
	testkit.NoErr(t, err, "marshal")
	t.Setenv(HandshakeEnv, string(b))
	want := Command{MaxLine: 1, LogLevel: "info", Owner: "/bin/guide-mcp", Roots: true, Project: "p"}
	got, err := ParseCommand(want.Argv())
	testkit.NoErr(t, err, "parse")
	testkit.Equal(t, got.Roots, true, "roots")
	testkit.Equal(t, got.Project, "p", "project")
	testkit.Equal(t, got.Handshake.Latest, h.Latest, "the handshake's latest version")
	testkit.Equal(t, string(got.Handshake.Tools), string(h.Tools), "the handshake's tools")
	_, set := os.LookupEnv(HandshakeEnv)
	testkit.Equal(t, set, false, "the handshake left in the environment")

	t.Run("ErrNoHandshake", func(t *testing.T) {
		t.Setenv(HandshakeEnv, "")
		if _, err := ParseCommand(want.Argv()); err == nil || !strings.Contains(err.Error(), HandshakeEnv) {
			t.Errorf("ParseCommand with no handshake: %v, want an error naming $%s", err, HandshakeEnv)
		}
	})
}

// TestCommandServesTheClientsRoot: the wiring both binaries run, with Roots: the handshake
// is answered by the command's, the client is asked for its roots, and its calls then go to
// the owner of the first root's data directory.
func TestCommandServesTheClientsRoot(t *testing.T) {
	dir, err := os.MkdirTemp("", "own") // short: a unix socket's path is limited
	testkit.NoErr(t, err, "temp dir")
	t.Cleanup(func() { os.RemoveAll(dir) })
	fake := startFake(t, dir)
	c := Command{Dir: dir, MaxLine: 1 << 20, Owner: "/nonexistent/guide-mcp", Roots: true,
		Handshake: &Handshake{Initialize: map[string]json.RawMessage{"serverInfo": json.RawMessage(`{"name":"guide"}`)},
			Versions: map[string]string{}, Latest: "2025-06-18", Tools: json.RawMessage(`{"tools":[]}`)}}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- c.Run(testkit.Context(t), inR, outW, testkit.Logger()) }()
	out := bufio.NewReader(outR)
	send := func(s string) { _, _ = io.WriteString(inW, s+"\n") }
	read := func() string {
		line, err := out.ReadString('\n')
		testkit.NoErr(t, err, "read the bridge's output")
		return strings.TrimSpace(line)
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"roots":{}}}}`)
	sameJSON(t, read(), `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"guide"}}}`, "initialize")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sameJSON(t, read(), `{"jsonrpc":"2.0","id":"guide-roots-1","method":"roots/list"}`, "the roots asked for")
	root, err := filepath.EvalSymlinks(t.TempDir())
	testkit.NoErr(t, err, "root")
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"guide-roots-1","result":{"roots":[{"uri":%q}]}}`, "file://"+root))
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`)
	testkit.Equal(t, read(), `{"jsonrpc":"2.0","method":"notifications/progress"}`, "progress")
	testkit.Equal(t, read(), `{"jsonrpc":"2.0","id":2,"result":{}}`, "the owner's answer")
	inW.Close()
	testkit.NoErr(t, <-done, "the command ends with its client")
	fake.mu.Lock()
	defer fake.mu.Unlock()
	testkit.Equal(t, fake.sessions, []string{"mcp-session-1"}, "the calls the owner answered, by session")
}

func sameJSON(t *testing.T, got, want, what string) {
	t.Helper()
	var g, w any
	testkit.NoErr(t, json.Unmarshal([]byte(got), &g), what)
	testkit.NoErr(t, json.Unmarshal([]byte(want), &w), what)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}
