package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/testkit"
)

// TestSyncPastItsBoundIsPartial: when the sync does not finish within SyncWait (a watcher
// that never delivers the cookie), every tool and resource still answers, with what the
// projections hold, and says it is partial: a tool in its JSON's "partial" field (beside
// an error's fields too), a resource in its _meta. A failed sync (the watcher stopped)
// answers at once, partial, saying why.
func TestSyncPastItsBoundIsPartial(t *testing.T) {
	var sync func(context.Context) (uint64, error)
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "", func(s *mcpserver.Server) {
		s.SyncWait = 50 * time.Millisecond
		s.Sync = func(ctx context.Context) (uint64, error) { return sync(ctx) }
	})
	sync = func(context.Context) (uint64, error) { return 0, nil }
	p.Reconcile()
	testkit.WaitCaughtUp(t, p.Client)

	partialOf := func(text string) string {
		var r struct {
			Partial *mcpserver.SyncPartial `json:"partial"`
		}
		testkit.NoErr(t, json.Unmarshal([]byte(text), &r), "decode "+text)
		if r.Partial == nil {
			return ""
		}
		return r.Partial.Note
	}
	for name, never := range map[string]func(context.Context) (uint64, error){
		"ErrNeverDelivered": func(ctx context.Context) (uint64, error) { <-ctx.Done(); return 0, ctx.Err() },
		"ErrWatcherStopped": func(context.Context) (uint64, error) { return 0, errors.New("the watcher is not running") },
	} {
		t.Run(name, func(t *testing.T) {
			sync = never
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"view", map[string]any{"path": "Characters/Elara.md"}},
				{"tree", map[string]any{"folder": ""}},
				{"search", map[string]any{"query": "Elara", "scope": "all"}},
				{"view", map[string]any{"path": "no/such.md"}},
			} {
				res := p.Call(call.tool, call.args)
				if note := partialOf(testkit.Text(t, res)); note == "" {
					t.Errorf("%s(%v) past the bound: no partial note in %s", call.tool, call.args, testkit.Text(t, res))
				}
			}
			var elara struct {
				Content string `json:"content"`
			}
			testkit.Decode(t, p.Call("view", map[string]any{"path": "Characters/Elara.md"}), &elara)
			if elara.Content == "" {
				t.Error("view past the bound answers without the document's content")
			}
			req := mcp.ReadResourceRequest{}
			req.Params.URI = mcpserver.StatusURI
			res, err := p.Client.ReadResource(testkit.Context(t), req)
			testkit.NoErr(t, err, "read the status past the bound")
			tc, ok := res.Contents[0].(mcp.TextResourceContents)
			if !ok || tc.Meta["partial"] == nil {
				t.Errorf("the status past the bound has no partial note in _meta: %+v", res.Contents[0])
			}
		})
	}
	sync = func(context.Context) (uint64, error) { return 0, nil }
	if note := partialOf(testkit.Text(t, p.Call("view", map[string]any{"path": "Characters/Elara.md"}))); note != "" {
		t.Errorf("a synced view says it is partial: %s", note)
	}
}
