package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/session"
	"github.com/guide/guide/internal/testkit"
)

// TestSessionsRestoredBeforeProjectionsFollow: a new owner restores a session another
// process issued as soon as it reaches NATS, before its projections follow the stream (its
// search index may take seconds to open): the bridges of a killed owner answer again sooner.
func TestSessionsRestoredBeforeProjectionsFollow(t *testing.T) {
	b := testkit.NATS(t)
	stream := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	before := &session.Registry{Project: "test", Catalog: testkit.Catalog(t, nil), Logger: testkit.Logger()}
	testkit.NoErr(t, before.Connect(testkit.Context(t), stream, nil), "connect")
	const id = "mcp-session-of-a-bridge"
	testkit.NoErr(t, before.Issue(ctx, id), "issue")
	if _, qerr := before.SetFocus(ctx, id, "a"); qerr != nil {
		t.Fatal(qerr)
	}

	sessions := &session.Registry{Project: "test", Catalog: testkit.Catalog(t, nil), Logger: testkit.Logger()}
	srv := &mcpserver.Server{Project: "test", Catalog: sessions.Catalog, Sessions: sessions, Logger: testkit.Logger()}
	srv.ConnectSessions(testkit.Context(t), stream) // no Connect: no runner yet
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c, err := sessions.Restore(rctx, id)
	testkit.NoErr(t, err, "restore")
	testkit.Equal(t, c.Focus, "a", "the restored session's focus")
}

// TestHTTPSessionLimits: over HTTP, one client address may hold MaxClientSessions
// sessions: the next initialize is answered with a JSON-RPC error that says why, until
// a session has been unused for PressureIdle; then the oldest one ends (its id is refused
// from then on) and the new one opens.
func TestHTTPSessionLimits(t *testing.T) {
	stream := testkit.Stream(t, testkit.NATS(t))
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	sessions := &session.Registry{Project: "test", Catalog: testkit.Catalog(t, nil), Logger: testkit.Logger(),
		MaxClientSessions: 2, PressureIdle: time.Minute, Now: func() time.Time { return time.Unix(0, clock.Load()) }}
	srv := &mcpserver.Server{Project: "test", Catalog: sessions.Catalog, Sessions: sessions, Logger: testkit.Logger()}
	m := srv.New()
	srv.ConnectSessions(testkit.Context(t), stream)
	hs := httptest.NewServer(srv.HTTPHandler(m, server.WithEndpointPath("/mcp")))
	t.Cleanup(hs.Close)
	url := hs.URL + "/mcp"
	legacy := testkit.HTTP{ProtocolVersion: "2025-11-25"} // a version with sessions

	first := testkit.HTTPClient(t, url, legacy)
	clock.Add(int64(time.Second))
	second := testkit.HTTPClient(t, url, legacy)
	_, err := testkit.DialHTTP(testkit.Context(t), url, legacy)
	if err == nil || !strings.Contains(err.Error(), "too many MCP sessions") || !strings.Contains(err.Error(), "127.0.0.1 has 2 sessions open") {
		t.Fatalf("a third session of one client: %v, want too many MCP sessions", err)
	}

	clock.Add(int64(2 * time.Minute))
	testkit.Call(t, second, "list", map[string]any{}) // in use again: the first is the oldest idle
	third := testkit.HTTPClient(t, url, legacy)
	testkit.Call(t, third, "list", map[string]any{})
	if _, err := first.CallTool(testkit.Context(t), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "list"}}); err == nil {
		t.Error("the session ended to make room still answers")
	}
	testkit.Call(t, second, "list", map[string]any{})
}
