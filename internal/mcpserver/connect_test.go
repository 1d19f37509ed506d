package mcpserver_test

import (
	"context"
	"testing"
	"time"

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
