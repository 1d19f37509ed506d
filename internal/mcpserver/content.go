package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
)

// Resource templates of the guide:// scheme.
const (
	CollectionURI         = "guide://{collection}"
	CollectionDocumentURI = "guide://{collection}/{document}"
)

const patternHelp = "Optional glob pattern relative to the category's folder, instead of its default patterns: " +
	"* within a name, ** across folders, ? one character, [abc] a set; without an extension it matches every extension. " +
	"Examples: \"*.md\", \"intro\", \"**/*.py\""

func (s *Server) addContent(m *server.MCPServer) {
	m.AddTool(mcp.NewTool("get_content",
		mcp.WithDescription("Get the documents of a category or a collection of the project (a category is tried first). "+
			"One document comes back as it is; several as MIME multipart/mixed, one part per document with its "+
			"Content-Type, Content-Location (guide://category/{name}/{path}) and Content-Length. "+
			"The result is JSON: {success, value, message} or {success: false, error, error_type, instruction}."),
		mcp.WithString("category_or_collection", mcp.Required(),
			mcp.Description("Name of a category or of a collection, e.g. \"guidelines\" or \"all\"")),
		mcp.WithString("pattern", mcp.Description(patternHelp)),
		readOnly(),
	), s.getContent)
	m.AddTool(mcp.NewTool("get_category_content",
		mcp.WithDescription("Get the documents of one category of the project, by its default patterns or the given one. "+
			"Same result format as get_content."),
		mcp.WithString("category", mcp.Required(), mcp.Description("Category name, e.g. \"guidelines\"")),
		mcp.WithString("pattern", mcp.Description(patternHelp)),
		readOnly(),
	), s.getCategoryContent)
	m.AddTool(mcp.NewTool("get_collection_content",
		mcp.WithDescription("Get the documents of every category of a collection, by each category's default patterns "+
			"or the given pattern in each. Same result format as get_content."),
		mcp.WithString("collection", mcp.Required(), mcp.Description("Collection name, e.g. \"all\"")),
		mcp.WithString("pattern", mcp.Description(patternHelp)),
		readOnly(),
	), s.getCollectionContent)

	m.AddResourceTemplate(mcp.NewResourceTemplate(CollectionURI, "collection",
		mcp.WithTemplateDescription("The documents of a category or collection, by its default patterns: the value of get_content as plain text."),
	), s.readContentResource)
	m.AddResourceTemplate(mcp.NewResourceTemplate(CollectionDocumentURI, "collection document",
		mcp.WithTemplateDescription("The documents of a category or collection that match the pattern {document}, e.g. guide://guidelines/python."),
	), s.readContentResource)
}

// Success is the Result pattern's success object.
type Success struct {
	Success bool   `json:"success"`
	Value   string `json:"value"`
	Message string `json:"message,omitempty"`
	// Partial, when set, names the documents left out because the partition that keeps
	// them has no replica answering (a partitioned project; the message says so too).
	Partial *query.ContentPartial `json:"partial,omitempty"`
}

// Content is the one function behind the content tools and the guide:// resources.
func (s *Server) Content(ctx context.Context, req query.ContentRequest) (*query.ContentResult, *query.Error) {
	s.waitScanned(ctx)
	req.Project = s.Project
	if s.Now != nil {
		req.Now = s.Now()
	}
	var res *query.ContentResult
	var qerr *query.Error
	err := s.Catalog.Read(func(snap *projection.Snapshot) error {
		res, qerr = query.Content(ctx, snap, req, s.Limits)
		return nil
	})
	if err != nil {
		return nil, query.Internal(query.ErrIO, err, "reading the catalog")
	}
	return res, qerr
}

func (s *Server) contentTool(ctx context.Context, req query.ContentRequest) (*mcp.CallToolResult, error) {
	res, qerr := s.Content(ctx, req)
	if qerr != nil {
		return toolError(qerr), nil
	}
	return toolResult(Success{Success: true, Value: res.Value, Message: res.Message, Partial: res.Partial})
}

