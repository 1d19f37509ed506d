package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// workspace is three folders as an editor opens them: two named docs, and the content
// test tree, with a word (zebra) in every one.
func workspace(t *testing.T) (docs, docs2, content string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	testkit.NoErr(t, err, "temp dir")
	docs, docs2, content = filepath.Join(base, "one", "docs"), filepath.Join(base, "two", "docs"), filepath.Join(base, "content")
	testkit.WriteFile(t, docs, "intro.md", "# Intro\n\nThe zebra of the first docs, alpha.\n")
	testkit.WriteFile(t, docs, "sub/deep.md", "# Deep\n\nA marmot, alpha, and a zebra zebra zebra.\n")
	testkit.WriteFile(t, docs2, "intro.md", "# Intro two\n\nThe zebra of the second docs, beta.\n")
	testkit.WriteFile(t, docs2, "other.md", "# Other\n\nA marmot only.\n")
	testkit.NoErr(t, os.Rename(testkit.CopyTree(t, "../../testdata/content"), content), "copy the content tree")
	testkit.WriteFile(t, content, "notes/zebra.md", "# Zebra\n\nzebra gamma\n")
	for _, r := range []string{docs, docs2, content} {
		t.Cleanup(func() { stopOwners(t, r) })
	}
	return docs, docs2, content
}

// rootsStatus is the status resource of several roots.
type rootsStatus struct {
	Documents       int  `json:"documents"`
	Lag             int  `json:"lag"`
	InitialScanDone bool `json:"initial_scan_done"`
	CaughtUp        bool `json:"caught_up"`
	Roots           []struct {
		Name string `json:"name"`
		Root string `json:"root"`
		query.Status
	} `json:"roots"`
}

func readRootsStatus(t *testing.T, c client.MCPClient) rootsStatus {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "guide://_status"
	res, err := c.ReadResource(testkit.Context(t), req)
	testkit.NoErr(t, err, "read the status")
	var st rootsStatus
	testkit.NoErr(t, json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &st), "status")
	return st
}

// waitRoots waits until the status names these roots, each caught up with its stream.
func waitRoots(t *testing.T, c client.MCPClient, names ...string) rootsStatus {
	t.Helper()
	var st rootsStatus
	testkit.Eventually(t, 60*time.Second, func() (bool, string) {
		st = readRootsStatus(t, c)
		var got []string
		for _, r := range st.Roots {
			got = append(got, r.Name)
			if !r.CaughtUp || !r.InitialScanDone || r.Lag > 0 || r.StreamLastSeq == 0 || r.AppliedSeq < r.StreamLastSeq ||
				r.Index != nil && r.Index.AppliedSeq < r.StreamLastSeq {
				return false, fmt.Sprintf("root %s not caught up: %+v", r.Name, r.Status)
			}
		}
		return slices.Equal(got, names) && st.CaughtUp && st.InitialScanDone, fmt.Sprintf("roots %v, want %v", got, names)
	})
	return st
}

func call(t *testing.T, c client.MCPClient, tool string, args map[string]any, v any) {
	t.Helper()
	testkit.Decode(t, testkit.Call(t, c, tool, args), v)
}

type searchPage struct {
	Total int `json:"total"`
	Hits  []struct {
		Path  string  `json:"path"`
		Score float64 `json:"score"`
		Type  string  `json:"context_type"`
	} `json:"hits"`
	NextCursor string `json:"next_cursor"`
}

func (p searchPage) paths() []string {
	var out []string
	for _, h := range p.Hits {
		out = append(out, h.Path)
	}
	return out
}

