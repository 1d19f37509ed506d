package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// clock is the templates' time in these tests.
var clock = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// contentPipeline is a pipeline over a copy of testdata/content, scanned.
func contentPipeline(t *testing.T, configure ...func(*mcpserver.Server)) (*testkit.Pipeline, string) {
	t.Helper()
	root := testkit.CopyTree(t, "../../testdata/content")
	configure = append([]func(*mcpserver.Server){func(s *mcpserver.Server) { s.Now = clock }}, configure...)
	p := testkit.NewPipeline(t, nil, root, "", configure...)
	p.Reconcile()
	return p, root
}

func success(t *testing.T, r *mcp.CallToolResult) mcpserver.Success {
	t.Helper()
	var s mcpserver.Success
	testkit.Decode(t, r, &s)
	if !s.Success {
		t.Fatalf("success is false: %s", testkit.Text(t, r))
	}
	return s
}

type part struct {
	Header textproto.MIMEHeader
	Body   string
}

// parseMultipart parses a multipart value with the standard library: the header line
// declares the boundary, and every part must give back its Content-Length in bytes.
func parseMultipart(t *testing.T, v string) (boundary string, parts []part) {
	t.Helper()
	br := bufio.NewReader(strings.NewReader(v))
	h, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		t.Fatalf("multipart header: %v in %q", err, v)
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q: %v", h.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(br, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("next part: %v", err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(p.Header.Get("Content-Length")); n != len(b) {
			t.Errorf("part %s: Content-Length %d, body %d bytes", p.Header.Get("Content-Location"), n, len(b))
		}
		parts = append(parts, part{Header: p.Header, Body: string(b)})
	}
	return params["boundary"], parts
}

func locations(parts []part) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.Header.Get("Content-Location"))
	}
	return out
}

func disk(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	testkit.NoErr(t, err, "read "+rel)
	return string(b)
}

const renderedPrompt = "# Prompt for test\n\nCategory guidelines, document prompt.md at guidelines/prompt.md, rendered on 2026-01-02.\nNot escaped: <b>&</b>\n"

// TestGetContent covers the scenarios of "Requirement: get_content Tool".
func TestGetContent(t *testing.T) {
	p, root := contentPipeline(t)
	t.Run("CategoryContentRetrieval", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, locations(parts), []string{"guide://category/lang/go.md", "guide://category/lang/python.md"}, "parts")
		testkit.Equal(t, parts[1].Body, disk(t, root, "lang/python.md"), "python.md")
	})
	t.Run("CollectionContentRetrieval", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "code"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, locations(parts), []string{
			"guide://category/lang/go.md", "guide://category/lang/python.md",
			"guide://category/examples/deep/util.py", "guide://category/examples/hello.py"}, "parts")
	})
	t.Run("PatternOverride", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "guidelines", "pattern": "intro.txt"}))
		testkit.Equal(t, s.Value, disk(t, root, "guidelines/intro.txt"), "value")
	})
	t.Run("NotFound", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("get_content", map[string]any{"category_or_collection": "nope"}))
		testkit.Equal(t, f.ErrorType, "not_found", "error_type")
		testkit.Equal(t, f.Instruction, "Present this error to the user and take no further action.", "instruction")
		if !strings.Contains(f.Error, "'nope'") || !strings.Contains(f.Error, "guidelines") || !strings.Contains(f.Error, "dev") {
			t.Errorf("error %q should name the missing name and list what exists", f.Error)
		}
	})
	t.Run("CategoryBeforeCollection", func(t *testing.T) {
		// A collection named like a category: the category answers.
		testkit.WriteFile(t, root, "guide.yaml", disk(t, root, "guide.yaml")+"  lang:\n    categories: [guidelines]\n")
		p.Reconcile()
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, len(parts), 2, "parts of category lang")
		s = success(t, p.Call("get_collection_content", map[string]any{"collection": "lang"}))
		_, parts = parseMultipart(t, s.Value)
		testkit.Equal(t, len(parts), 4, "parts of collection lang")
	})
}

