package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

func search(t *testing.T, p *testkit.Pipeline, args map[string]any) query.SearchResult {
	t.Helper()
	var r query.SearchResult
	testkit.Decode(t, p.Call("search", args), &r)
	return r
}

func hitPaths(r query.SearchResult) []string {
	out := []string{}
	for _, h := range r.Hits {
		out = append(out, h.Path)
	}
	return out
}

// TestSearchScenarios are the seed's usage patterns 4, 5 and 6.
func TestSearchScenarios(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()

	t.Run("FindingContent", func(t *testing.T) {
		r := search(t, p, map[string]any{"query": "dragon"})
		if len(r.Hits) == 0 || r.Hits[0].Path != "Worldbuilding/Creatures/Dragons.md" {
			t.Fatalf("dragon: want Dragons.md first, got %v", hitPaths(r))
		}
		h := r.Hits[0]
		testkit.Equal(t, h.Name, "Dragons.md", "name")
		if h.Words == 0 || h.Score <= 0 {
			t.Errorf("words %d, score %v: want both positive", h.Words, h.Score)
		}
		if !strings.Contains(h.Snippet, "**") || len(h.Snippet) > 3*query.SnippetChars {
			t.Errorf("snippet %q: want a short one with a marked match", h.Snippet)
		}
	})
	t.Run("ScopedExploration", func(t *testing.T) {
		all := search(t, p, map[string]any{"query": "dragon"})
		scoped := search(t, p, map[string]any{"query": "dragon", "folder": "Plot/Outlines"})
		for _, h := range scoped.Hits {
			if !strings.HasPrefix(h.Path, "Plot/Outlines/") {
				t.Errorf("hit %s outside the folder", h.Path)
			}
		}
		if len(scoped.Hits) >= len(all.Hits) {
			t.Errorf("scoped %v, all %v: want fewer in the folder", hitPaths(scoped), hitPaths(all))
		}
		testkit.Equal(t, scoped.Folder, "Plot/Outlines", "folder echoed")
	})
	t.Run("ErrFolderNotFound", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("search", map[string]any{"query": "dragon", "folder": "Nope"}))
		testkit.Equal(t, f.ErrorType, string(query.ErrNotFound), "error type")
	})
	t.Run("ErrFolderOutsideRoot", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("search", map[string]any{"query": "dragon", "folder": "../etc"}))
		testkit.Equal(t, f.ErrorType, string(query.ErrInvalidPath), "error type")
	})
}

// TestSearchBadInput: every kind of hostile or useless query gets a clear answer, never a
// crash, a protocol error or a slow path.
func TestSearchBadInput(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	invalid := []struct{ name, query string }{
		{"ErrEmpty", ""},
		{"ErrBlank", "   \t\n"},
		{"ErrOnlyPunctuation", `+-:^~*?"()!.,;`},
		{"ErrOnlyStopWords", "the and of"},
		{"ErrTooLong", strings.Repeat("dragon ", 200)},
		{"ErrTooManyWords", "a1 b2 c3 d4 e5 f6 g7 h8 i9 j10 k11 l12 m13 n14 o15 p16 q17 r18 s19 t20 u21 v22 w23 x24 y25 z26 aa bb cc dd ee ff gg"},
		{"ErrInvalidUTF8", "drag\xffon"},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			f := testkit.DecodeFailure(t, p.Call("search", map[string]any{"query": c.query}))
			testkit.Equal(t, f.ErrorType, string(query.ErrInvalidArgument), "error type of "+c.name)
			if f.Error == "" || f.Instruction == "" {
				t.Errorf("failure %+v: want a message and an instruction", f)
			}
		})
	}
	answered := []struct{ name, query string }{
		{"QueryLanguageCharacters", `dragon^3 +sword -lair:gold~2 (x OR y) *`},
		{"Wildcards", "drag* ?ragon"},
		{"UnclosedQuote", `"cold blooded`},
		{"QuotedStopWords", `"the"`},
		{"StopWordsAroundAWord", "the dragon of"},
		{"RegexpLike", `/.*/ [a-z]+ \d`},
		{"Emoji", "🐉 dragon"},
	}
	for _, c := range answered {
		t.Run(c.name, func(t *testing.T) {
			r := p.Call("search", map[string]any{"query": c.query})
			if r.IsError {
				t.Fatalf("%q: %s", c.query, testkit.Text(t, r))
			}
		})
	}
	t.Run("ErrBadCursor", func(t *testing.T) {
		f := testkit.DecodeFailure(t, p.Call("search", map[string]any{"query": "dragon", "cursor": "bm90IGEgY3Vyc29y"}))
		testkit.Equal(t, f.ErrorType, string(query.ErrInvalidArgument), "error type")
	})
}

