package mcpserver

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/query"
)

// ChangesURI is the resource of the project's recent changes: what changes answers with
// no arguments (the last day, no diffs). A client that subscribes to it hears of every
// change.
const ChangesURI = "guide://_changes"

func (s *Server) addChanges(m *server.MCPServer) {
	m.AddTool(mcp.NewTool("changes",
		mcp.WithDescription("List what changed in the project, or below a folder, since a cursor a previous changes answer "+
			"gave (or since a time): each document added, modified, deleted or moved, when, and its size before and after. "+
			"Keep the answer's cursor and pass it next time to hear only what changed after it; since \"now\" just returns "+
			"a cursor. With diff true, each modified text document comes with a unified diff against its text at the cursor. "+
			"A long list comes in pages: complete is false and cursor continues it. Documents attached to sessions are never listed."),
		mcp.WithString("cursor", mcp.Description("The cursor of a previous changes answer, as it is")),
		mcp.WithString("since", mcp.Description("Instead of a cursor: a time (RFC 3339, e.g. \"2026-03-01T09:00:00Z\"), a duration before now (e.g. \"90m\", \"2h\"), or \"now\". Without cursor and since: the last 24 hours"),
			mcp.MaxLength(64)),
		mcp.WithString("folder", mcp.Description("Only changes below this folder, relative to the project root; \"\" for the whole project. Example: \"Worldbuilding\""), mcp.DefaultString("")),
		mcp.WithBoolean("diff", mcp.Description("Include a unified diff of each modified text document"), mcp.DefaultBool(false)),
		mcp.WithInteger("limit", mcp.Description(fmt.Sprintf("Documents per answer, 1 to %d", query.MaxChangesLimit)),
			mcp.Min(1), mcp.Max(query.MaxChangesLimit), mcp.DefaultNumber(query.DefaultChangesLimit)),
		readOnly(),
	), s.changes)
	m.AddResource(mcp.NewResource(ChangesURI, "changes",
		mcp.WithResourceDescription("What changed in the project in the last 24 hours (the changes tool without arguments), with a cursor for the changes tool."),
		mcp.WithMIMEType("application/json"),
	), s.readChanges)
}

// Changes answers changes from the stream's history, the events after the cursor read
// from the catalog's change log: the one function behind the tool, the resource and the
// web page's recent changes.
func (s *Server) Changes(ctx context.Context, a query.ChangesArgs) (*query.ChangesView, *query.Error) {
	a.Project = s.Project
	if s.Now != nil && a.Now.IsZero() {
		a.Now = s.Now()
	}
	var hist query.History
	if stream, _ := s.connection(); stream != nil {
		hist = stream
		if s.Catalog != nil {
			hist = query.WithLog(stream, s.Catalog) // the events after the cursor, read from the catalog's change log
		}
	}
	return query.Changes(ctx, hist, a, s.Limits)
}

func (s *Server) changes(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	v, qerr := s.Changes(ctx, query.ChangesArgs{
		Cursor: req.GetString("cursor", ""),
		Since:  req.GetString("since", ""),
		Folder: req.GetString("folder", ""),
		Diff:   req.GetBool("diff", false),
		Limit:  req.GetInt("limit", query.DefaultChangesLimit),
	})
	if qerr != nil {
		return toolError(qerr), nil
	}
	return toolResult(v)
}

func (s *Server) readChanges(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	v, qerr := s.Changes(ctx, query.ChangesArgs{})
	if qerr != nil {
		s.logCause(ctx, ChangesURI, qerr)
		return nil, fmt.Errorf("%s", qerr.Message)
	}
	b, err := query.EncodeJSONIndent(v, "  ")
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
}