// TestGetCategoryContent covers "Requirement: get_category_content Tool".
func TestGetCategoryContent(t *testing.T) {
	p, root := contentPipeline(t)
	t.Run("CategoryFoundWithDefaultPatterns", func(t *testing.T) {
		s := success(t, p.Call("get_category_content", map[string]any{"category": "guidelines"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, locations(parts), []string{
			"guide://category/guidelines/code-review.md", "guide://category/guidelines/intro.md",
			"guide://category/guidelines/prompt.md", "guide://category/guidelines/style.md"}, "parts")
		testkit.Equal(t, parts[2].Body, renderedPrompt, "rendered template")
		testkit.Equal(t, parts[3].Body, disk(t, root, "guidelines/style.md"), "the document wins over its template")
		testkit.Golden(t, filepath.Join("testdata", "golden", "guidelines.multipart"), []byte(s.Value))
	})
	t.Run("CategoryFoundWithCustomPattern", func(t *testing.T) {
		s := success(t, p.Call("get_category_content", map[string]any{"category": "guidelines", "pattern": "code-*"}))
		testkit.Equal(t, s.Value, disk(t, root, "guidelines/code-review.md"), "value")
	})
	t.Run("CategoryNotFound", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("get_category_content", map[string]any{"category": "dev"}))
		testkit.Equal(t, f.ErrorType, "not_found", "a collection is not a category")
		testkit.Equal(t, f.Instruction, "Present this error to the user and take no further action.", "instruction")
	})
	t.Run("NoContentMatches", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("get_category_content", map[string]any{"category": "guidelines", "pattern": "*.py"}))
		testkit.Equal(t, f.ErrorType, "no_matches", "error_type")
		testkit.Equal(t, f.Instruction, "Present this error to the user so they can correct the pattern. Do NOT attempt corrective action.", "instruction")
		f = testkit.DecodeFailure(t, p.Call("get_category_content", map[string]any{"category": "drafts"}))
		testkit.Equal(t, f.ErrorType, "no_matches", "default patterns match nothing")
		if !strings.Contains(f.Error, "*.rs") {
			t.Errorf("error %q should name the patterns", f.Error)
		}
	})
}

// TestGetCollectionContent covers "Requirement: get_collection_content Tool".
func TestGetCollectionContent(t *testing.T) {
	p, _ := contentPipeline(t)
	t.Run("CollectionFoundWithDefaultPatterns", func(t *testing.T) {
		s := success(t, p.Call("get_collection_content", map[string]any{"collection": "dev"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, locations(parts), []string{
			"guide://category/guidelines/code-review.md", "guide://category/guidelines/intro.md",
			"guide://category/guidelines/prompt.md", "guide://category/guidelines/style.md",
			"guide://category/lang/go.md", "guide://category/lang/python.md"}, "parts")
		testkit.Golden(t, filepath.Join("testdata", "golden", "dev.multipart"), []byte(s.Value))
	})
	t.Run("CollectionFoundWithCustomPattern", func(t *testing.T) {
		// The pattern applies in each category; a document found by an earlier category
		// of the collection is not repeated by a later one.
		s := success(t, p.Call("get_collection_content", map[string]any{"collection": "code", "pattern": "**/*.py"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, locations(parts), []string{"guide://category/lang/examples/deep/util.py", "guide://category/lang/examples/hello.py"}, "parts")
		testkit.Equal(t, parts[0].Header.Get("Content-Type"), "text/x-python", "Content-Type")
	})
	t.Run("CollectionNotFound", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("get_collection_content", map[string]any{"collection": "guidelines"}))
		testkit.Equal(t, f.ErrorType, "not_found", "a category is not a collection")
	})
	t.Run("NoContentMatches", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("get_collection_content", map[string]any{"collection": "dev", "pattern": "*.java"}))
		testkit.Equal(t, f.ErrorType, "no_matches", "error_type")
		testkit.Equal(t, f.Instruction, query.Instruction(query.ErrNoMatches), "instruction")
	})
}

