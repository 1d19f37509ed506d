// Package mcpserver answers MCP clients: it maps tool arguments to the query package and
// results back to MCP, and serves the resources. It holds no tool semantics of its own.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/freshness"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
)

// StatusURI is the resource that reports how fresh the projections are.
const StatusURI = "guide://_status"

// Version is reported to clients.
var Version = "0.1.0"

// Server is the MCP face of a query process.
type Server struct {
	Project string
	Catalog *projection.Catalog
	Index   *index.Index // the full-text index; without it there is no search tool
	// Runner and Stream may be nil: in tests that feed the catalog directly, and in a query
	// process that answers from its projections while it connects (see Connect).
	Runner *projection.Runner
	Stream *events.Stream
	Limits query.Limits
	// ToolPrefix is put before every tool name ("guide_" gives "guide_get_content").
	ToolPrefix string
	// Now is the clock of templates; nil for time.Now.
	Now func() time.Time
	// InitialWait bounds how long, from Started, calls wait for a catalog that has never
	// held a complete scan (a new query process), rather than answer from a partial one:
	// once it has passed, no call waits any more, however many waits a call makes.
	InitialWait time.Duration // default 5s
	Started     time.Time     // when the process started; default: when New is called
	// Sessions holds each MCP session's contexts and documents; nil for one with the
	// default settings.
	Sessions *session.Registry
	// Freshness tracks how far the projections have applied the stream (the status
	// resource, documents' statuses); nil for one of the server's own, set by New.
	Freshness *freshness.Tracker
	// PageSize is how many items a list call returns before a nextCursor.
	PageSize int // default DefaultPageSize
	// Sync, when set, makes every tool call and resource read see every change saved to
	// the root before it (read-your-writes, sync.go): it returns the stream sequence that
	// covers them, once the watcher has delivered them and the indexer published them.
	// nil where this process does not watch the files (it follows a stream): answers say
	// how fresh they are, through the status.
	Sync func(context.Context) (uint64, error)
	// SyncWait bounds the wait for Sync and the projections; past it the answer says it
	// is partial. Default DefaultSyncWait.
	SyncWait time.Duration
	Logger   *slog.Logger

	connMu    sync.Mutex // guards Stream and Runner, which Connect sets while serving
	freshOnce sync.Once
	subs      *subscriptions
	// scanDeadline is when calls stop waiting for the first complete scan.
	scanDeadline time.Time
}

