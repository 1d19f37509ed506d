package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/session"
	"github.com/guide/guide/internal/testkit"
)

// rawMCP sends one JSON-RPC message to an MCP endpoint with a session id, and returns
// the status and body.
func rawMCP(t *testing.T, method, url, id, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	testkit.NoErr(t, err, "request")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	req.Header.Set("MCP-Protocol-Version", mcp.ProtocolVersion20251125)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	ctx, cancel := context.WithTimeout(testkit.Context(t), 5*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 300))
	return res.StatusCode, string(b)
}

const listCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list","arguments":{}}}`

// TestSessionIDsMustBeIssued: an id the server never issued, or one whose session ended,
// is answered 404 on POST, GET and DELETE, as the Streamable HTTP transport specifies;
// an ended session no longer works.
func TestSessionIDsMustBeIssued(t *testing.T) {
	m, _ := contextsServer(t)
	url := "http://" + m.Addr().String() + "/mcp"
	forged := session.IDPrefix + "0b6d3a4e-9c1f-4f5e-8a7d-2b1c3d4e5f60"
	for _, method := range []string{"POST", "GET", "DELETE"} {
		body := ""
		if method == "POST" {
			body = listCall
		}
		code, text := rawMCP(t, method, url, forged, body)
		testkit.Equal(t, code, http.StatusNotFound, method+" with an id never issued: "+text)
	}

	a := sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)
	id := a.GetSessionId()
	code, text := rawMCP(t, "POST", url, id, listCall)
	testkit.Equal(t, code, http.StatusOK, "the issued id works: "+text)
	code, text = rawMCP(t, "DELETE", url, id, "")
	testkit.Equal(t, code, http.StatusOK, "DELETE of the issued id: "+text)
	for _, method := range []string{"POST", "GET", "DELETE"} {
		body := ""
		if method == "POST" {
			body = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"attach","arguments":{"filename":"x.md","content":"x"}}}`
		}
		code, text := rawMCP(t, method, url, id, body)
		testkit.Equal(t, code, http.StatusNotFound, method+" with an ended id: "+text)
	}
}

// resume is an mcp-go client that carries on an existing session id, with no initialize.
func resume(t *testing.T, url, id string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithSession(id))
	testkit.NoErr(t, err, "transport")
	tr.SetProtocolVersion(mcp.ProtocolVersion20251125)
	c := client.NewClient(tr, client.WithSession())
	testkit.NoErr(t, c.Start(testkit.Context(t)), "start")
	return c
}

// startStop runs a query process that the test stops when it wants.
func startStop(t *testing.T, args ...string) (*Main, func()) {
	t.Helper()
	m := &Main{Logger: testkit.Logger(), Stdin: eternal{}, Stdout: os.Stderr}
	testkit.NoErr(t, m.ParseFlags(args), "flags")
	end := run(t, m)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			testkit.NoErr(t, end(), "close")
		}
	}
	t.Cleanup(stop)
	return m, stop
}

// checkRestored asserts that a session resumed elsewhere has its focus, its history and
// its attached document.
func checkRestored(t *testing.T, c *client.Client) {
	t.Helper()
	l := list(t, c, nil)
	testkit.Equal(t, l.Focus, "Acme/Support", "focus restored")
	found := false
	for _, d := range l.Documents {
		found = found || (d.Path == "session:notes.md" && d.Status == "ready")
	}
	if !found {
		t.Errorf("attached document not listed: %v", l.lines())
	}
	f := focus(t, c, "Acme")
	testkit.Equal(t, f.History, []string{"Acme/Support", "Acme/Sales"}, "history restored")
}

func prepareSession(t *testing.T, c *client.Client) {
	t.Helper()
	testkit.WaitCaughtUp(t, c)
	focus(t, c, "Acme/Sales")
	focus(t, c, "Acme/Support")
	r := attach(t, c, "notes.md", "# Notes\n\nKept across processes.\n")
	testkit.Equal(t, r.Status, "ready", "attach")
}

// TestSessionSurvivesRestart: the query process restarted on its data directory accepts
// a session id it issued before, with the session's focus, history and documents.
func TestSessionSurvivesRestart(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/contexts")
	data := t.TempDir()
	m1, stop := startStop(t, "--root", root, "--data", data, "--http", "127.0.0.1:0")
	a := sessionClient(t, m1)
	prepareSession(t, a)
	id := a.GetSessionId()
	stop()

	m2, _ := startStop(t, "--root", root, "--data", data, "--http", "127.0.0.1:0")
	url := "http://" + m2.Addr().String() + "/mcp"
	c := resume(t, url, id)
	testkit.WaitCaughtUp(t, c)
	checkRestored(t, c)
	code, text := rawMCP(t, "POST", url, session.IDPrefix+"never-issued", listCall)
	testkit.Equal(t, code, http.StatusNotFound, "an id never issued, after the restart: "+text)
}

// TestSessionMovesBetweenReplicas: a session issued by one replica is accepted by another
// with its focus, history and documents; ended on the second, the first refuses it too.
func TestSessionMovesBetweenReplicas(t *testing.T) {
	nats := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/contexts")
	reconcileTree(t, nats.ClientURL(), root)
	args := []string{"--nats", nats.ClientURL(), "--project", "sample", "--http", "127.0.0.1:0"}
	r1 := inProcess(t, append(args, "--data", t.TempDir())...)
	r2 := inProcess(t, append(args, "--data", t.TempDir())...)
	a := sessionClient(t, r1)
	prepareSession(t, a)
	id := a.GetSessionId()

	url2 := "http://" + r2.Addr().String() + "/mcp"
	c := resume(t, url2, id)
	testkit.WaitCaughtUp(t, c)
	checkRestored(t, c)

	code, text := rawMCP(t, "DELETE", url2, id, "")
	testkit.Equal(t, code, http.StatusOK, "DELETE on the second replica: "+text)
	token := session.Token(id)
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		docs := sessionDocs(t, r1, token)
		return len(docs) == 0, fmt.Sprintf("documents of the ended session: %v", docs)
	})
	url1 := "http://" + r1.Addr().String() + "/mcp"
	code, text = rawMCP(t, "POST", url1, id, listCall)
	testkit.Equal(t, code, http.StatusNotFound, "the first replica, after the DELETE on the second: "+text)
}

// TestStdioMessageBound: a stdio message over --max-body is answered with a parse error
// and the process reads on; the next message is served.
func TestStdioMessageBound(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	// guide-mcp --root on stdio is a bridge to the project's owner: the built binary, which
	// starts the owner daemon.
	cmd := exec.Command(filepath.Join(binDir, "guide-mcp"), "--root", root, "--data", data, "--max-body", "4096")
	inW, err := cmd.StdinPipe()
	testkit.NoErr(t, err, "stdin")
	outR, err := cmd.StdoutPipe()
	testkit.NoErr(t, err, "stdout")
	testkit.NoErr(t, cmd.Start(), "start guide-mcp")
	t.Cleanup(func() { _ = inW.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	oneOwner(t, data)

	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		huge := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 8<<20) + `"}}` + "\n"
		_, _ = io.WriteString(inW, huge)
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	var lines []string
	for len(lines) < 3 && sc.Scan() {
		if !strings.Contains(sc.Text(), `"method":"notifications/`) { // the owner's, while it indexes
			lines = append(lines, sc.Text())
		}
	}
	lines = lines[1:] // the answer to initialize
	if len(lines) < 2 {
		t.Fatalf("answers: %q (%v)", lines, sc.Err())
	}
	if !strings.Contains(lines[0], `"code":-32700`) {
		t.Errorf("first answer %s: want a parse error", lines[0])
	}
	if !strings.Contains(lines[1], `"id":2`) || !strings.Contains(lines[1], `"result"`) {
		t.Errorf("second answer %.200q: want the ping served (first %.200q)", lines[1], lines[0])
	}
}