func (s *Server) getContent(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.contentTool(ctx, query.ContentRequest{Name: r.GetString("category_or_collection", ""),
		Kind: query.CategoryOrCollection, Pattern: r.GetString("pattern", "")})
}

func (s *Server) getCategoryContent(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.contentTool(ctx, query.ContentRequest{Name: r.GetString("category", ""),
		Kind: query.CategoryOnly, Pattern: r.GetString("pattern", "")})
}

func (s *Server) getCollectionContent(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.contentTool(ctx, query.ContentRequest{Name: r.GetString("collection", ""),
		Kind: query.CollectionOnly, Pattern: r.GetString("pattern", "")})
}

// templateArg reads a URI template variable: mcp-go gives []string; percent-escapes are undone.
func templateArg(args map[string]any, name string) string {
	var v string
	switch x := args[name].(type) {
	case string:
		v = x
	case []string:
		v = strings.Join(x, "/")
	case []any:
		parts := make([]string, 0, len(x))
		for _, p := range x {
			parts = append(parts, fmt.Sprint(p))
		}
		v = strings.Join(parts, "/")
	}
	if u, err := url.PathUnescape(v); err == nil {
		v = u
	}
	return v
}

// readContentResource answers guide://{collection}[/{document}] with the same function as
// get_content: document is the pattern, empty for none. A failure is its message as plain
// text; anything unexpected is "Unexpected error: {message}".
func (s *Server) readContentResource(ctx context.Context, r mcp.ReadResourceRequest) (out []mcp.ResourceContents, err error) {
	text := func(mime, t string) []mcp.ResourceContents {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: mime, Text: t}}
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = text("text/plain", fmt.Sprintf("Unexpected error: %v", p)), nil
		}
	}()
	req := query.ContentRequest{Name: templateArg(r.Params.Arguments, "collection"),
		Pattern: templateArg(r.Params.Arguments, "document"), Kind: query.CategoryOrCollection}
	res, qerr := s.Content(ctx, req)
	if qerr != nil {
		s.logCause(ctx, r.Params.URI, qerr)
		if qerr.Type == query.ErrUnknown {
			return text("text/plain", "Unexpected error: "+qerr.Message), nil
		}
		return text("text/plain", qerr.Message), nil
	}
	mime := "multipart/mixed"
	if len(res.Parts) == 1 && res.Value == string(res.Parts[0].Body) {
		mime = res.Parts[0].ContentType
	}
	return text(mime, res.Value), nil
}

// CompleteResourceArgument completes the collection variable of the guide:// templates
// with the names of categories and collections.
func (s *Server) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	out := &mcp.Completion{Values: []string{}}
	if arg.Name != "collection" && arg.Name != "category" && arg.Name != "category_or_collection" {
		return out, nil
	}
	_ = s.Catalog.Read(func(snap *projection.Snapshot) error {
		cats, cols := snap.Config().Names()
		var names []string
		switch arg.Name {
		case "category":
			names = cats
		default:
			names = append(cats, cols...)
		}
		slices.Sort(names)
		names = slices.Compact(names)
		for _, n := range names {
			if strings.HasPrefix(strings.ToLower(n), strings.ToLower(arg.Value)) {
				out.Values = append(out.Values, n)
			}
		}
		return nil
	})
	out.Total = len(out.Values)
	if len(out.Values) > 100 {
		out.Values, out.HasMore = out.Values[:100], true
	}
	return out, nil
}

// applyToolPrefix renames every tool to prefix+name.
func applyToolPrefix(m *server.MCPServer, prefix string) {
	if prefix == "" {
		return
	}
	tools := m.ListTools()
	var renamed []server.ServerTool
	var old []string
	for name, t := range tools {
		st := *t
		st.Tool.Name = prefix + name
		renamed = append(renamed, st)
		old = append(old, name)
	}
	m.DeleteTools(old...)
	m.AddTools(renamed...)
}
