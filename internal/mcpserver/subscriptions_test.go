package mcpserver_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// TestSlowSubscriptionDoesNotStallUpdates: a subscribed resource is re-read after each
// applied batch to see whether it changed. While that read hangs (a slow resource, a
// client that does not read its notifications), the projections go on applying, and view
// shows each change.
func TestSlowSubscriptionDoesNotStallUpdates(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	var hang atomic.Bool
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	p.MCP.AddResource(mcp.NewResource("test://slow", "slow"),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			if hang.Load() {
				<-release // ignores its context, as a stuck one would
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "test://slow", Text: "x"}}, nil
		})
	// Subscriptions are of the 2025 protocol.
	c, err := client.NewInProcessClient(p.MCP)
	testkit.NoErr(t, err, "client")
	testkit.NoErr(t, c.Start(testkit.Context(t)), "start client")
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	_, err = c.Initialize(testkit.Context(t), init)
	testkit.NoErr(t, err, "initialize")
	req := mcp.SubscribeRequest{}
	req.Params.URI = "test://slow"
	testkit.NoErr(t, c.Subscribe(testkit.Context(t), req), "subscribe")
	hang.Store(true)

	for _, content := range []string{"first change", "second change", "third change"} {
		testkit.WriteFile(t, root, "Characters/Elara.md", content)
		if _, err := p.Indexer.Reconcile(testkit.Context(t)); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 20*time.Second, func() (bool, string) {
			var dv query.DocumentView
			testkit.Decode(t, p.Call("view", map[string]any{"path": "Characters/Elara.md"}), &dv)
			return dv.Content == content, "view shows " + dv.Content + ", want " + content
		})
	}
}
