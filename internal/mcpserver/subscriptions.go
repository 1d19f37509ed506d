package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// DefaultPageSize is how many tools, resources or templates one list call returns.
const DefaultPageSize = 100

// subscriptions remembers which session subscribed to which resource, with a digest of
// what it last saw, and tells it when that changes. A resource's content is derived from
// many documents (a collection, a pattern), so it is re-read after each applied batch and
// compared, rather than mapped from the documents the batch touched.
type subscriptions struct {
	srv *Server
	mcp *server.MCPServer

	mu   sync.Mutex
	subs map[string]map[string][32]byte // session id → URI → digest of the content last seen
	docs int                            // documents after the last batch, to see some come or go
	// Batches applied and not yet looked at: the runner only records them; one goroutine,
	// started when there is work and ending when there is none, reads and notifies, so a
	// slow resource or client never holds back the next batch. Batches that arrive while
	// it works are looked at together, once.
	dirty, deleted, notifying bool
}

// hooks records subscriptions as sessions make and drop them.
// addHooks registers the subscriptions' hooks beside the others of the server.
func (sb *subscriptions) addHooks(h *server.Hooks) {
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if s := server.ClientSessionFromContext(ctx); s != nil {
			sb.add(ctx, s.SessionID(), req.Params.URI)
		}
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if s := server.ClientSessionFromContext(ctx); s != nil {
			sb.mu.Lock()
			delete(sb.subs[s.SessionID()], req.Params.URI)
			sb.mu.Unlock()
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		sb.mu.Lock()
		delete(sb.subs, s.SessionID())
		sb.mu.Unlock()
	})
}

func (sb *subscriptions) add(ctx context.Context, session, uri string) {
	d, _ := sb.digest(ctx, uri)
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.subs == nil {
		sb.subs = map[string]map[string][32]byte{}
	}
	if sb.subs[session] == nil {
		sb.subs[session] = map[string][32]byte{}
	}
	sb.subs[session][uri] = d
}

// digest reads a resource through the MCP server itself, so that the URI is routed to
// its handler exactly as a client's read would be.
func (sb *subscriptions) digest(ctx context.Context, uri string) ([32]byte, error) {
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/read",
		"params": map[string]any{"uri": uri}})
	resp := sb.mcp.HandleMessage(ctx, req)
	b, err := json.Marshal(resp)
	if err != nil {
		return [32]byte{}, fmt.Errorf("read %s: %w", uri, err)
	}
	return sha256.Sum256(b), nil
}

// applied runs on the runner's goroutine after the catalog applies a batch: it records
// that something changed and leaves the reading and the notifying to notify.
func (sb *subscriptions) applied(b events.Batch) {
	changes, deleted := false, false
	for _, e := range b.Events {
		switch e.Op {
		case events.OpDelete:
			changes, deleted = true, true
		case events.OpUpsert, events.OpConfig:
			changes = true
		}
	}
	if !changes {
		return
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.dirty, sb.deleted = true, sb.deleted || deleted
	if !sb.notifying {
		sb.notifying = true
		go sb.notify()
	}
}

// notify looks at what changed until nothing new has, then ends.
func (sb *subscriptions) notify() {
	for {
		sb.mu.Lock()
		if !sb.dirty {
			sb.notifying = false
			sb.mu.Unlock()
			return
		}
		deleted := sb.deleted
		sb.dirty, sb.deleted = false, false
		sb.mu.Unlock()
		sb.changed(deleted)
	}
}

// changed sends list_changed when documents came or went, and resources/updated to each
// session whose subscribed resource now differs.
func (sb *subscriptions) changed(deleted bool) {
	var docs int
	_ = sb.srv.Catalog.Read(func(s *projection.Snapshot) error { docs = s.Len(); return nil })
	sb.mu.Lock()
	listChanged := deleted || docs != sb.docs
	sb.docs = docs
	type sub struct{ session, uri string }
	var todo []sub
	for s, uris := range sb.subs {
		for u := range uris {
			todo = append(todo, sub{s, u})
		}
	}
	sb.mu.Unlock()
	if listChanged {
		sb.mcp.SendNotificationToAllClients(mcp.MethodNotificationResourcesListChanged, nil)
	}
	if len(todo) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	digests := map[string][32]byte{} // one read per URI, whoever subscribed
	for _, t := range todo {
		d, ok := digests[t.uri]
		if !ok {
			var err error
			if d, err = sb.digest(ctx, t.uri); err != nil {
				continue
			}
			digests[t.uri] = d
		}
		sb.mu.Lock()
		last, still := sb.subs[t.session][t.uri]
		if still {
			sb.subs[t.session][t.uri] = d
		}
		sb.mu.Unlock()
		if still && last != d {
			err := sb.mcp.SendNotificationToSpecificClient(t.session, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": t.uri})
			if err != nil {
				sb.srv.Logger.Debug("resource update not delivered", "session", t.session, "uri", t.uri, "err", err)
			}
		}
	}
}

// progress is a tool middleware that tells a client which asked for progress (with a
// progressToken) that its call started and when it is done: the content tools may take a
// while on a large project.
func progress(m *server.MCPServer) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var token mcp.ProgressToken
			if req.Params.Meta != nil {
				token = req.Params.Meta.ProgressToken
			}
			if token == nil {
				return next(ctx, req)
			}
			send := func(p float64, msg string) {
				_ = m.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": token, "progress": p, "total": 1, "message": msg})
			}
			send(0, "started "+req.Params.Name)
			res, err := next(ctx, req)
			send(1, "done")
			return res, err
		}
	}
}
