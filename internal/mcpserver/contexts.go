package mcpserver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
)

// PromptName is the MCP prompt that carries guide's centralized system prompt.
const PromptName = "guide"

// sessionID is the MCP session of a request, "" when the transport has none (a
// sessionless Streamable HTTP request of protocol 2026-07-28).
func sessionID(ctx context.Context) string {
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return cs.SessionID()
	}
	return ""
}

// sessionHooks releases a session when its transport forgets it: a session that lives
// only in this process (stdio, in process) ends with its documents; an issued one (HTTP)
// lives on in the session store until its client ends it or it idles past the TTL.
func (s *Server) sessionHooks() *server.Hooks {
	h := &server.Hooks{}
	h.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		// The request's context may be ending with the connection: the cleanup must not.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s.Sessions.Release(ctx, cs.SessionID())
	})
	return h
}

func (s *Server) ensureSessions() {
	if s.Sessions != nil {
		return
	}
	s.Sessions = &session.Registry{Project: s.Project, Stream: s.Stream, Catalog: s.Catalog, Logger: s.Logger,
		Freshness: s.Freshness}
}

// pending reads what is on its way to the projections: the events the stream holds above
// what every projection applied, and the session's uploads in flight.
func (s *Server) pending(ctx context.Context, id string) query.Pending {
	return s.Sessions.Pending(ctx, id)
}

func (s *Server) addContexts(m *server.MCPServer) {
	m.AddTool(mcp.NewTool("focus",
		mcp.WithDescription("Set this conversation's focus context: a folder of the project (\"\" is the root). "+
			"The previous focus moves into the history of contexts. The focus decides which documents are available: "+
			"the documents in the folder and below it, plus those directly in each folder above it; session documents always. "+
			"Returns the focus, the history (most recent first) and counts of available documents by origin."),
		mcp.WithString("context", mcp.Description("Folder to focus on, relative to the project root; \"\" for the root. Example: \"Plot/Outlines\""), mcp.DefaultString("")),
		sessionState(false),
	), s.focus)
	m.AddTool(mcp.NewTool("list",
		mcp.WithDescription("List the documents available in the focus context plus the documents attached to this session, "+
			"each with context_type (session, focus, ancestor, descendant; historical or other in a widened scope), context_id "+
			"(its folder, or \"session\"), path, filename, status (uploading, processing, ready, failed) and summary_available. "+
			"Start here. Pass folder, or scope \"all\", to list outside the focus: those entries have in_focus false."),
		mcp.WithString("context_type", mcp.Description("Only documents of this origin"),
			mcp.Enum("session", "focus", "ancestor", "descendant", "historical", "other")),
		mcp.WithString("status", mcp.Description("Only documents with this status"), mcp.Enum("uploading", "processing", "ready", "failed")),
		mcp.WithString("folder", mcp.Description("List every document below this folder instead of the focus set (no session documents)")),
		mcp.WithString("scope", mcp.Description("\"focus\" (default): the focus set and session documents; \"all\": every document of the project"), mcp.Enum("focus", "all")),
		mcp.WithInteger("offset", mcp.Description("Skip this many documents, from a previous response's next_offset"), mcp.Min(0)),
		mcp.WithInteger("limit", mcp.Description("Documents per page, 1 to 500 (default 100)"), mcp.Min(1), mcp.Max(query.MaxListLimit)),
		readOnly(),
	), s.list)
	m.AddTool(mcp.NewTool("get_summary",
		mcp.WithDescription("A short summary of a ready document: its title, its outline of headings and its first paragraph. "+
			"Refused with not_ready until the document is ready; use analyze for a document that is not."),
		mcp.WithString("path", mcp.Required(), mcp.Description("Path of a document, or session:<filename> for a session document")),
		readOnly(),
	), s.getSummary)
	m.AddTool(mcp.NewTool("analyze",
		mcp.WithDescription("Analyze a document even before it is indexed: reads its latest version from the event stream and "+
			"returns its outline of headings, word count and language (ISO 639-1, \"und\" when unknown). "+
			"Prefer it for documents that are uploading or processing."),
		mcp.WithString("path", mcp.Required(), mcp.Description("Path of a document, or session:<filename> for a session document")),
		readOnly(),
	), s.analyze)
	m.AddTool(mcp.NewTool("attach",
		mcp.WithDescription("Attach a text document to this conversation's session. It is indexed and usable by view, list, "+
			"get_summary and search of this session as soon as attach returns ready; no other session ever sees it. "+
			"It is deleted by detach, when the session ends, or after the session is idle for the session TTL."),
		mcp.WithString("filename", mcp.Required(), mcp.Description("File name, no folder, e.g. \"meeting notes.md\"; attaching it again replaces it")),
		mcp.WithString("content", mcp.Required(), mcp.Description("The document's text")),
		sessionState(false),
	), s.attach)
	m.AddTool(mcp.NewTool("detach",
		mcp.WithDescription("Remove a document attached to this session."),
		mcp.WithString("filename", mcp.Required(), mcp.Description("File name of the session document, e.g. \"meeting notes.md\"")),
		sessionState(true),
	), s.detach)
	m.AddPrompt(mcp.NewPrompt(PromptName,
		mcp.WithPromptDescription("guide's system prompt for this conversation: how to reach the documents, and the context block "+
			"(focus context, historical contexts, available documents by context)."),
		mcp.WithArgument("part", mcp.ArgumentDescription("\"all\" (default): the whole prompt; \"context\": the context block alone")),
	), s.prompt)
}

