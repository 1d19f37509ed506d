package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/testkit"
)

// notes collects the notifications a client receives.
type notes struct {
	mu  sync.Mutex
	got []mcp.JSONRPCNotification
}

func (n *notes) add(x mcp.JSONRPCNotification) {
	n.mu.Lock()
	n.got = append(n.got, x)
	n.mu.Unlock()
}

// wait waits for a notification of method (with uri, when given) and forgets those seen.
func (n *notes) wait(t *testing.T, method, uri string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		n.mu.Lock()
		defer n.mu.Unlock()
		for i, x := range n.got {
			if x.Method == method && (uri == "" || x.Params.AdditionalFields["uri"] == uri) {
				n.got = n.got[i+1:]
				return true, ""
			}
		}
		return false, fmt.Sprintf("no %s %s notification", method, uri)
	})
}

func (n *notes) count(method, uri string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, x := range n.got {
		if x.Method == method && (uri == "" || x.Params.AdditionalFields["uri"] == uri) {
			c++
		}
	}
	return c
}

// listeningClient connects over HTTP with a session and a standing event stream.
func listeningClient(t *testing.T, m *Main) (*client.Client, *notes) {
	t.Helper()
	n := &notes{}
	c := testkit.HTTPClient(t, "http://"+m.Addr().String()+"/mcp",
		testkit.HTTP{ProtocolVersion: mcp.ProtocolVersion20251125, Listen: true, OnNotification: n.add})
	return c, n
}

// TestResourceSubscriptions: a session subscribed to guide://guidelines hears
// resources/updated when one of its documents changes, and not after unsubscribing; every
// session hears list_changed when a document appears or goes; a change to a document
// outside the collection sends no update.
func TestResourceSubscriptions(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/content")
	m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0")
	c, n := listeningClient(t, m)
	testkit.WaitCaughtUp(t, c)
	const uri = "guide://guidelines"
	req := mcp.SubscribeRequest{}
	req.Params.URI = uri
	testkit.NoErr(t, c.Subscribe(testkit.Context(t), req), "subscribe")

	testkit.WriteFile(t, root, "notes/todo.md", "changed outside the collection")
	testkit.WriteFile(t, root, "notes/new.md", "a new document")
	n.wait(t, "notifications/resources/list_changed", "")
	if k := n.count("notifications/resources/updated", uri); k != 0 {
		t.Fatalf("%d updates for a change outside %s", k, uri)
	}

	testkit.WriteFile(t, root, "guidelines/style.md", "# Style\n\nrewritten")
	n.wait(t, "notifications/resources/updated", uri)

	testkit.NoErr(t, os.Remove(filepath.Join(root, "guidelines/code-review.md")), "remove")
	// Of one batch, list_changed goes out before the updates.
	n.wait(t, "notifications/resources/list_changed", "")
	n.wait(t, "notifications/resources/updated", uri)

	ureq := mcp.UnsubscribeRequest{}
	ureq.Params.URI = uri
	testkit.NoErr(t, c.Unsubscribe(testkit.Context(t), ureq), "unsubscribe")
	testkit.WriteFile(t, root, "guidelines/style.md", "# Style\n\nrewritten again")
	testkit.WriteFile(t, root, "guidelines/later.md", "appears after the unsubscribe")
	n.wait(t, "notifications/resources/list_changed", "") // the later change has been applied
	if k := n.count("notifications/resources/updated", uri); k != 0 {
		t.Fatalf("%d updates after unsubscribing", k)
	}
}

// TestLoggingPingPaginationProgress: logging/setLevel and ping answer; list results come
// in pages; a call with a progress token hears its progress.
func TestLoggingPingPaginationProgress(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/content")
	m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0", "--page-size", "2")
	c, n := listeningClient(t, m)
	testkit.WaitCaughtUp(t, c)

	lreq := mcp.SetLevelRequest{}
	lreq.Params.Level = mcp.LoggingLevelWarning
	testkit.NoErr(t, c.SetLevel(testkit.Context(t), lreq), "logging/setLevel")
	testkit.NoErr(t, c.Ping(testkit.Context(t)), "ping")

	page, err := c.ListToolsByPage(testkit.Context(t), mcp.ListToolsRequest{})
	testkit.NoErr(t, err, "tools/list")
	testkit.Equal(t, len(page.Tools), 2, "first page")
	if page.NextCursor == "" {
		t.Fatal("no nextCursor on a full page")
	}
	all, err := c.ListTools(testkit.Context(t), mcp.ListToolsRequest{})
	testkit.NoErr(t, err, "all tools")
	if len(all.Tools) <= 2 {
		t.Fatalf("ListTools followed no cursor: %d tools", len(all.Tools))
	}

	req := mcp.CallToolRequest{}
	req.Params.Name = "get_content"
	req.Params.Arguments = map[string]any{"category_or_collection": "dev"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "p-1"}
	res, err := c.CallTool(testkit.Context(t), req)
	testkit.NoErr(t, err, "get_content")
	if res.IsError {
		t.Fatalf("get_content: %s", testkit.Text(t, res))
	}
	n.wait(t, "notifications/progress", "")
}
