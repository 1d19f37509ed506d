package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/query"
)

// failure is the Result pattern's failure object.
type failure struct {
	Success bool `json:"success"`
	*query.Error
}

// toolError is a tool's failure result. An internal failure's cause is not in it: the
// logInternal middleware gives it to the operator's log.
func toolError(e *query.Error) *mcp.CallToolResult {
	f := failure{Success: false, Error: e}
	b, _ := query.EncodeJSON(f)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(b))},
		StructuredContent: f,
		IsError:           true,
	}
}

// logInternal logs the cause of every internal failure a tool returns, which the client's
// result leaves out: the one place tools report to the operator.
func (s *Server) logInternal(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := next(ctx, req)
		if res != nil && res.IsError {
			if f, ok := res.StructuredContent.(failure); ok {
				s.logCause(ctx, req.Params.Name, f.Error)
			}
		}
		return res, err
	}
}

// logCause logs an internal failure's cause; errors of the request have none.
func (s *Server) logCause(ctx context.Context, call string, e *query.Error) {
	if e == nil || e.Cause == nil {
		return
	}
	s.Logger.ErrorContext(ctx, "internal failure", "call", call, "error_type", string(e.Type), "error", e.Message,
		"cause", e.Cause)
}