// TestPatternMatching covers "Requirement: Pattern Matching", template discovery included.
func TestPatternMatching(t *testing.T) {
	p, root := contentPipeline(t)
	locs := func(name, pattern string) []string {
		t.Helper()
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": name, "pattern": pattern}))
		if !strings.HasPrefix(s.Value, "Content-Type: multipart/mixed") {
			return []string{"single:" + s.Value}
		}
		_, parts := parseMultipart(t, s.Value)
		return locations(parts)
	}
	t.Run("WildcardPattern", func(t *testing.T) {
		testkit.Equal(t, locs("lang", "*.md"), []string{"guide://category/lang/go.md", "guide://category/lang/python.md"}, "*.md")
	})
	t.Run("RootNamePattern", func(t *testing.T) {
		testkit.Equal(t, locs("guidelines", "intro"), []string{"guide://category/guidelines/intro.md", "guide://category/guidelines/intro.txt"}, "intro")
	})
	t.Run("SpecificFilePattern", func(t *testing.T) {
		testkit.Equal(t, locs("guidelines", "intro.md"), []string{"single:" + disk(t, root, "guidelines/intro.md")}, "intro.md")
	})
	t.Run("RecursivePattern", func(t *testing.T) {
		testkit.Equal(t, locs("lang", "**/*.py"), []string{"guide://category/lang/examples/deep/util.py", "guide://category/lang/examples/hello.py"}, "**/*.py")
		testkit.Equal(t, locs("lang", "*/*.py"), []string{"single:" + disk(t, root, "lang/examples/hello.py")}, "*/*.py does not recurse")
	})
	t.Run("QuestionMarkAndSet", func(t *testing.T) {
		testkit.Equal(t, locs("lang", "g?.md"), []string{"single:" + disk(t, root, "lang/go.md")}, "g?.md")
		testkit.Equal(t, locs("lang", "[gp]*.md"), []string{"guide://category/lang/go.md", "guide://category/lang/python.md"}, "[gp]*.md")
	})
	t.Run("TemplateMatchedByExtension", func(t *testing.T) {
		testkit.Equal(t, locs("guidelines", "prompt.md"), []string{"single:" + renderedPrompt}, "prompt.md finds prompt.md.mustache")
		testkit.Equal(t, locs("guidelines", "prompt"), []string{"single:" + renderedPrompt}, "prompt finds prompt.md.mustache")
	})
	t.Run("NonTemplatePreferred", func(t *testing.T) {
		testkit.Equal(t, locs("guidelines", "style.md"), []string{"single:" + disk(t, root, "guidelines/style.md")}, "style.md")
	})
	t.Run("InvalidPattern", func(t *testing.T) {
		for _, pat := range []string{"[abc", "../secret", "/etc/passwd", "a\\"} {
			f := testkit.DecodeFailure(t, p.Call("get_content", map[string]any{"category_or_collection": "lang", "pattern": pat}))
			testkit.Equal(t, f.ErrorType, "invalid_pattern", "error_type of "+pat)
			testkit.Equal(t, f.Instruction, "Present this error to the user with pattern syntax help.", "instruction")
			if !strings.Contains(f.Error, "Pattern syntax:") {
				t.Errorf("error %q lacks the syntax help", f.Error)
			}
		}
	})
	t.Run("ConfigFileIsNotContent", func(t *testing.T) {
		testkit.WriteFile(t, root, "guide.yaml", disk(t, root, "guide.yaml")+"  rootdocs:\n    categories: [root]\n")
		testkit.WriteFile(t, root, "guide.yaml", strings.Replace(disk(t, root, "guide.yaml"), "categories:\n", "categories:\n  root:\n    dir: \"\"\n    patterns: [\"*.yaml\", \"*.md\"]\n", 1))
		p.Reconcile()
		f := testkit.DecodeFailure(t, p.Call("get_content", map[string]any{"category_or_collection": "root"}))
		testkit.Equal(t, f.ErrorType, "no_matches", "guide.yaml is never content")
	})
}

// TestResultPattern covers "Requirement: Result Pattern Response".
func TestResultPattern(t *testing.T) {
	p, _ := contentPipeline(t)
	t.Run("SuccessResponseFormat", func(t *testing.T) {
		r := p.Call("get_content", map[string]any{"category_or_collection": "lang", "pattern": "go"})
		var m map[string]any
		testkit.NoErr(t, json.Unmarshal([]byte(testkit.Text(t, r)), &m), "decode")
		testkit.Equal(t, m, map[string]any{"success": true, "value": "# Go\n\nRun gofmt.\n"}, "result")
		testkit.Equal(t, r.IsError, false, "isError")
	})
	t.Run("FailureResponseFormat", func(t *testing.T) {
		r := p.Call("get_content", map[string]any{"category_or_collection": "nope"})
		var m map[string]any
		testkit.NoErr(t, json.Unmarshal([]byte(testkit.Text(t, r)), &m), "decode")
		keys := []string{}
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		testkit.Equal(t, keys, []string{"error", "error_type", "instruction", "success"}, "keys")
		testkit.Equal(t, m["success"], any(false), "success")
		testkit.Equal(t, r.IsError, true, "isError")
	})
	t.Run("AgentInstructionForNotFound", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("get_category_content", map[string]any{"category": "nope"}))
		testkit.Equal(t, f.Instruction, "Present this error to the user and take no further action.", "instruction")
	})
	t.Run("AgentInstructionForNoMatches", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("get_category_content", map[string]any{"category": "lang", "pattern": "zzz"}))
		testkit.Equal(t, f.Instruction, "Present this error to the user so they can correct the pattern. Do NOT attempt corrective action.", "instruction")
	})
}

