package mcpserver

// Read-your-writes: where this process watches the files itself, a call first waits for
// a sync (Server.Sync: a cookie through the watcher, see package cookie), then for the
// projections it reads to apply what the sync says covers every change saved before the
// call. Past SyncWait it answers anyway, and says it is partial.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/query"
)

// DefaultSyncWait bounds how long a call waits to see every change saved before it.
const DefaultSyncWait = time.Second

// SyncPartial is the "partial" field an answer gets when it may miss a change saved just
// before the call: the wait for the watcher and the projections ran out (SyncWait).
type SyncPartial struct {
	Note string `json:"note"`
}

// syncTools answers each tool call after a sync, when the server has one.
func (s *Server) syncTools(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if s.Sync == nil {
			return next(ctx, req)
		}
		// search reads the full-text index too; every other tool reads the catalog only.
		p := s.syncUp(ctx, strings.TrimPrefix(req.Params.Name, s.ToolPrefix) == "search")
		res, err := next(ctx, req)
		if p != nil && err == nil && res != nil {
			markTool(res, p)
		}
		return res, err
	}
}

// syncResources answers each resource read after a sync, when the server has one.
func (s *Server) syncResources(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		if s.Sync == nil {
			return next(ctx, req)
		}
		p := s.syncUp(ctx, false)
		contents, err := next(ctx, req)
		if p != nil && err == nil {
			markResource(contents, p)
		}
		return contents, err
	}
}

// syncUp waits until the projections a call reads (every one, or the catalog) hold every
// change saved to the root before it, for SyncWait at most; it returns nil when they do,
// else what the answer must say.
func (s *Server) syncUp(ctx context.Context, every bool) *SyncPartial {
	wait := s.SyncWait
	if wait <= 0 {
		wait = DefaultSyncWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	partial := func(why string) *SyncPartial {
		return &SyncPartial{Note: "partial: " + why + "; changes saved just before this call may be missing, call again in a moment"}
	}
	seq, err := s.Sync(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return partial(fmt.Sprintf("the file watcher had not delivered every change within %s", wait))
		}
		return partial(err.Error())
	}
	_, runner := s.connection()
	if runner == nil {
		return partial("not following the stream yet")
	}
	select {
	case <-runner.CaughtUp():
	case <-ctx.Done():
		return partial("catching up with the stream")
	}
	applied := s.Freshness.WaitCatalog
	if every {
		applied = s.Freshness.WaitApplied
	}
	if !applied(ctx, seq) {
		return partial(fmt.Sprintf("the index had not applied every change within %s", wait))
	}
	return nil
}

// markTool adds "partial" to a result's JSON, unless it says it is partial already (a
// search behind the catalog).
func markTool(res *mcp.CallToolResult, p *SyncPartial) {
	for i, c := range res.Content {
		tc, ok := c.(mcp.TextContent)
		if !ok {
			continue
		}
		if text, ok := withPartial(tc.Text, p); ok {
			tc.Text = text
			res.Content[i] = tc
		}
	}
}

// withPartial returns the JSON object text with a "partial" field added at its end.
func withPartial(text string, p *SyncPartial) (string, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &fields) != nil {
		return "", false // not an object: a multipart answer, say
	}
	if _, ok := fields["partial"]; ok {
		return "", false
	}
	b, err := query.EncodeJSON(p)
	if err != nil {
		return "", false
	}
	body := strings.TrimRight(text, " \t\r\n")
	body = strings.TrimSuffix(body, "}")
	sep := ","
	if strings.HasSuffix(strings.TrimRight(body, " \t\r\n"), "{") {
		sep = ""
	}
	return body + sep + `"partial":` + strings.TrimRight(string(b), "\n") + "}", true
}

// markResource says in each content's _meta that it may miss a change.
func markResource(contents []mcp.ResourceContents, p *SyncPartial) {
	for i, c := range contents {
		switch rc := c.(type) {
		case mcp.TextResourceContents:
			rc.Meta = withMeta(rc.Meta, p)
			contents[i] = rc
		case mcp.BlobResourceContents:
			rc.Meta = withMeta(rc.Meta, p)
			contents[i] = rc
		case *mcp.TextResourceContents:
			rc.Meta = withMeta(rc.Meta, p)
		case *mcp.BlobResourceContents:
			rc.Meta = withMeta(rc.Meta, p)
		}
	}
}

func withMeta(meta map[string]any, p *SyncPartial) map[string]any {
	out := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out["partial"] = p
	return out
}
