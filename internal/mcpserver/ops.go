package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

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
