package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/httpserve"
	"github.com/guide/guide/internal/testkit"
)

func tokenFile(t *testing.T, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	testkit.NoErr(t, os.WriteFile(p, []byte(token+"\n"), 0o600), "token file")
	return p
}

// bearerClient connects over HTTP with a bearer token.
func bearerClient(t *testing.T, m *Main, token string) (*client.Client, error) {
	t.Helper()
	c, err := testkit.DialHTTP(testkit.Context(t), "http://"+m.Addr().String()+"/mcp", testkit.HTTP{Token: token})
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	testkit.NoErr(t, err, "GET "+url)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestHTTPOperations: with a token, MCP needs it; /healthz says ready once caught up;
// /metrics reports the documents, tool call latency by tool and errors by type.
func TestHTTPOperations(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	const token = "team-secret"
	m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0", "--token-file", tokenFile(t, token))
	base := "http://" + m.Addr().String()

	if _, err := bearerClient(t, m, "wrong"); err == nil {
		t.Fatal("initialize succeeded with a wrong token")
	}
	c, err := bearerClient(t, m, token)
	testkit.NoErr(t, err, "connect with the token")
	st := testkit.WaitCaughtUp(t, c)

	code, body := get(t, base+"/healthz", "")
	testkit.Equal(t, code, 200, "healthz once caught up: "+body)
	if !strings.Contains(body, `"ready":true`) || !strings.Contains(body, `"lag":0`) {
		t.Fatalf("healthz body %s", body)
	}

	testkit.Call(t, c, "view", map[string]any{"path": ""})
	testkit.Call(t, c, "view", map[string]any{"path": "README.md"})
	testkit.DecodeFailure(t, testkit.Call(t, c, "view", map[string]any{"path": "../etc/passwd"}))
	testkit.Call(t, c, "tree", map[string]any{"folder": "", "depth": 2})

	code, _ = get(t, base+"/metrics", "")
	testkit.Equal(t, code, 401, "metrics without the token")
	code, body = get(t, base+"/metrics", token)
	testkit.Equal(t, code, 200, "metrics")
	for _, want := range []string{
		fmt.Sprintf("guide_documents %d\n", st.Documents),
		fmt.Sprintf("guide_applied_sequence %d\n", st.AppliedSeq),
		"guide_lag_events 0\n",
		"guide_ready 1\n",
		`guide_tool_call_duration_seconds_count{tool="view"} 3` + "\n",
		`guide_tool_call_duration_seconds_count{tool="tree"} 1` + "\n",
		`guide_tool_errors_total{tool="view",type="invalid_path"} 1` + "\n",
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestHTTPSessionsIsolated: each client has its own session; ending one leaves the other
// working, and a session id the server did not issue is refused.
func TestHTTPSessionsIsolated(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0")
	// Sessions belong to the 2025 protocol; 2026-07-28 clients are sessionless.
	a, b := sessionClient(t, m), sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)
	ida, idb := a.GetSessionId(), b.GetSessionId()
	if ida == "" || ida == idb {
		t.Fatalf("session ids %q and %q", ida, idb)
	}
	testkit.NoErr(t, a.Close(), "close a") // sends DELETE: ends session a
	testkit.RequireMatchesDisk(t, b, root)

	req, _ := http.NewRequest("POST", "http://"+m.Addr().String()+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "forged-"+idb)
	res, err := http.DefaultClient.Do(req)
	testkit.NoErr(t, err, "forged session")
	res.Body.Close()
	if res.StatusCode < 400 {
		t.Fatalf("a forged session id was served: %d", res.StatusCode)
	}
}

// TestHTTPRefusesNonLoopbackWithoutToken: listening beyond loopback needs a token.
func TestHTTPRefusesNonLoopbackWithoutToken(t *testing.T) {
	t.Setenv(tokenEnv, "")
	m := &Main{Logger: testkit.Logger(), Stdin: eternal{}}
	testkit.NoErr(t, m.ParseFlags([]string{"--root", testkit.CopyTree(t, "../../testdata/sample"),
		"--data", t.TempDir(), "--http", "0.0.0.0:0"}), "flags")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := m.Run(ctx)
	cancel()
	m.Close()
	if !errors.Is(err, httpserve.ErrNoToken) {
		t.Fatalf("got %v, want ErrNoToken", err)
	}
}

// TestHTTPTokenFromEnvironment: $GUIDE_TOKEN protects a server bound beyond loopback.
func TestHTTPTokenFromEnvironment(t *testing.T) {
	t.Setenv(tokenEnv, "from-env")
	m := inProcess(t, "--root", testkit.CopyTree(t, "../../testdata/sample"), "--data", t.TempDir(), "--http", "0.0.0.0:0")
	m.addr = loopbackOf(m.Addr().String())
	if _, err := bearerClient(t, m, "nope"); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	_, err := bearerClient(t, m, "from-env")
	testkit.NoErr(t, err, "the token from the environment")
}

type addrString string

func (a addrString) Network() string { return "tcp" }
func (a addrString) String() string  { return string(a) }

// loopbackOf turns a wildcard listen address into one a client can dial.
func loopbackOf(addr string) addrString {
	i := strings.LastIndex(addr, ":")
	return addrString("127.0.0.1" + addr[i:])
}

// TestHTTPAnswersWhole: a call's JSON answer leaves in one piece with its length, not in
// chunks; a call that sends notifications before its result still streams them as events.
func TestHTTPAnswersWhole(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	testkit.WriteFile(t, root, "Long.md", "# Long\n\n"+strings.Repeat("The dragon sleeps under the mountain. ", 400))
	m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0")
	testkit.WaitCaughtUp(t, sessionClient(t, m))
	session := ""
	post := func(body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", "http://"+m.Addr().String()+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		res, err := http.DefaultClient.Do(req)
		testkit.NoErr(t, err, "POST")
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		testkit.NoErr(t, err, "read the answer")
		return res, string(b)
	}

	res, _ := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if session = res.Header.Get("Mcp-Session-Id"); session == "" {
		t.Fatal("no session")
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	res, body := post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"view","arguments":{"path":"Long.md"}}}`)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("answer of type %q: %.200s", ct, body)
	}
	if len(body) < 8<<10 || !strings.Contains(body, "dragon sleeps") {
		t.Fatalf("answer of %d bytes: %.200s", len(body), body)
	}
	if res.ContentLength != int64(len(body)) || len(res.TransferEncoding) > 0 {
		t.Errorf("answer of %d bytes sent with length %d and transfer encoding %v, not whole", len(body), res.ContentLength, res.TransferEncoding)
	}

	res, body = post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"view","arguments":{"path":"Long.md"},"_meta":{"progressToken":"p8"}}}`)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("a call with progress answered with type %q, not events", ct)
	}
	if !strings.Contains(body, "notifications/progress") || !strings.Contains(body, `"id":8`) || !strings.Contains(body, "dragon sleeps") {
		t.Errorf("events lack the progress or the result: %.300s", body)
	}
}