// TestContentFormatting covers "Requirement: Content Formatting" and "Requirement: MIME Multipart Format".
func TestContentFormatting(t *testing.T) {
	p, root := contentPipeline(t)
	t.Run("SingleDocumentFormat", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "edge", "pattern": "crlf.txt"}))
		testkit.Equal(t, s.Value, disk(t, root, "edge/crlf.txt"), "plain content, no wrapper")
	})
	t.Run("MultipleDocumentsFormat", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"}))
		if !strings.HasPrefix(s.Value, "Content-Type: multipart/mixed; boundary=\"guide-boundary\"\r\n\r\n--guide-boundary\r\n") {
			t.Errorf("value does not start as the spec's example: %q", s.Value[:80])
		}
	})
	t.Run("MIMEPartStructure", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"}))
		_, parts := parseMultipart(t, s.Value)
		for _, pt := range parts {
			for _, h := range []string{"Content-Type", "Content-Location", "Content-Length"} {
				if pt.Header.Get(h) == "" {
					t.Errorf("part %v lacks %s", pt.Header, h)
				}
			}
		}
	})
}

// TestMIMEMultipart covers "Requirement: MIME Multipart Format".
func TestMIMEMultipart(t *testing.T) {
	p, root := contentPipeline(t)
	t.Run("MIMEBoundaryFormat", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"}))
		b, _ := parseMultipart(t, s.Value)
		testkit.Equal(t, b, "guide-boundary", "boundary")
		if strings.Count(s.Value, "--guide-boundary\r\n") != 2 || !strings.HasSuffix(s.Value, "\r\n--guide-boundary--\r\n") {
			t.Errorf("separators and terminator: %q", s.Value)
		}
		if strings.Contains(strings.ReplaceAll(s.Value, "\r\n", ""), "\r") {
			t.Error("bare CR in the envelope")
		}
	})
	t.Run("MIMEHeadersPerPart", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "guidelines", "pattern": "intro"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, parts[0].Header.Get("Content-Type"), "text/markdown", "md type")
		testkit.Equal(t, parts[1].Header.Get("Content-Type"), "text/plain", "txt type")
		testkit.Equal(t, parts[0].Header.Get("Content-Length"), strconv.Itoa(len(disk(t, root, "guidelines/intro.md"))), "length")
	})
	t.Run("ContentLocationURI", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "examples"}))
		_, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, locations(parts), []string{"guide://category/examples/deep/util.py", "guide://category/examples/hello.py"}, "locations")
	})
	t.Run("BoundaryInContent", func(t *testing.T) {
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "edge"}))
		b, parts := parseMultipart(t, s.Value)
		testkit.Equal(t, b, "guide-boundary-1", "another boundary")
		testkit.Equal(t, parts[0].Body, disk(t, root, "edge/boundary.md"), "boundary.md byte for byte")
		testkit.Equal(t, parts[1].Body, disk(t, root, "edge/crlf.txt"), "crlf.txt byte for byte")
		testkit.Golden(t, filepath.Join("testdata", "golden", "edge.multipart"), []byte(s.Value))
	})
}

// TestToolArgumentSchema covers "Requirement: Tool Argument Schema" and "Future Document Support".
func TestToolArgumentSchema(t *testing.T) {
	p, _ := contentPipeline(t)
	call := func(args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = "get_content"
		req.Params.Arguments = args
		res, err := p.Client.CallTool(testkit.Context(t), req)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent(err.Error())}}
		}
		return res
	}
	t.Run("RequiredArgumentValidation", func(t *testing.T) {
		r := call(map[string]any{"pattern": "*.md"})
		if !r.IsError || !strings.Contains(testkit.Text(t, r), "category_or_collection") {
			t.Errorf("missing argument: %s", testkit.Text(t, r))
		}
	})
	t.Run("OptionalArgumentHandling", func(t *testing.T) {
		success(t, call(map[string]any{"category_or_collection": "lang"}))
	})
	t.Run("ArgumentTypeValidation", func(t *testing.T) {
		r := call(map[string]any{"category_or_collection": 42})
		if !r.IsError || !strings.Contains(testkit.Text(t, r), "string") {
			t.Errorf("wrong type: %s", testkit.Text(t, r))
		}
	})
	t.Run("DesignForFutureExpansion", func(t *testing.T) {
		tools, err := p.Client.ListTools(testkit.Context(t), mcp.ListToolsRequest{})
		testkit.NoErr(t, err, "list tools")
		want := map[string][]string{"get_content": {"category_or_collection", "pattern"},
			"get_category_content": {"category", "pattern"}, "get_collection_content": {"collection", "pattern"}}
		for _, tl := range tools.Tools {
			args, ok := want[tl.Name]
			if !ok {
				continue
			}
			var got []string
			for k := range tl.InputSchema.Properties {
				got = append(got, k)
			}
			slices.Sort(got)
			testkit.Equal(t, got, args, tl.Name+" arguments (flat; room for a future document)")
			testkit.Equal(t, tl.InputSchema.Required, args[:1], tl.Name+" required")
			testkit.Equal(t, *tl.Annotations.ReadOnlyHint, true, "read-only")
			delete(want, tl.Name)
		}
		testkit.Equal(t, len(want), 0, "tools missing")
	})
}