// TestClientRootsSeveral: a client offering three roots, two with the same folder name,
// sees one tree: each root below its name (docs, docs-2, content), every tool across them,
// each root its own project with its own owner.
func TestClientRootsSeveral(t *testing.T) {
	home := t.TempDir()
	docs, docs2, content := workspace(t)
	roots := &clientRoots{}
	roots.set(fileURI(docs), "https://example.com/not-a-folder", fileURI(docs2), fileURI(content))
	c := noRootClient(t, home, roots)
	st := waitRoots(t, c, "docs", "docs-2", "content")
	for i, r := range []string{docs, docs2, content} {
		testkit.Equal(t, st.Roots[i].Root, r, "root "+st.Roots[i].Name)
		testkit.Equal(t, st.Roots[i].Project, datadir.ProjectName(r), "project of "+st.Roots[i].Name)
		if !owner.Held(projectData(home, r)) {
			t.Errorf("no owner holds the project of %s", r)
		}
	}

	t.Run("view", func(t *testing.T) {
		var top query.FolderView
		call(t, c, "view", map[string]any{"path": ""}, &top)
		var names []string
		for _, f := range top.Folders {
			names = append(names, f.Name+"="+f.Path)
		}
		testkit.Equal(t, strings.Join(names, " "), "docs=docs docs-2=docs-2 content=content", "the top lists the roots")
		testkit.Equal(t, top.TotalDocuments, st.Documents, "documents at the top")
		var d query.DocumentView
		call(t, c, "view", map[string]any{"path": "docs-2/intro.md"}, &d)
		testkit.Equal(t, d.Path, "docs-2/intro.md", "path of a document of docs-2")
		if !strings.Contains(d.Content, "beta") {
			t.Errorf("view docs-2/intro.md = %q; want the second docs' intro", d.Content)
		}
		call(t, c, "view", map[string]any{"path": "docs/intro"}, &d)
		testkit.Equal(t, d.Path, "docs/intro.md", "path of the first docs' intro, its extension left out")
		var f query.FolderView
		call(t, c, "view", map[string]any{"path": "docs"}, &f)
		testkit.Equal(t, f.Path+" "+f.Name, "docs docs", "a root viewed")
		testkit.Equal(t, f.Folders[0].Path, "docs/sub", "a folder of a root")
		for p, want := range map[string]string{"nope/x.md": "not_found", "../etc/passwd": "invalid_path", "docs/../../x": "invalid_path"} {
			testkit.Equal(t, string(testkit.DecodeFailure(t, testkit.Call(t, c, "view", map[string]any{"path": p})).ErrorType), want, "view "+p)
		}
	})

	t.Run("tree", func(t *testing.T) {
		var tr query.TreeView
		call(t, c, "tree", map[string]any{"folder": "", "depth": 2}, &tr)
		var names []string
		for _, ch := range tr.Children {
			names = append(names, ch.Path)
			for _, g := range ch.Children {
				if !strings.HasPrefix(g.Path, ch.Path+"/") {
					t.Errorf("%s in the tree of %s", g.Path, ch.Path)
				}
			}
		}
		testkit.Equal(t, strings.Join(names, " "), "docs docs-2 content", "tree of the top")
		testkit.Equal(t, tr.Documents, st.Documents, "documents in the tree")
		call(t, c, "tree", map[string]any{"folder": "docs/sub"}, &tr)
		testkit.Equal(t, tr.Path, "docs/sub", "tree of a folder of a root")
		testkit.Equal(t, tr.Children[0].Path, "docs/sub/deep.md", "its document")
	})

	t.Run("search", func(t *testing.T) {
		var p searchPage
		call(t, c, "search", map[string]any{"query": "zebra", "scope": "all"}, &p)
		var first []string
		for _, h := range p.Hits[:3] {
			first = append(first, strings.SplitN(h.Path, "/", 2)[0])
		}
		sort.Strings(first)
		testkit.Equal(t, strings.Join(first, " "), "content docs docs-2", "every root's best hit first")
		all := p.paths()
		for _, want := range []string{"docs/intro.md", "docs/sub/deep.md", "docs-2/intro.md", "content/notes/zebra.md"} {
			if !slices.Contains(all, want) {
				t.Errorf("search zebra = %v; want %s among the hits", all, want)
			}
		}
		testkit.Equal(t, p.Total, len(all), "total")
		// A page at a time: every hit once, in the same order.
		var paged []string
		cursor := ""
		for i := 0; i < 20; i++ {
			var pg searchPage
			args := map[string]any{"query": "zebra", "scope": "all", "limit": 1}
			if cursor != "" {
				args["cursor"] = cursor
			}
			call(t, c, "search", args, &pg)
			paged = append(paged, pg.paths()...)
			if cursor = pg.NextCursor; cursor == "" {
				break
			}
		}
		testkit.Equal(t, strings.Join(paged, " "), strings.Join(all, " "), "pages of one hit")
		// A folder narrows the search to one root.
		call(t, c, "search", map[string]any{"query": "zebra", "folder": "docs-2"}, &p)
		testkit.Equal(t, strings.Join(p.paths(), " "), "docs-2/intro.md", "search in docs-2")
		call(t, c, "search", map[string]any{"query": "marmot", "folder": "docs/sub"}, &p)
		testkit.Equal(t, strings.Join(p.paths(), " "), "docs/sub/deep.md", "search in docs/sub")
		testkit.Equal(t, string(testkit.DecodeFailure(t, testkit.Call(t, c, "search", map[string]any{"query": ""})).ErrorType),
			"invalid_argument", "an empty query")
	})

	t.Run("list, get_summary, analyze", func(t *testing.T) {
		var l query.ListResult
		call(t, c, "list", map[string]any{"scope": "all", "limit": 500}, &l)
		testkit.Equal(t, l.Total, st.Documents, "documents listed")
		testkit.Equal(t, len(l.Documents), l.Total, "all on one page")
		var paged []string
		for off := 0; off < l.Total; off += 7 {
			var pg query.ListResult
			call(t, c, "list", map[string]any{"scope": "all", "limit": 7, "offset": off}, &pg)
			for _, d := range pg.Documents {
				paged = append(paged, d.Path)
			}
		}
		var whole []string
		for _, d := range l.Documents {
			whole = append(whole, d.Path)
		}
		testkit.Equal(t, strings.Join(paged, " "), strings.Join(whole, " "), "pages of seven")
		call(t, c, "list", map[string]any{"folder": "docs-2"}, &l)
		testkit.Equal(t, l.Total, 2, "documents of docs-2")
		testkit.Equal(t, l.Documents[0].Path, "docs-2/intro.md", "first of docs-2")
		var sum query.SummaryResult
		call(t, c, "get_summary", map[string]any{"path": "docs/sub/deep.md"}, &sum)
		testkit.Equal(t, sum.Path+" "+sum.Title, "docs/sub/deep.md Deep", "summary")
		var an query.Analysis
		call(t, c, "analyze", map[string]any{"path": "docs-2/other.md"}, &an)
		testkit.Equal(t, an.Path+" "+an.Title, "docs-2/other.md Other", "analysis")
	})

	t.Run("focus", func(t *testing.T) {
		var f query.FocusResult
		call(t, c, "focus", map[string]any{"context": "docs-2"}, &f)
		testkit.Equal(t, f.Focus, "docs-2", "focus")
		testkit.Equal(t, f.Documents, 2, "documents in the focus")
		var l query.ListResult
		call(t, c, "list", map[string]any{}, &l)
		var got []string
		for _, d := range l.Documents {
			got = append(got, d.Path+":"+d.Type)
		}
		testkit.Equal(t, strings.Join(got, " "), "docs-2/intro.md:focus docs-2/other.md:focus", "list in the focus")
		call(t, c, "list", map[string]any{"scope": "all", "limit": 4}, &l)
		got = nil
		for _, d := range l.Documents {
			got = append(got, fmt.Sprintf("%s:%s:%v", d.Path, d.Type, d.InFocus))
		}
		testkit.Equal(t, strings.Join(got, " "), "docs/intro.md:other:false docs/sub/deep.md:other:false docs-2/intro.md:focus:true docs-2/other.md:focus:true",
			"list of every root, one in focus")
		testkit.Equal(t, l.Counts["focus"], 2, "documents in the focus, of every root's")
		var p searchPage
		call(t, c, "search", map[string]any{"query": "zebra"}, &p)
		testkit.Equal(t, strings.Join(p.paths(), " "), "docs-2/intro.md", "search in the focus")
		call(t, c, "focus", map[string]any{"context": "docs/sub"}, &f)
		testkit.Equal(t, f.Focus+" "+strings.Join(f.History, ","), "docs/sub docs-2,", "focus and history")
		call(t, c, "focus", map[string]any{"context": ""}, &f)
		testkit.Equal(t, f.Documents, st.Documents, "documents in the focus of every root")
	})

	t.Run("attach", func(t *testing.T) {
		r := testkit.Call(t, c, "attach", map[string]any{"filename": "n.md", "content": "# N\n\nThe quokka smiles.\n"})
		if r.IsError {
			t.Fatalf("attach: %s", testkit.Text(t, r))
		}
		var p searchPage
		call(t, c, "search", map[string]any{"query": "quokka"}, &p)
		testkit.Equal(t, strings.Join(p.paths(), " "), "session:n.md", "a session document, found once")
		var d query.DocumentView
		call(t, c, "view", map[string]any{"path": "session:n.md"}, &d)
		if !strings.Contains(d.Content, "quokka") {
			t.Errorf("view session:n.md = %q", d.Content)
		}
		call(t, c, "focus", map[string]any{"context": "docs-2"}, new(query.FocusResult))
		call(t, c, "search", map[string]any{"query": "quokka"}, &p)
		testkit.Equal(t, strings.Join(p.paths(), " "), "session:n.md", "the session's document with another root in focus")
		call(t, c, "focus", map[string]any{"context": ""}, new(query.FocusResult))
	})

	t.Run("content and resources", func(t *testing.T) {
		for _, name := range []string{"content/guidelines", "guidelines"} {
			var s struct {
				Success bool   `json:"success"`
				Value   string `json:"value"`
			}
			call(t, c, "get_content", map[string]any{"category_or_collection": name}, &s)
			if !s.Success || s.Value == "" {
				t.Errorf("get_content %s = %+v", name, s)
			}
		}
		call(t, c, "get_category_content", map[string]any{"category": "content/guidelines"}, new(map[string]any))
		req := mcp.ReadResourceRequest{}
		req.Params.URI = "guide://content/guidelines/style"
		res, err := c.ReadResource(testkit.Context(t), req)
		testkit.NoErr(t, err, "read guide://content/guidelines/style")
		tc := res.Contents[0].(mcp.TextResourceContents)
		testkit.Equal(t, tc.URI, req.Params.URI, "the resource's URI")
		if !strings.Contains(strings.ToLower(tc.Text), "style") {
			t.Errorf("guide://content/guidelines/style = %q", tc.Text)
		}
		req.Params.URI = "guide://docs-2/_status"
		res, err = c.ReadResource(testkit.Context(t), req)
		testkit.NoErr(t, err, "a root's own status")
		if !strings.Contains(res.Contents[0].(mcp.TextResourceContents).Text, datadir.ProjectName(docs2)) {
			t.Errorf("guide://docs-2/_status = %s", res.Contents[0].(mcp.TextResourceContents).Text)
		}
		pr := mcp.GetPromptRequest{}
		pr.Params.Name = "guide"
		prompt, err := c.GetPrompt(testkit.Context(t), pr)
		testkit.NoErr(t, err, "the prompt")
		if text := prompt.Messages[0].Content.(mcp.TextContent).Text; !strings.Contains(text, "several roots") || !strings.Contains(text, "docs-2") {
			t.Errorf("the prompt says nothing of the roots: %s", text)
		}
		tpl, err := c.ListResourceTemplates(testkit.Context(t), mcp.ListResourceTemplatesRequest{})
		testkit.NoErr(t, err, "templates")
		for _, x := range tpl.ResourceTemplates {
			if !strings.HasPrefix(x.URITemplate.Raw(), "guide://{root}/") {
				t.Errorf("template %s: want it below {root}", x.URITemplate.Raw())
			}
		}
	})

	t.Run("changes", func(t *testing.T) {
		var start query.ChangesView
		call(t, c, "changes", map[string]any{"since": "now"}, &start)
		testkit.WriteFile(t, docs2, "fresh.md", "# Fresh\n\nnew in the second docs\n")
		testkit.WriteFile(t, content, "notes/fresh.md", "# Fresh\n\nnew in the content\n")
		testkit.NoErr(t, os.Remove(filepath.Join(docs, "intro.md")), "remove docs/intro.md")
		var v query.ChangesView
		call(t, c, "changes", map[string]any{"cursor": start.Cursor}, &v)
		var got []string
		for _, ch := range v.Changes {
			got = append(got, ch.Kind+" "+ch.Path)
		}
		sort.Strings(got)
		testkit.Equal(t, strings.Join(got, ", "), "added content/notes/fresh.md, added docs-2/fresh.md, deleted docs/intro.md",
			"the changes of every root after the cursor")
		if !v.Complete || !strings.HasPrefix(v.Cursor, "changes:") {
			t.Errorf("changes across roots: complete %v, cursor %q", v.Complete, v.Cursor)
		}
		var one query.ChangesView
		call(t, c, "changes", map[string]any{"cursor": start.Cursor, "folder": "docs-2"}, &one)
		testkit.Equal(t, len(one.Changes), 1, "changes of docs-2 after the merged cursor")
		testkit.Equal(t, one.Changes[0].Path, "docs-2/fresh.md", "the change of docs-2")
		var after query.ChangesView
		call(t, c, "changes", map[string]any{"cursor": v.Cursor}, &after)
		testkit.Equal(t, len(after.Changes), 0, "changes after the latest cursor")
		req := mcp.ReadResourceRequest{}
		req.Params.URI = "guide://_changes"
		res, err := c.ReadResource(testkit.Context(t), req)
		testkit.NoErr(t, err, "read guide://_changes")
		if text := res.Contents[0].(mcp.TextResourceContents).Text; !strings.Contains(text, `"docs-2/fresh.md"`) {
			t.Errorf("guide://_changes = %.300s", text)
		}
	})
}