// TestSearchFreshness: a change or a deletion on disk shows in search as soon as its event
// is applied, with no stale hit left behind; the status reports the index's sequence.
func TestSearchFreshness(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	if r := search(t, p, map[string]any{"query": "zanzibar"}); r.Total != 0 {
		t.Fatalf("zanzibar before: %v", hitPaths(r))
	}
	testkit.WriteFile(t, root, "Characters/Elara.md", "# Elara\n\nShe sailed to Zanzibar.\n")
	testkit.WriteFile(t, root, "new/deep/zanzibar notes.md", "spice routes")
	if err := os.Remove(filepath.Join(root, "Worldbuilding/Creatures/Dragons.md")); err != nil {
		t.Fatal(err)
	}
	sum := p.Reconcile()
	r := search(t, p, map[string]any{"query": "Zanzibar"})
	testkit.Equal(t, hitPaths(r), []string{"new/deep/zanzibar notes.md", "Characters/Elara.md"}, "zanzibar after (name first)")
	for _, h := range search(t, p, map[string]any{"query": "dragon"}).Hits {
		if h.Path == "Worldbuilding/Creatures/Dragons.md" {
			t.Errorf("deleted document still found")
		}
	}
	// Elara's old words are gone with her old content.
	testkit.WriteFile(t, root, "Characters/Elara.md", "# Elara\n\nNothing left.\n")
	p.Reconcile()
	testkit.Equal(t, hitPaths(search(t, p, map[string]any{"query": "zanzibar"})), []string{"new/deep/zanzibar notes.md"}, "after rewrite")

	var st query.Status
	res, err := p.Client.ReadResource(testkit.Context(t), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: mcpserver.StatusURI}})
	testkit.NoErr(t, err, "status")
	testkit.NoErr(t, json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &st), "decode status")
	if st.Index == nil || st.Index.AppliedSeq < sum.StreamSeq || st.Index.AppliedSeq > st.StreamLastSeq {
		t.Fatalf("status index %+v, stream %d: want the index's applied sequence", st.Index, st.StreamLastSeq)
	}
}

// TestSearchPagination: pages of limit hits, chained by next_cursor, list every match once.
func TestSearchPagination(t *testing.T) {
	root := t.TempDir()
	for i := range 45 {
		testkit.WriteFile(t, root, filepath.Join("lore", string(rune('a'+i%5)), "doc"+string(rune('A'+i%26))+string(rune('a'+i/26))+".md"),
			strings.Repeat("filler words here. ", i)+"The lantern glows.")
	}
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		args := map[string]any{"query": "lantern", "limit": 10}
		if cursor != "" {
			args["cursor"] = cursor
		}
		r := search(t, p, args)
		testkit.Equal(t, r.Total, uint64(45), "total")
		pages++
		for _, h := range r.Hits {
			if seen[h.Path] {
				t.Fatalf("%s on two pages", h.Path)
			}
			seen[h.Path] = true
		}
		if r.NextCursor == "" {
			break
		}
		cursor = r.NextCursor
		if pages > 10 {
			t.Fatal("no end of pages")
		}
	}
	testkit.Equal(t, [2]int{len(seen), pages}, [2]int{45, 5}, "documents and pages")

	t.Run("ErrCursorOfAnotherQuery", func(t *testing.T) {
		r := search(t, p, map[string]any{"query": "lantern", "limit": 10})
		f := testkit.DecodeFailure(t, p.Call("search", map[string]any{"query": "glows", "cursor": r.NextCursor}))
		testkit.Equal(t, f.ErrorType, string(query.ErrInvalidArgument), "error type")
	})
}

// TestSearchSectionHit: a hit names the section that matches best — its heading and the
// character offset where it starts — and view(path, offset) opens the document there.
func TestSearchSectionHit(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, "guides/archives.md", "# Archives — déjà vu\n\nHow we keep old files.\n\n"+
		"## Listing\n\nShow what an archive holds.\n\n## Extracting\n\nUnpack a compressed archive into the current directory with tar.\n")
	testkit.WriteFile(t, root, "notes.md", "A note with no headings about a compressed archive.\n")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	r := search(t, p, map[string]any{"query": "extract a compressed archive into the current directory"})
	if len(r.Hits) == 0 || r.Hits[0].Path != "guides/archives.md" {
		t.Fatalf("hits %v", hitPaths(r))
	}
	sec := r.Hits[0].Section
	if sec == nil || sec.Heading != "Extracting" || sec.Level != 2 {
		t.Fatalf("section %+v", sec)
	}
	var v query.DocumentView
	testkit.Decode(t, p.Call("view", map[string]any{"path": "guides/archives.md", "offset": sec.Offset}), &v)
	if !strings.HasPrefix(v.Content, "## Extracting\n") {
		t.Fatalf("view at offset %d starts %q", sec.Offset, v.Content[:min(40, len(v.Content))])
	}
	if !strings.Contains(r.Hits[0].Snippet, "**compressed** **archive**") {
		t.Errorf("the snippet is not of the section: %q", r.Hits[0].Snippet)
	}
	for _, h := range r.Hits[1:] {
		if h.Path == "notes.md" && h.Section != nil {
			t.Errorf("a document without headings names a section: %+v", h.Section)
		}
	}
}

