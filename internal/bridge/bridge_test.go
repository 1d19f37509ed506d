package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/testkit"
)

// fakeOwner serves the MCP endpoint on dir's socket: it answers initialize with a session
// id, and each call with the session it was sent under, as an event stream. drop makes it
// cut the connection of the next call instead, as a killed owner does.
type fakeOwner struct {
	ln       net.Listener
	mu       sync.Mutex
	sessions []string // the session id of every call answered
	ended    []string // the session ids DELETEd
	drop     bool
}

func startFake(t *testing.T, dir string) *fakeOwner {
	t.Helper()
	ln, err := net.Listen("unix", owner.Socket(dir))
	testkit.NoErr(t, err, "listen")
	f := &fakeOwner{ln: ln}
	srv := &http.Server{Handler: http.HandlerFunc(f.serve)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return f
}

func (f *fakeOwner) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/attach" {
		<-r.Context().Done()
		return
	}
	if r.Method == http.MethodDelete {
		f.mu.Lock()
		f.ended = append(f.ended, r.Header.Get("Mcp-Session-Id"))
		f.mu.Unlock()
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &msg)
	switch {
	case msg.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "mcp-session-1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18"}}`, msg.ID)
	case msg.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	default:
		f.mu.Lock()
		drop := f.drop
		f.drop = false
		if !drop {
			f.sessions = append(f.sessions, r.Header.Get("Mcp-Session-Id"))
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		w.(http.Flusher).Flush()
		if drop { // the owner dies mid-answer
			f.ln.Close()
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
			return
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", msg.ID)
	}
}

// TestBridgeResendsToNewOwner: the owner dies while it answers a call; the bridge starts
// another and resends the call under the same session id, and the client gets one answer.
func TestBridgeResendsToNewOwner(t *testing.T) {
	dir, err := os.MkdirTemp("", "own") // short: a unix socket's path is limited
	testkit.NoErr(t, err, "temp dir")
	t.Cleanup(func() { os.RemoveAll(dir) })
	first := startFake(t, dir)
	var second *fakeOwner
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	b := &Bridge{Dir: dir, In: inR, Out: outW, Logger: testkit.Logger(),
		Start: func() error { second = startFake(t, dir); return nil }}
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	out := bufio.NewReader(outR)
	send := func(s string) { _, _ = io.WriteString(inW, s+"\n") }
	read := func() string {
		line, err := out.ReadString('\n')
		testkit.NoErr(t, err, "read the bridge's output")
		return strings.TrimSpace(line)
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	testkit.Equal(t, read(), `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`, "initialize")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`)
	testkit.Equal(t, read(), `{"jsonrpc":"2.0","method":"notifications/progress"}`, "progress")
	testkit.Equal(t, read(), `{"jsonrpc":"2.0","id":2,"result":{}}`, "answer")

	first.mu.Lock()
	first.drop = true
	first.mu.Unlock()
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`)
	testkit.Equal(t, read(), `{"jsonrpc":"2.0","method":"notifications/progress"}`, "progress before the owner died")
	testkit.Equal(t, read(), `{"jsonrpc":"2.0","method":"notifications/progress"}`, "progress from the new owner")
	testkit.Equal(t, read(), `{"jsonrpc":"2.0","id":3,"result":{}}`, "the answer, once")
	if second == nil {
		t.Fatal("no new owner was started")
	}
	testkit.Equal(t, second.sessions, []string{"mcp-session-1"}, "the new owner sees the same session")

	inW.Close()
	testkit.NoErr(t, <-done, "the bridge ends with its client")
	second.mu.Lock()
	defer second.mu.Unlock()
	testkit.Equal(t, second.ended, []string{"mcp-session-1"}, "the bridge ends its session as it goes")
}

// TestOneBridgeStartsTheOwner: bridges that find no owner at once start one between them,
// not one each; the others wait for it.
func TestOneBridgeStartsTheOwner(t *testing.T) {
	dir, err := os.MkdirTemp("", "own") // short: a unix socket's path is limited
	testkit.NoErr(t, err, "temp dir")
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx, cancel := context.WithCancel(testkit.Context(t))
	var starts atomic.Int32
	var polls [3]atomic.Int32
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range polls {
		// The owner started never comes: every bridge goes on looking for it.
		b := &Bridge{Dir: dir, Logger: testkit.Logger(), Election: time.Hour, client: &http.Client{}, restart: time.Hour,
			Start: func() error { starts.Add(1); return nil }, polled: func() { polls[i].Add(1) }}
		wg.Go(func() { _ = b.elect(ctx) })
	}
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		least := min(polls[0].Load(), polls[1].Load(), polls[2].Load())
		return least >= 10, fmt.Sprintf("the bridges looked for the owner at least %d times each", least)
	})
	testkit.Equal(t, starts.Load(), int32(1), "owners started")
}

// TestUnusableDataDir: a data directory no owner could lock (read-only, or not a
// directory) is said at once, with the cause, instead of after the election's wait with a
// pointer to a log nobody wrote; no owner is started.
func TestUnusableDataDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	testkit.NoErr(t, os.WriteFile(file, nil, 0o600), "a file")
	lockDir := t.TempDir()
	testkit.NoErr(t, os.Mkdir(filepath.Join(lockDir, "owner.lock"), 0o700), "a directory in the lock file's place")
	dirs := map[string]string{"NotADirectory": filepath.Join(file, "data"), "LockNotAFile": lockDir}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(t.TempDir(), "ro")
		testkit.NoErr(t, os.Mkdir(ro, 0o500), "a read-only directory")
		dirs["ReadOnly"] = ro
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			var starts atomic.Int32
			b := &Bridge{Dir: dir, Logger: testkit.Logger(), Election: 2 * time.Second, In: strings.NewReader(""), Out: io.Discard,
				Start: func() error { starts.Add(1); return nil }}
			err := b.Run(testkit.Context(t))
			if err == nil || !strings.Contains(err.Error(), "cannot be used: ") || strings.Contains(err.Error(), "owner.log") {
				t.Fatalf("bridge on %s: %v, want the cause", dir, err)
			}
			t.Log(err)
			testkit.Equal(t, starts.Load(), int32(0), "owners started")
		})
	}
}

// TestSilentOwner: an owner that accepts the connection and never answers (stopped with
// SIGSTOP, say) fails each call once CallWait has passed, with a message that says so,
// instead of holding it for as long as it is stopped.
func TestSilentOwner(t *testing.T) {
	dir, err := os.MkdirTemp("", "own") // short: a unix socket's path is limited
	testkit.NoErr(t, err, "temp dir")
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", owner.Socket(dir))
	testkit.NoErr(t, err, "listen")
	stopped := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // every request: no answer while stopped
		case <-stopped:
		case <-r.Context().Done():
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(stopped); srv.Close() })

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	b := &Bridge{Dir: dir, In: inR, Out: outW, Logger: testkit.Logger(), CallWait: 50 * time.Millisecond,
		Start: func() error { return errors.New("no owner to start: one holds the socket") }}
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	go func() { _ = b.Run(ctx) }()
	go func() { _, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`+"\n") }()
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outR).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		if !strings.Contains(line, `"id":7`) || !strings.Contains(line, "has not answered for 50ms") {
			t.Fatalf("the answer to a call the owner never answers: %s", line)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call to a silent owner was not answered")
	}
}
