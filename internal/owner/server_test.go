package owner

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
)

// TestServerCountsAttachedBridges: the socket serves the MCP endpoint, counts the bridges
// by the requests they hold open on /attach, and says when none has been attached for the
// idle time; a body larger than MaxBody is refused.
func TestServerCountsAttachedBridges(t *testing.T) {
	dir, err := os.MkdirTemp("", "own") // short: a unix socket's path is limited
	testkit.NoErr(t, err, "temp dir")
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := Acquire(dir)
	testkit.NoErr(t, err, "acquire")
	t.Cleanup(func() { l.Release() })
	ln, err := l.Listen()
	testkit.NoErr(t, err, "listen")
	s := &Server{MaxBody: 16, ShutdownWait: time.Second,
		MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
				return
			}
			fmt.Fprint(w, "mcp")
		})}
	ctx, cancel := context.WithCancel(testkit.Context(t))
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", Socket(dir))
	}}}

	post := func(body string) int {
		resp, err := client.Post("http://owner/mcp", "application/json", strings.NewReader(body))
		testkit.NoErr(t, err, "post")
		resp.Body.Close()
		return resp.StatusCode
	}
	testkit.Equal(t, post("{}"), http.StatusOK, "a message")
	testkit.Equal(t, post(strings.Repeat("x", 17)), http.StatusRequestEntityTooLarge, "a message over MaxBody")

	actx, detach := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(actx, http.MethodGet, "http://owner/attach", nil)
	testkit.NoErr(t, err, "request")
	resp, err := client.Do(req)
	testkit.NoErr(t, err, "attach")
	testkit.Equal(t, s.Attached(), int64(1), "bridges attached")
	idle := make(chan bool, 1)
	go func() { idle <- s.AwaitIdle(ctx, 50*time.Millisecond) }()
	detach()
	resp.Body.Close()
	testkit.Equal(t, <-idle, true, "idle once the bridge detached")
	testkit.Equal(t, s.Attached(), int64(0), "bridges attached")
	testkit.Equal(t, s.AwaitIdle(ctx, 0), false, "an owner with no idle time never idles out")

	cancel()
	testkit.NoErr(t, <-served, "serve ends with its context")
}

// TestServerEndsCallsAfterShutdownWait: a call still working when the shutdown wait is
// over sees its context end, so that it stops rather than outliving the owner.
func TestServerEndsCallsAfterShutdownWait(t *testing.T) {
	dir, err := os.MkdirTemp("", "own")
	testkit.NoErr(t, err, "temp dir")
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := Acquire(dir)
	testkit.NoErr(t, err, "acquire")
	t.Cleanup(func() { l.Release() })
	ln, err := l.Listen()
	testkit.NoErr(t, err, "listen")
	started, ended := make(chan struct{}), make(chan struct{})
	s := &Server{MaxBody: 1 << 10, ShutdownWait: 10 * time.Millisecond,
		MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			close(started)
			<-r.Context().Done() // a call that works until told to stop
			close(ended)
		})}
	ctx, cancel := context.WithCancel(testkit.Context(t))
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", Socket(dir))
	}}}
	go func() {
		resp, err := client.Post("http://owner/mcp", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	testkit.NoErr(t, <-served, "serve ends with its context")
	<-ended
}
