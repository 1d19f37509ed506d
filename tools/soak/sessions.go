package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/query"
)

// Connect opens an MCP session over Streamable HTTP.
func Connect(ctx context.Context, url, name string) (*client.Client, error) {
	c, err := client.NewStreamableHttpClient(url)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// call calls a tool with a bound on its time, and returns its text.
func call(ctx context.Context, c *client.Client, tool string, args map[string]any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

// sessionCounts are what the sessions did, summed.
type sessionCounts struct {
	Calls      atomic.Int64
	Errors     atomic.Int64 // transport errors: the query process was being killed, say
	ToolErrors atomic.Int64 // error results (not_found of a file just deleted, …)
	Attached   atomic.Int64
	Detached   atomic.Int64
	Ended      atomic.Int64 // sessions ended by the client (DELETE) and opened again
	Reconnects atomic.Int64 // sessions opened again after a failure

	mu    sync.Mutex
	kinds map[string]int64 // tool error results by "tool: error_type"
}

func (c *sessionCounts) toolError(tool, text string) {
	var f struct {
		Type string `json:"error_type"`
	}
	kind := "unknown"
	if json.Unmarshal([]byte(text), &f) == nil && f.Type != "" {
		kind = f.Type
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kinds == nil {
		c.kinds = map[string]int64{}
	}
	c.kinds[tool+": "+kind]++
}

// paths is the shared list of document paths sessions pick from; the file-system driver
// updates it.
type paths struct {
	mu sync.RWMutex
	s  []string
}

func (p *paths) set(s []string) {
	p.mu.Lock()
	p.s = append(p.s[:0], s...)
	p.mu.Unlock()
}

func (p *paths) pick(r *rand.Rand) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if len(p.s) == 0 {
		return ""
	}
	return p.s[r.IntN(len(p.s))]
}

// sessionKinds weighs what a session does; attach and detach are 6% of the calls.
var sessionKinds = []weighted{
	{"view", 30}, {"tree", 8}, {"search", 16}, {"list", 12}, {"focus", 10}, {"get_summary", 14},
	{"attach", 3}, {"detach", 3}, {"end", 1}, {"status", 3},
}

// session is one MCP client, calling tools until its context ends, attaching and detaching
// documents of its own, and now and then ending its session and opening another.
type session struct {
	id       int
	url      string
	r        *rand.Rand
	paths    *paths
	counts   *sessionCounts
	c        *client.Client
	attached []string
	n        int
}

func (s *session) run(ctx context.Context) {
	defer func() {
		if s.c != nil {
			_ = s.c.Close() // DELETE: the session ends, and its documents with it
		}
	}()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if s.c == nil {
			c, err := Connect(ctx, s.url, fmt.Sprintf("soak-%d", s.id))
			if err != nil {
				sleep(ctx, backoff)
				backoff = min(2*backoff, 2*time.Second)
				continue
			}
			s.c, s.attached, backoff = c, nil, 100*time.Millisecond
		}
		if err := s.do(ctx, draw(s.r, sessionKinds)); err != nil && ctx.Err() == nil {
			s.counts.Errors.Add(1)
			_ = s.c.Close()
			s.c = nil
			s.counts.Reconnects.Add(1)
		}
		sleep(ctx, time.Duration(50+s.r.IntN(400))*time.Millisecond)
	}
}

func (s *session) do(ctx context.Context, kind string) error {
	var args map[string]any
	tool := kind
	switch kind {
	case "end":
		_ = s.c.Close()
		s.c = nil
		s.counts.Ended.Add(1)
		return nil
	case "status":
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		req := mcp.ReadResourceRequest{}
		req.Params.URI = "guide://_status"
		s.counts.Calls.Add(1)
		_, err := s.c.ReadResource(rctx, req)
		return err
	case "view", "get_summary":
		args = map[string]any{"path": s.paths.pick(s.r)}
	case "tree":
		args = map[string]any{"folder": "", "depth": 1 + s.r.IntN(3)}
	case "search":
		args = map[string]any{"query": words[s.r.IntN(len(words))], "scope": []string{"focus", "all"}[s.r.IntN(2)]}
	case "list":
		args = map[string]any{}
	case "focus":
		p := s.paths.pick(s.r)
		folder := ""
		if i := strings.LastIndex(p, "/"); i > 0 {
			folder = p[:i]
		}
		args = map[string]any{"context": folder}
	case "attach":
		s.n++
		name := fmt.Sprintf("soak-%d-%d.md", s.id, s.n)
		args = map[string]any{"filename": name, "content": fmt.Sprintf("# attached %d\n\nsession %d note %d %s\n", s.n, s.id, s.n, words[s.r.IntN(len(words))])}
		s.attached = append(s.attached, name)
		s.counts.Attached.Add(1)
	case "detach":
		if len(s.attached) == 0 {
			return nil
		}
		i := s.r.IntN(len(s.attached))
		args = map[string]any{"filename": s.attached[i]}
		s.attached = append(s.attached[:i], s.attached[i+1:]...)
		s.counts.Detached.Add(1)
	}
	s.counts.Calls.Add(1)
	text, isErr, err := call(ctx, s.c, tool, args)
	if isErr {
		s.counts.ToolErrors.Add(1)
		s.counts.toolError(tool, text)
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// ReadStatus reads guide://_status.
func ReadStatus(ctx context.Context, c *client.Client) (query.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "guide://_status"
	res, err := c.ReadResource(ctx, req)
	if err != nil {
		return query.Status{}, err
	}
	var st query.Status
	for _, ct := range res.Contents {
		if tc, ok := ct.(mcp.TextResourceContents); ok {
			err = json.Unmarshal([]byte(tc.Text), &st)
		}
	}
	return st, err
}