// TestSearchDidYouMean: a word of five letters or more that no document holds is searched
// as the nearest word some document holds, within two edits, and the result says so;
// shorter words, and words the index holds, are left as they are.
func TestSearchDidYouMean(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	r := search(t, p, map[string]any{"query": "dragnos", "limit": 1})
	testkit.Equal(t, r.DidYouMean, "dragons", "did you mean")
	if r.Total == 0 || len(r.Corrections) != 1 || r.Corrections[0].From != "dragnos" || !strings.Contains(r.Message, `searched for "dragons" instead`) {
		t.Fatalf("result %+v", r)
	}
	if r.NextCursor != "" {
		next := search(t, p, map[string]any{"query": "dragnos", "limit": 1, "cursor": r.NextCursor})
		if len(next.Hits) == 0 || next.Hits[0].Path == r.Hits[0].Path || next.DidYouMean != "dragons" {
			t.Fatalf("next page %+v", next)
		}
	}
	r = search(t, p, map[string]any{"query": "magik sysetm"})
	testkit.Equal(t, r.DidYouMean, "magic system", "two words")
	for _, q := range []string{"drgn", "dragon", "qqqqqqqqq"} {
		if r := search(t, p, map[string]any{"query": q}); r.DidYouMean != "" {
			t.Errorf("%q searched as %q", q, r.DidYouMean)
		}
	}
}

// TestAnswerIsItsJSONOnce: a tool's answer is its JSON as one text block, with no
// structured copy of it (the tools declare no output schema, and a copy doubled every
// answer's bytes).
func TestAnswerIsItsJSONOnce(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"query": "dragon"}},
		{"tree", map[string]any{}},
		{"view", map[string]any{"path": "Worldbuilding/Creatures/Dragons.md"}},
	} {
		res := p.Call(c.tool, c.args)
		if res.IsError || res.StructuredContent != nil || len(res.Content) != 1 {
			t.Fatalf("%s: error %v, structured copy %v, %d content blocks: want one text block alone", c.tool, res.IsError, res.StructuredContent != nil, len(res.Content))
		}
		tc, ok := res.Content[0].(mcp.TextContent)
		if !ok || !json.Valid([]byte(tc.Text)) {
			t.Fatalf("%s: content %T is not JSON text", c.tool, res.Content[0])
		}
	}
}

// TestAnswerKeepsMarkupAsWritten: a document of code read with view and found with search
// shows <, > and & as written in the answer's text, which a client hands its model as it
// is (encoding/json wrote them \u003c, \u003e and \u0026).
func TestAnswerKeepsMarkupAsWritten(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	const code = "if a < b && c > d { render(\"<div>\") }"
	testkit.NoErr(t, os.MkdirAll(filepath.Join(root, "Code"), 0o755), "mkdir")
	testkit.NoErr(t, os.WriteFile(filepath.Join(root, "Code", "compare.md"),
		[]byte("# Compare\n\nThe quokka template:\n\n    "+code+"\n"), 0o644), "write")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"view", map[string]any{"path": "Code/compare.md"}, code},
		{"search", map[string]any{"query": "quokka"}, "a < b && c > d"},
	} {
		res := p.Call(c.tool, c.args)
		tc, ok := res.Content[0].(mcp.TextContent)
		if !ok || res.IsError {
			t.Fatalf("%s: error %v, content %T", c.tool, res.IsError, res.Content[0])
		}
		if !strings.Contains(tc.Text, strings.ReplaceAll(c.want, `"`, `\"`)) || strings.Contains(tc.Text, `\u00`) {
			t.Errorf("%s: the answer's text does not show %q as written:\n%s", c.tool, c.want, tc.Text)
		}
	}
}

// TestStatusKeepsNamesAsWritten: the status resource shows a project's name as written,
// not with & < > escaped for HTML.
func TestStatusKeepsNamesAsWritten(t *testing.T) {
	const name = "R&D <notes>"
	p := testkit.NewPipeline(t, nil, t.TempDir(), "", func(s *mcpserver.Server) { s.Project = name })
	res, err := p.Client.ReadResource(testkit.Context(t), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: mcpserver.StatusURI}})
	testkit.NoErr(t, err, "status")
	text := res.Contents[0].(mcp.TextResourceContents).Text
	if !strings.Contains(text, `"project": "`+name+`"`) || strings.Contains(text, `\u00`) {
		t.Errorf("the status does not show the project %q as written:\n%s", name, text)
	}
}