// sessionState annotates a tool that changes the session's state (and, for attach and
// detach, the stream), never the project's documents.
func sessionState(destructive bool) mcp.ToolOption {
	return func(t *mcp.Tool) {
		mcp.WithReadOnlyHintAnnotation(false)(t)
		mcp.WithDestructiveHintAnnotation(destructive)(t)
		mcp.WithIdempotentHintAnnotation(true)(t)
		mcp.WithOpenWorldHintAnnotation(false)(t)
	}
}

func (s *Server) focus(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := sessionID(ctx)
	raw := req.GetString("context", "")
	s.waitScanned(ctx)
	var folder string
	var qerr *query.Error
	if err := s.Catalog.Read(func(snap *projection.Snapshot) error {
		folder, qerr = query.CheckFocus(snap, raw)
		return nil
	}); err != nil {
		return toolError(query.Internal(query.ErrIO, err, "reading the catalog")), nil
	}
	if qerr != nil {
		return toolError(qerr), nil
	}
	c, qerr := s.Sessions.SetFocus(ctx, id, folder)
	if qerr != nil {
		return toolError(qerr), nil
	}
	pend := s.pending(ctx, id)
	return s.read(ctx, func(snap *projection.Snapshot) (any, *query.Error) {
		return query.Focus(snap, c, pend), nil
	})
}

func (s *Server) list(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := sessionID(ctx)
	sc := query.Scope{Contexts: s.Sessions.Contexts(id), Folder: req.GetString("folder", "")}
	switch scope := req.GetString("scope", "focus"); scope {
	case "focus", "":
	case "all":
		sc.All = true
	default:
		return toolError(query.Errorf(query.ErrInvalidArgument, "scope %q is not focus or all", scope)), nil
	}
	f := query.ListFilter{ContextType: req.GetString("context_type", ""), Status: req.GetString("status", ""),
		Offset: req.GetInt("offset", 0), Limit: req.GetInt("limit", 0)}
	pend := s.pending(ctx, id)
	return s.read(ctx, func(snap *projection.Snapshot) (any, *query.Error) {
		return query.List(snap, sc, pend, f, s.Limits)
	})
}

func (s *Server) getSummary(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := sessionID(ctx)
	c := s.Sessions.Contexts(id)
	p := req.GetString("path", "")
	pend := s.pending(ctx, id)
	return s.read(ctx, func(snap *projection.Snapshot) (any, *query.Error) {
		return query.Summary(snap, c, pend, p)
	})
}

func (s *Server) analyze(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := s.Sessions.Contexts(sessionID(ctx))
	raw := req.GetString("path", "")
	var k events.DocKey
	var qerr *query.Error
	if err := s.Catalog.Read(func(snap *projection.Snapshot) error {
		k, _, qerr = query.ResolveDocument(snap, c.Session, raw)
		return nil
	}); err != nil {
		return toolError(query.Internal(query.ErrIO, err, "reading the catalog")), nil
	}
	if qerr != nil {
		return toolError(qerr), nil
	}
	stream, _ := s.connection()
	if stream == nil {
		return toolError(query.Errorf(query.ErrIO, "not connected to NATS yet: no stream to read %q from", raw)), nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var e events.Event
	var err error
	if k.Session != "" {
		e, err = stream.LatestSession(rctx, s.Project, k.Session, k.Path)
	} else {
		e, err = stream.Latest(rctx, s.Project, k.Path)
	}
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return toolError(query.Errorf(query.ErrNotFound, "nothing at %q", raw).
			WithInstruction("Check the path with list or tree, then call analyze again.")), nil
	}
	if err != nil {
		return toolError(query.Internal(query.ErrIO, err, "reading %q from the stream", raw)), nil
	}
	a, qerr := query.Analyze(k, &e, s.Freshness.Applied())
	if qerr != nil {
		return toolError(qerr), nil
	}
	return toolResult(a)
}

func (s *Server) attach(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, qerr := s.Sessions.Attach(ctx, sessionID(ctx), req.GetString("filename", ""), req.GetString("content", ""))
	if qerr != nil {
		return toolError(qerr), nil
	}
	return toolResult(res)
}

func (s *Server) detach(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, qerr := s.Sessions.Detach(ctx, sessionID(ctx), req.GetString("filename", ""))
	if qerr != nil {
		return toolError(qerr), nil
	}
	return toolResult(res)
}

// viewSession answers view("session:<name>") for the caller's session only.
func (s *Server) viewSession(ctx context.Context, p string, offset int) (*mcp.CallToolResult, error) {
	token := session.Token(sessionID(ctx))
	return s.read(ctx, func(snap *projection.Snapshot) (any, *query.Error) {
		return query.ViewSession(snap, token, p, offset, s.Limits)
	})
}

func isSessionPath(p string) bool { return strings.HasPrefix(p, query.SessionPrefix) }

func (s *Server) prompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	id := sessionID(ctx)
	c := s.Sessions.Contexts(id)
	pend := s.pending(ctx, id)
	s.waitScanned(ctx)
	var pc query.PromptContext
	if err := s.Catalog.Read(func(snap *projection.Snapshot) error {
		pc = query.BuildPromptContext(snap, s.Project, c, pend)
		return nil
	}); err != nil {
		return nil, err
	}
	render := query.RenderPrompt
	if req.Params.Arguments["part"] == "context" {
		render = query.RenderContextBlock
	}
	text, err := render(pc)
	if err != nil {
		return nil, err
	}
	return mcp.NewGetPromptResult("guide: how to reach the documents, and this conversation's contexts",
		[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
}
