package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/query"
)

// Health is what /healthz shows: the status, whether the process takes traffic, and why not.
type Health struct {
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
	query.Status
}

// Health judges the status: a query process is ready once it has caught up with the
// stream, applied a complete scan, can read the stream, and lags by at most maxLag events.
func (s *Server) Health(ctx context.Context, maxLag uint64) Health {
	st, following := s.freshness(ctx)
	h := Health{Ready: true, Status: st}
	_, runner := s.connection()
	switch {
	case runner == nil:
		h.Ready, h.Reason = false, "not connected to NATS yet"
	case !following && st.StreamError == "":
		h.Ready, h.Reason = false, "catching up with the stream"
	case !st.InitialScanDone:
		h.Ready, h.Reason = false, "no complete scan of the project yet"
	case st.StreamError != "":
		h.Ready, h.Reason = false, "cannot read the stream: "+st.StreamError
	case st.Lag > maxLag:
		h.Ready, h.Reason = false, "behind the stream"
	}
	return h
}

// ToolObserver is a tool middleware that reports each call's tool, duration and error
// type ("" on success) to observe: for metrics and logs.
func ToolObserver(observe func(tool string, d time.Duration, errType string)) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			start := time.Now()
			res, err := next(ctx, req)
			observe(req.Params.Name, time.Since(start), errorType(res, err))
			return res, err
		}
	}
}

// errorType is the error type a client sees in a result, "internal" for a Go error.
func errorType(res *mcp.CallToolResult, err error) string {
	switch {
	case err != nil:
		return "internal"
	case res == nil || !res.IsError:
		return ""
	}
	if f, ok := res.StructuredContent.(failure); ok && f.Error != nil {
		return string(f.Type)
	}
	// Errors not built by toolError (argument validation by the SDK): read the text.
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			var f struct {
				Type string `json:"error_type"`
			}
			if json.Unmarshal([]byte(tc.Text), &f) == nil && f.Type != "" {
				return f.Type
			}
		}
	}
	return "invalid_argument"
}