// TestSessionIntegration covers "Requirement: Session Integration".
func TestSessionIntegration(t *testing.T) {
	t.Run("ActiveSession", func(t *testing.T) {
		p, _ := contentPipeline(t)
		success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"}))
	})
	t.Run("NoActiveSession", func(t *testing.T) {
		p, _ := contentPipeline(t, func(s *mcpserver.Server) { s.Project = "" })
		f := testkit.DecodeFailure(t, p.Call("get_content", map[string]any{"category_or_collection": "lang"}))
		testkit.Equal(t, f.ErrorType, "no_session", "error_type")
		testkit.Equal(t, f.Instruction, "Inform user that project context is required.", "instruction")
	})
	t.Run("SessionProjectAccess", func(t *testing.T) {
		// The project's configuration decides: the template sees the project's name.
		p, _ := contentPipeline(t)
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "guidelines", "pattern": "prompt"}))
		if !strings.Contains(s.Value, "Prompt for "+p.Project) {
			t.Errorf("value %q lacks the project", s.Value)
		}
	})
}

// TestErrorTypes covers "Requirement: Error Types".
func TestErrorTypes(t *testing.T) {
	p, root := contentPipeline(t)
	t.Run("ErrorTypeClassification", func(t *testing.T) {
		cases := map[string]map[string]any{
			"not_found":       {"category_or_collection": "nope"},
			"no_matches":      {"category_or_collection": "lang", "pattern": "*.none"},
			"invalid_pattern": {"category_or_collection": "lang", "pattern": "[x"},
		}
		for want, args := range cases {
			testkit.Equal(t, testkit.DecodeFailure(t, p.Call("get_content", args)).ErrorType, want, "error_type")
		}
	})
	t.Run("ErrorMessageClarity", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("get_content", map[string]any{"category_or_collection": "lang", "pattern": "*.none"}))
		if !strings.Contains(f.Error, "'lang'") || !strings.Contains(f.Error, "'*.none'") {
			t.Errorf("error %q should name the category and the pattern", f.Error)
		}
	})
	t.Run("TemplateError", func(t *testing.T) {
		testkit.WriteFile(t, root, "guidelines/broken.md.mustache", "{{#unclosed}}\n")
		p.Reconcile()
		f := testkit.DecodeFailure(t, p.Call("get_content", map[string]any{"category_or_collection": "guidelines", "pattern": "broken"}))
		testkit.Equal(t, f.ErrorType, "template_error", "error_type")
		if !strings.Contains(f.Error, "guidelines/broken.md.mustache") {
			t.Errorf("error %q should name the file", f.Error)
		}
	})
}

// TestTemplates: the template context and partials.
func TestTemplates(t *testing.T) {
	p, root := contentPipeline(t)
	testkit.WriteFile(t, root, "guidelines/header.md", "HEADER for {{category}}")
	testkit.WriteFile(t, root, "guidelines/page.md.mustache", "{{> header.md}} / {{document}} / {{collection}} / {{time}}")
	p.Reconcile()
	s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "guidelines", "pattern": "page"}))
	testkit.Equal(t, s.Value, "HEADER for guidelines / page.md /  / 03:04:05", "rendered")
	s = success(t, p.Call("get_collection_content", map[string]any{"collection": "dev", "pattern": "page"}))
	testkit.Equal(t, s.Value, "HEADER for guidelines / page.md / dev / 03:04:05", "rendered in a collection")
}