// New builds the MCP server with every tool and resource.
func (s *Server) New() *server.MCPServer {
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.InitialWait == 0 {
		s.InitialWait = 5 * time.Second
	}
	if s.Started.IsZero() {
		s.Started = time.Now()
	}
	s.scanDeadline = s.Started.Add(s.InitialWait)
	if s.PageSize == 0 {
		s.PageSize = DefaultPageSize
	}
	s.ensureFreshness()
	s.ensureSessions()
	subs := &subscriptions{srv: s}
	hooks := s.sessionHooks()
	subs.addHooks(hooks)
	m := server.NewMCPServer("guide", Version,
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithHooks(hooks),
		server.WithPaginationLimit(s.PageSize),
		server.WithCompletions(),
		server.WithResourceCompletionProvider(s),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithResourceHandlerMiddleware(s.syncResources),
		server.WithInstructions(instructions),
	)
	subs.mcp = m
	m.Use(progress(m), s.logInternal, (&validator{m: m}).middleware, s.syncTools)
	s.subs = subs
	if s.Stream != nil || s.Runner != nil {
		s.Freshness.Connect(s.Stream, s.Runner)
	}
	if s.Runner != nil {
		s.follow(s.Runner)
	}
	m.AddTool(mcp.NewTool("view",
		mcp.WithDescription("Show what is at a path of the project: a document's full content and metadata, "+
			"or a folder's immediate subfolders and documents. \"\" is the project root. Paths are relative "+
			"to the root, like \"Characters/Elara.md\"; the extension may be left out when it is unambiguous. "+
			"A long document or a large folder comes in pages: pass the returned next_offset as offset."),
		mcp.WithString("path", mcp.Description("Path of a document or folder, relative to the project root; \"\" for the root. Example: \"Characters/Elara.md\""), mcp.DefaultString("")),
		mcp.WithInteger("offset", mcp.Description("Where to start: a character offset in a document, an entry offset in a folder; from a previous response's next_offset"), mcp.Min(0)),
		readOnly(),
	), s.view)
	m.AddTool(mcp.NewTool("tree",
		mcp.WithDescription("Show how the project is organised: the folders and documents below a folder, "+
			"depth levels deep, with names, paths and word counts, never content. Use view to read a document."),
		mcp.WithString("folder", mcp.Description("Folder to start at, relative to the project root; \"\" for the whole project. Example: \"Worldbuilding\""), mcp.DefaultString("")),
		mcp.WithInteger("depth", mcp.Description("Levels to show, 1 to 5"), mcp.Min(query.MinDepth), mcp.Max(query.MaxDepth), mcp.DefaultNumber(query.DefaultDepth)),
		readOnly(),
	), s.tree)
	if s.Index != nil {
		m.AddTool(mcp.NewTool("search",
			mcp.WithDescription("Find documents by words in their names and content, ranked by relevance, best first "+
				"(a name match counts twice a content match). Returns metadata and a short snippet per document, "+
				"never whole documents: use view to read one. The query is plain text: every word must occur "+
				"(case-insensitive, any language; English words also match their other forms), "+
				"\"quoted words\" must occur together as a phrase; no other character is special. "+
				"Common words like \"the\" only rank unless quoted. Matches are marked **like this** in snippets."),
			mcp.WithString("query", mcp.Required(), mcp.Description("Words to find, e.g. dragon, or \"magic system\" for a phrase; at most 1000 characters and 32 different words besides common ones")),
			mcp.WithString("folder", mcp.Description("Search only below this folder, relative to the project root; \"\" for the whole project. Example: \"Worldbuilding\""), mcp.DefaultString("")),
			mcp.WithInteger("limit", mcp.Description("Hits per page, 1 to 100"), mcp.Min(1), mcp.Max(search.MaxLimit), mcp.DefaultNumber(search.DefaultLimit)),
			mcp.WithString("cursor", mcp.Description("next_cursor from a previous response with the same query and folder, for the next page")),
			mcp.WithString("scope", mcp.Description("\"focus\" (default): the session's focus set and its attached documents; \"all\": every document of the project. Each hit says which context it came from."), mcp.Enum("focus", "all")),
			readOnly(),
		), s.search)
	}
	m.AddResource(mcp.NewResource(StatusURI, "status",
		mcp.WithResourceDescription("How fresh the index is: documents, the last applied stream sequence, the lag behind the stream, and whether the initial scan is complete."),
		mcp.WithMIMEType("application/json"),
	), s.status)
	s.addContent(m)
	s.addContexts(m)
	s.addChanges(m)
	applyToolPrefix(m, s.ToolPrefix)
	return m
}

const instructions = `guide serves a tree of documents. Start with list: the documents of the focus context ` +
	`(set it with focus(folder)) plus those attached to this session, with their status. The prompt "guide" explains the contexts. ` +
	`Use view("") to see the top level, tree(folder, depth) for the structure, view(path) to read a document, ` +
	`and search(query, folder) to find documents by words. Paths are relative to the project root. ` +
	`get_content(category_or_collection, pattern) returns the documents of a configured category or collection ` +
	`(guide.yaml), also readable as the resources guide://{collection} and guide://{collection}/{document}.`

func readOnly() mcp.ToolOption {
	return func(t *mcp.Tool) {
		mcp.WithReadOnlyHintAnnotation(true)(t)
		mcp.WithDestructiveHintAnnotation(false)(t)
		mcp.WithIdempotentHintAnnotation(true)(t)
		mcp.WithOpenWorldHintAnnotation(false)(t)
	}
}

func toolResult(v any) (*mcp.CallToolResult, error) {
	b, err := query.EncodeJSON(v)
	if err != nil {
		return toolError(query.Internal(query.ErrUnknown, err, "encoding the result")), nil
	}
	// The JSON as text, once. The tools declare no output schema, so a structured copy
	// is optional, and clients read the text: a copy doubled every answer, and the time
	// both ends spent encoding and parsing it (a search's 20 hits are about 10 KB).
	return mcp.NewToolResultText(string(b)), nil
}