// TestClientRootsChangeSeveral: a change of roots adds and drops projects, and the
// session's other state (its attached documents, the roots still offered) stays.
func TestClientRootsChangeSeveral(t *testing.T) {
	home := t.TempDir()
	docs, docs2, content := workspace(t)
	roots := &clientRoots{}
	roots.set(fileURI(docs), fileURI(docs2))
	c := noRootClient(t, home, roots)
	waitRoots(t, c, "docs", "docs-2")
	r := testkit.Call(t, c, "attach", map[string]any{"filename": "n.md", "content": "# N\n\nThe quokka smiles.\n"})
	if r.IsError {
		t.Fatalf("attach: %s", testkit.Text(t, r))
	}
	var start query.ChangesView
	call(t, c, "changes", map[string]any{"since": "now"}, &start)
	changed := func(cursor string) (kinds map[string]string, next string) {
		t.Helper()
		var v query.ChangesView
		call(t, c, "changes", map[string]any{"cursor": cursor, "limit": 1000}, &v)
		if !v.Complete {
			t.Fatalf("changes from %s: not complete", cursor)
		}
		kinds = map[string]string{}
		for _, ch := range v.Changes {
			kinds[ch.Path] = ch.Kind
		}
		return kinds, v.Cursor
	}

	// docs-2 dropped, content added.
	roots.set(fileURI(docs), fileURI(content))
	testkit.NoErr(t, c.RootListChanges(testkit.Context(t)), "roots changed")
	waitRoots(t, c, "docs", "content")
	// changes from a cursor of before: a root added since lists what it got since the
	// cursor; a root dropped keeps its place in the cursor.
	testkit.WriteFile(t, docs, "late.md", "# Late\n\nlate in docs\n")
	testkit.WriteFile(t, content, "late.md", "# Late\n\nlate in content\n")
	kinds, next := changed(start.Cursor)
	testkit.Equal(t, kinds["docs/late.md"]+" "+kinds["content/late.md"], "added added", "changes of the roots after the change of roots")
	for p := range kinds {
		if strings.HasPrefix(p, "docs-2/") || strings.HasPrefix(p, "session:") {
			t.Errorf("changes list %s", p)
		}
	}
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		return !owner.Held(projectData(home, docs2)), "the dropped root's owner still has a client"
	})
	var d query.DocumentView
	call(t, c, "view", map[string]any{"path": "session:n.md"}, &d)
	call(t, c, "view", map[string]any{"path": "content/notes/zebra.md"}, &d)
	testkit.Equal(t, testkit.DecodeFailure(t, testkit.Call(t, c, "view", map[string]any{"path": "docs-2/intro.md"})).ErrorType,
		"not_found", "a path of the dropped root")

	// docs-2 again: the same name, the other root's kept.
	roots.set(fileURI(docs), fileURI(content), fileURI(docs2))
	testkit.NoErr(t, c.RootListChanges(testkit.Context(t)), "roots changed")
	waitRoots(t, c, "docs", "content", "docs-2")
	testkit.WriteFile(t, docs2, "back.md", "# Back\n\nback in docs-2\n")
	kinds, _ = changed(next)
	testkit.Equal(t, kinds["docs-2/back.md"], "added", "a change of the root back, from its place in the cursor")
	testkit.Equal(t, len(kinds), 1, fmt.Sprintf("the changes after the last cursor: %v", kinds))

	// One root: its paths as they are, no prefix; the session's document is still there.
	roots.set(fileURI(docs))
	testkit.NoErr(t, c.RootListChanges(testkit.Context(t)), "roots changed")
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		r := testkit.Call(t, c, "view", map[string]any{"path": "intro.md"})
		return !r.IsError, testkit.Text(t, r)
	})
	testkit.Equal(t, testkit.WaitCaughtUp(t, c).Project, datadir.ProjectName(docs), "the one root's project")
	call(t, c, "view", map[string]any{"path": "session:n.md"}, &d)
	if !strings.Contains(d.Content, "quokka") {
		t.Errorf("the session's document after the roots changed: %q", d.Content)
	}
	testkit.RequireMatchesDisk(t, c, docs)
}
