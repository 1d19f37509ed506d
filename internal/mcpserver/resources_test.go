package mcpserver_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// TestGuideURI covers the guide:// resources: collections, documents and their errors.
func TestGuideURI(t *testing.T) {
	p, root := contentPipeline(t)
	t.Run("ResourceTemplateAdvertised", func(t *testing.T) {
		res, err := p.Client.ListResourceTemplates(testkit.Context(t), mcp.ListResourceTemplatesRequest{})
		testkit.NoErr(t, err, "resources/templates/list")
		var got []string
		for _, rt := range res.ResourceTemplates {
			got = append(got, rt.URITemplate.Raw())
		}
		for _, want := range []string{mcpserver.CollectionURI, mcpserver.CollectionDocumentURI} {
			if !strings.Contains(strings.Join(got, " "), want) {
				t.Errorf("templates %v lack %s", got, want)
			}
		}
		list, err := p.Client.ListResources(testkit.Context(t), mcp.ListResourcesRequest{})
		testkit.NoErr(t, err, "resources/list")
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		for _, want := range []string{mcpserver.StatusURI, mcpserver.ChangesURI} {
			if !slices.Contains(uris, want) {
				t.Errorf("resources %v lack %s", uris, want)
			}
		}
	})
	t.Run("HandlerRegistration", func(t *testing.T) {
		text, _ := p.ReadResource("guide://lang/go")
		testkit.Equal(t, text, disk(t, root, "lang/go.md"), "guide://lang/go")
	})
	t.Run("CollectionAccess", func(t *testing.T) {
		text, mime := p.ReadResource("guide://dev")
		want := success(t, p.Call("get_content", map[string]any{"category_or_collection": "dev"})).Value
		testkit.Equal(t, text, want, "guide://dev is get_content(dev)")
		testkit.Equal(t, mime, "multipart/mixed", "MIME type")
	})
	t.Run("CollectionWithDocumentAccess", func(t *testing.T) {
		text, mime := p.ReadResource("guide://lang/python")
		testkit.Equal(t, text, disk(t, root, "lang/python.md"), "guide://lang/python")
		testkit.Equal(t, mime, "text/markdown", "MIME type")
	})
	t.Run("ContentDelegation", func(t *testing.T) {
		text, _ := p.ReadResource("guide://guidelines/prompt")
		testkit.Equal(t, text, renderedPrompt, "the same function renders templates")
	})
	t.Run("ParameterMapping", func(t *testing.T) {
		// guide://docs/readme → category_or_collection="docs", pattern="readme"; here with
		// an escaped pattern, since a glob's '*' is reserved in a URI.
		text, _ := p.ReadResource("guide://code/%2A%2A%2F%2A.py")
		want := success(t, p.Call("get_content", map[string]any{"category_or_collection": "code", "pattern": "**/*.py"})).Value
		testkit.Equal(t, text, want, "pattern from the URI")
	})
	t.Run("EmptyDocumentParameter", func(t *testing.T) {
		text, _ := p.ReadResource("guide://lang")
		want := success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"})).Value
		testkit.Equal(t, text, want, "no pattern: default patterns")
	})
	t.Run("SuccessfulRetrieval", func(t *testing.T) {
		text, _ := p.ReadResource("guide://edge/crlf")
		testkit.Equal(t, text, disk(t, root, "edge/crlf.txt"), "plain text, not JSON")
	})
	t.Run("ContentError", func(t *testing.T) {
		text, mime := p.ReadResource("guide://nope")
		testkit.Equal(t, mime, "text/plain", "MIME type")
		if !strings.HasPrefix(text, "Category or collection 'nope' not found") {
			t.Errorf("error text %q", text)
		}
		text, _ = p.ReadResource("guide://lang/zzz")
		if !strings.HasPrefix(text, "no documents in category 'lang' match pattern 'zzz'") {
			t.Errorf("error text %q", text)
		}
	})
	t.Run("ExceptionHandling", func(t *testing.T) {
		q, _ := contentPipeline(t, func(s *mcpserver.Server) { s.Now = func() time.Time { panic("clock broke") } })
		text, _ := q.ReadResource("guide://guidelines/prompt")
		testkit.Equal(t, text, "Unexpected error: clock broke", "unexpected error")
	})
}

// TestCompletion completes category and collection names for the guide:// templates.
func TestCompletion(t *testing.T) {
	p, _ := contentPipeline(t)
	complete := func(arg, value string) []string {
		req := mcp.CompleteRequest{}
		req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: mcpserver.CollectionDocumentURI}
		req.Params.Argument.Name, req.Params.Argument.Value = arg, value
		res, err := p.Client.Complete(testkit.Context(t), req)
		testkit.NoErr(t, err, "complete")
		return res.Completion.Values
	}
	testkit.Equal(t, complete("collection", ""), []string{"code", "dev", "drafts", "edge", "examples", "guidelines", "lang"}, "all names")
	testkit.Equal(t, complete("collection", "e"), []string{"edge", "examples"}, "prefix e")
	testkit.Equal(t, complete("document", "x"), []string{}, "document")
}

// TestToolPrefix: --tool-prefix / MCP_TOOL_PREFIX renames every tool.
func TestToolPrefix(t *testing.T) {
	p, root := contentPipeline(t, func(s *mcpserver.Server) { s.ToolPrefix = "guide_" })
	tools, err := p.Client.ListTools(testkit.Context(t), mcp.ListToolsRequest{})
	testkit.NoErr(t, err, "list tools")
	for _, tl := range tools.Tools {
		if !strings.HasPrefix(tl.Name, "guide_") {
			t.Errorf("tool %q lacks the prefix", tl.Name)
		}
	}
	s := success(t, p.Call("guide_get_content", map[string]any{"category_or_collection": "lang", "pattern": "go"}))
	testkit.Equal(t, s.Value, disk(t, root, "lang/go.md"), "prefixed tool answers")
}

// TestLimits: the document count and size bounds say what was left out and how to narrow.
func TestLimits(t *testing.T) {
	t.Run("MaxDocuments", func(t *testing.T) {
		p, _ := contentPipeline(t, func(s *mcpserver.Server) { s.Limits = query.Limits{MaxDocuments: 2} })
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "dev"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, len(parts), 2, "parts")
		for _, want := range []string{"returned 2 of 6", "guidelines/prompt.md.mustache", "lang/python.md", "Narrow the pattern"} {
			if !strings.Contains(s.Message, want) {
				t.Errorf("message %q lacks %q", s.Message, want)
			}
		}
	})
	t.Run("MaxChars", func(t *testing.T) {
		p, root := contentPipeline(t, func(s *mcpserver.Server) { s.Limits = query.Limits{MaxChars: 1200} })
		testkit.WriteFile(t, root, "lang/big.md", strings.Repeat("big text ", 200))
		p.Reconcile()
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"}))
		if len(s.Value) > 1200 {
			t.Errorf("value is %d bytes", len(s.Value))
		}
		if !strings.Contains(s.Message, "left out") || !strings.Contains(s.Message, "truncated") {
			t.Errorf("message %q", s.Message)
		}
		s = success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang", "pattern": "big"}))
		if !strings.Contains(s.Message, "view(path=\"lang/big.md\", offset=") {
			t.Errorf("message %q should say how to read the rest", s.Message)
		}
	})
}