// waitScanned waits for a catalog that has never held a complete scan, until InitialWait
// after the server was built.
func (s *Server) waitScanned(ctx context.Context) {
	select {
	case <-s.Catalog.Scanned():
	default:
		left := time.Until(s.scanDeadline)
		if left <= 0 {
			return
		}
		t := time.NewTimer(left)
		select {
		case <-s.Catalog.Scanned():
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// read runs fn on a catalog snapshot and turns its outcome into a tool result.
func (s *Server) read(ctx context.Context, fn func(*projection.Snapshot) (any, *query.Error)) (*mcp.CallToolResult, error) {
	s.waitScanned(ctx)
	var out any
	var qerr *query.Error
	err := s.Catalog.Read(func(snap *projection.Snapshot) error {
		out, qerr = fn(snap)
		return nil
	})
	if err != nil {
		return toolError(query.Internal(query.ErrIO, err, "reading the catalog")), nil
	}
	if qerr != nil {
		return toolError(qerr), nil
	}
	return toolResult(out)
}

func (s *Server) view(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p := req.GetString("path", "")
	offset := req.GetInt("offset", 0)
	if isSessionPath(p) {
		return s.viewSession(ctx, p, offset)
	}
	return s.read(ctx, func(snap *projection.Snapshot) (any, *query.Error) {
		return query.View(snap, p, offset, s.Limits)
	})
}

func (s *Server) tree(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	folder := req.GetString("folder", "")
	depth := req.GetInt("depth", query.DefaultDepth)
	return s.read(ctx, func(snap *projection.Snapshot) (any, *query.Error) {
		return query.Tree(snap, folder, depth, s.Limits)
	})
}

func (s *Server) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a := query.SearchArgs{
		Query:  req.GetString("query", ""),
		Folder: req.GetString("folder", ""),
		Limit:  req.GetInt("limit", search.DefaultLimit),
		Cursor: req.GetString("cursor", ""),
	}
	if s.Sessions != nil {
		// By default a session searches its focus set and its own documents; a folder
		// or scope "all" widens that, and each hit says which context it came from.
		a.Scope = &query.Scope{Contexts: s.Sessions.Contexts(sessionID(ctx)), All: req.GetString("scope", "") == "all"}
	}
	s.waitScanned(ctx)
	res, qerr := query.Search(ctx, s.Catalog, s.Index, a, s.Limits)
	if qerr != nil {
		return toolError(qerr), nil
	}
	res.WriteError = s.Freshness.WriteError()
	return toolResult(res)
}

// ConnectSessions hands the session registry the stream as soon as the process reaches
// NATS, before the projections follow it (Connect): a session another process issued — a
// bridge's, whose owner died — is restored from the session store without waiting for the
// search index to open.
func (s *Server) ConnectSessions(ctx context.Context, stream *events.Stream) {
	s.ensureFreshness()
	if s.Sessions != nil {
		_ = s.Sessions.Connect(ctx, stream, s.Freshness) // which logs why the store is not open yet
	}
}

// ensureFreshness gives the server a freshness tracker of its own when it was given none.
func (s *Server) ensureFreshness() {
	s.freshOnce.Do(func() {
		if s.Freshness == nil {
			s.Freshness = &freshness.Tracker{Project: s.Project, Catalog: s.Catalog, Index: s.Index, Logger: s.Logger}
		}
	})
}

// Connect hands the server the stream and the runner once the process has reached NATS;
// until then it answers from its projections and says the stream is not connected.
func (s *Server) Connect(ctx context.Context, stream *events.Stream, runner *projection.Runner) {
	s.ensureFreshness()
	s.connMu.Lock()
	defer s.connMu.Unlock()
	s.Stream, s.Runner = stream, runner
	s.Freshness.Connect(stream, runner) // before the runner runs: Connect precedes Run
	if runner != nil && s.subs != nil {
		s.follow(runner)
	}
	if s.Sessions != nil {
		_ = s.Sessions.Connect(ctx, stream, s.Freshness)
	}
}

// follow hooks the server's subscriptions to the runner's batches: they hear each batch
// the catalog applied.
func (s *Server) follow(runner *projection.Runner) {
	runner.OnApplied = s.subs.applied
}

func (s *Server) connection() (*events.Stream, *projection.Runner) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.Stream, s.Runner
}

func (s *Server) status(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	b, err := query.EncodeJSONIndent(s.Freshness.Status(ctx), "  ")
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
}

// ErrNoProject is returned when the query process cannot tell which project to serve.
var ErrNoProject = errors.New("no project")
