package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRoot answers as a project's owner would, over the lines a Front gives it: search
// pages through its hits (best first) with a cursor, view("") tells its size.
type fakeRoot struct {
	hits []fakeHit
	fail bool // every call fails, as when the root's owner cannot be reached
	docs int  // documents in its tree

	mu      sync.Mutex
	changes []fakeChange // changes pages through these, a cursor "c<n>" after the n-th
}

type fakeChange struct {
	Kind string `json:"change"`
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	Time string `json:"time"`
	Diff string `json:"diff,omitempty"`
}

type fakeHit struct {
	Path    string  `json:"path"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet,omitempty"`
}

func (f *fakeRoot) serve(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	var mu sync.Mutex
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		var res any = map[string]any{}
		if req.Method == "tools/call" {
			res = f.tool(req.Params.Name, req.Params.Arguments)
		}
		mu.Lock()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": res})
		_, err := out.Write(append(b, '\n'))
		if req.Method == "resources/subscribe" && err == nil {
			// As if a change came at once: the resource subscribed to is updated.
			var p struct {
				Params struct {
					URI string `json:"uri"`
				} `json:"params"`
			}
			_ = json.Unmarshal(sc.Bytes(), &p)
			b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated",
				"params": map[string]any{"uri": p.Params.URI}})
			_, err = out.Write(append(b, '\n'))
		}
		mu.Unlock()
		if err != nil {
			return err
		}
	}
	return sc.Err()
}

func (f *fakeRoot) tool(name string, args map[string]any) any {
	if f.fail {
		return map[string]any{"isError": true, "content": []any{map[string]any{"type": "text",
			"text": `{"success":false,"error_type":"io_error","error":"the owner went away","instruction":"retry"}`}}}
	}
	var v any
	switch name {
	case "search":
		from, _ := strconv.Atoi(fmt.Sprint(args["cursor"]))
		limit := int(args["limit"].(float64))
		end := min(from+limit, len(f.hits))
		from = min(from, end)
		r := map[string]any{"query": args["query"], "folder": "", "total": len(f.hits), "hits": f.hits[from:end]}
		if end < len(f.hits) {
			r["next_cursor"] = strconv.Itoa(end)
		}
		v = r
	case "tree":
		var children []any
		for i := range f.docs {
			children = append(children, map[string]any{"type": "document", "name": fmt.Sprintf("d%05d.md", i),
				"path": fmt.Sprintf("d%05d.md", i), "words": 1})
		}
		v = map[string]any{"type": "folder", "name": "", "path": "", "words": f.docs, "documents": f.docs,
			"children": children, "depth": args["depth"], "entries": f.docs}
	case "changes":
		f.mu.Lock()
		defer f.mu.Unlock()
		from := 0
		if c, ok := args["cursor"].(string); ok {
			n, err := strconv.Atoi(strings.TrimPrefix(c, "c"))
			if !strings.HasPrefix(c, "c") || err != nil || n > len(f.changes) {
				return map[string]any{"isError": true, "content": []any{map[string]any{"type": "text",
					"text": `{"success":false,"error_type":"invalid_argument","error":"not a cursor","instruction":"fix it"}`}}}
			}
			from = n
		}
		limit := 200
		if l, ok := args["limit"].(float64); ok {
			limit = int(l)
		}
		end := min(from+limit, len(f.changes))
		r := map[string]any{"cursor": fmt.Sprint("c", end), "from": fmt.Sprint("c", from), "complete": end == len(f.changes),
			"count": end - from, "changes": f.changes[from:end], "history_kept": 3}
		if end < len(f.changes) {
			r["message"] = fmt.Sprintf("More changes follow: call changes again with cursor %q.", r["cursor"])
		}
		v = r
	case "echo": // a tool the front does not know
		p, _ := args["path"].(string)
		if p == "" {
			p = "x.md"
		}
		v = map[string]any{"path": p, "size": len(f.hits)}
	case "view":
		v = map[string]any{"type": "folder", "path": "", "name": "", "total_documents": len(f.hits), "total_words": 0,
			"folders": []any{}, "documents": []any{}}
	}
	b, _ := json.Marshal(v)
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": string(b)}}}
}

// frontClient drives a Front as an MCP client offering roots.
type frontClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan []byte
	next  int
}

func startFront(t *testing.T, roots []string, fakes map[string]*fakeRoot) *frontClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	f := &Front{In: inR, Out: outW, Handshake: &Handshake{Latest: "2025-06-18"},
		Serve: func(ctx context.Context, root string, in io.Reader, out io.Writer) error {
			return fakes[root].serve(in, out)
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.Run(ctx) }()
	c := &frontClient{t: t, in: inW, lines: make(chan []byte, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		for sc.Scan() {
			c.lines <- slices.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() { inW.Close(); cancel(); <-done; outW.Close() })
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"0"}}}`)
	c.read()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ask := c.read() // roots/list
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(ask, &req)
	var list []map[string]string
	for _, r := range roots {
		list = append(list, map[string]string{"uri": "file://" + r})
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"roots": list}})
	c.send(string(b))
	return c
}

func (c *frontClient) send(line string) {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *frontClient) read() []byte {
	select {
	case l := <-c.lines:
		return l
	case <-time.After(10 * time.Second):
		c.t.Fatal("no answer from the front")
		return nil
	}
}

// tool calls a tool and decodes its answer's text into v.
func (c *frontClient) tool(name string, args map[string]any, v any) {
	c.t.Helper()
	if isError := c.toolResult(name, args, v); isError {
		c.t.Fatalf("%s %v: an error: %+v", name, args, v)
	}
}

// toolResult calls a tool, decodes its answer's text into v, and says whether it failed.
func (c *frontClient) toolResult(name string, args map[string]any, v any) bool {
	c.t.Helper()
	c.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	c.send(string(b))
	var r struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(c.read(), &r); err != nil || len(r.Result.Content) == 0 {
		c.t.Fatalf("%s %v: %+v (%v)", name, args, r, err)
	}
	if err := json.Unmarshal([]byte(r.Result.Content[0].Text), v); err != nil {
		c.t.Fatal(err)
	}
	return r.Result.IsError
}

type mergedPage struct {
	Total int       `json:"total"`
	Hits  []fakeHit `json:"hits"`
	Next  string    `json:"next_cursor"`
}

// TestSearchMergesByRank: a search across roots shows every root's k-th hit before any
// root's k+1-th, hits of one rank by score; paging, whatever the page size, shows every hit
// once, in the order of one long page.
func TestSearchMergesByRank(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		fakes := map[string]*fakeRoot{}
		var roots []string
		total := 0
		for i := range 3 {
			dir := filepath.Join(base, strconv.Itoa(trial), strconv.Itoa(i), "docs")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			n := rng.IntN(30)
			if trial == 0 {
				n = 150 // more than a root gives in one page
			}
			f := &fakeRoot{}
			for j := range n {
				f.hits = append(f.hits, fakeHit{Path: fmt.Sprintf("d%03d.md", j), Score: float64(n - j + rng.IntN(3))})
			}
			slices.SortStableFunc(f.hits, func(a, b fakeHit) int { return int(b.Score - a.Score) })
			for j := range f.hits {
				f.hits[j].Path = fmt.Sprintf("d%03d.md", j) // named by rank
			}
			fakes[dir], roots = f, append(roots, dir)
			total += n
		}
		c := startFront(t, roots, fakes)
		var whole []string
		cursor := ""
		for {
			var p mergedPage
			args := map[string]any{"query": "x", "limit": 100}
			if cursor != "" {
				args["cursor"] = cursor
			}
			c.tool("search", args, &p)
			if p.Total != total {
				t.Fatalf("trial %d: total %d; want %d", trial, p.Total, total)
			}
			for _, h := range p.Hits {
				whole = append(whole, h.Path)
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		if len(whole) != total {
			t.Fatalf("trial %d: %d hits; want %d", trial, len(whole), total)
		}
		// Rank by rank, and each root's hits in its own order.
		seen := map[string]bool{}
		last := -1
		for _, p := range whole {
			if seen[p] {
				t.Fatalf("trial %d: %s twice", trial, p)
			}
			seen[p] = true
			rank, _ := strconv.Atoi(strings.TrimSuffix(p[strings.LastIndex(p, "/d")+2:], ".md"))
			if rank < last {
				t.Fatalf("trial %d: %s after a hit of rank %d: %v", trial, p, last, whole)
			}
			last = rank
		}
		sizes := []int{1, 3, 7}
		if trial == 0 {
			sizes = []int{7, 40}
		}
		for _, size := range sizes {
			var paged []string
			cursor := ""
			for range total + 1 {
				var p mergedPage
				args := map[string]any{"query": "x", "limit": size}
				if cursor != "" {
					args["cursor"] = cursor
				}
				c.tool("search", args, &p)
				for _, h := range p.Hits {
					paged = append(paged, h.Path)
				}
				if cursor = p.Next; cursor == "" {
					break
				}
			}
			if !slices.Equal(paged, whole) {
				t.Fatalf("trial %d, pages of %d:\n got %v\nwant %v", trial, size, paged, whole)
			}
		}
	}
}

// TestSearchPartialWhenARootFails: a root that cannot answer makes a search over every
// root partial, naming it, and the others' hits come; a cursor not of this search is
// refused.
func TestSearchPartialWhenARootFails(t *testing.T) {
	_, roots, fakes := fakeRoots(t, []*fakeRoot{{hits: []fakeHit{{Path: "a.md", Score: 2}}}, {fail: true}, {hits: []fakeHit{{Path: "c.md", Score: 1}}}}...)
	c := startFront(t, roots, fakes)
	var p struct {
		mergedPage
		Partial struct {
			Note string `json:"note"`
		} `json:"partial"`
	}
	c.tool("search", map[string]any{"query": "x"}, &p)
	if got := fmt.Sprint(p.Hits); got != "[{r0/a.md 2 } {r2/c.md 1 }]" || !strings.Contains(p.Partial.Note, "r1 was not searched") {
		t.Errorf("search with a root failing: hits %s, partial %q", got, p.Partial.Note)
	}
	for _, cursor := range []string{"roots:garbage", encodeCursor(searchCursor{Query: "y", Roots: map[string]*rootPlace{}})} {
		var f struct {
			Type string `json:"error_type"`
		}
		if !c.toolResult("search", map[string]any{"query": "x", "cursor": cursor}, &f) || f.Type != "invalid_argument" {
			t.Errorf("search with cursor %q: %+v; want invalid_argument", cursor, f)
		}
	}
}

// TestTreeOfRootsBounded: tree("") of several roots, each tree within its own bound but
// too large together, leaves out the last roots' trees and says how to see them.
func TestTreeOfRootsBounded(t *testing.T) {
	_, roots, fakes := fakeRoots(t, fakesOf(3, func(i int) *fakeRoot { return &fakeRoot{docs: 300} })...)
	c := startFront(t, roots, fakes)
	var tr struct {
		Documents int `json:"documents"`
		Children  []struct {
			Path     string `json:"path"`
			Children []any  `json:"children"`
		} `json:"children"`
		Truncated bool   `json:"truncated"`
		Message   string `json:"message"`
	}
	c.tool("tree", map[string]any{"folder": "", "depth": 3}, &tr)
	b, _ := json.Marshal(tr)
	if tr.Documents != 900 || len(tr.Children) != 3 || len(tr.Children[0].Children) != 300 || tr.Children[2].Children != nil ||
		!tr.Truncated || !strings.Contains(tr.Message, `call tree("r2")`) {
		t.Errorf("tree of three large roots: %.300s", b)
	}
}

// TestSearchPageBounded: hits of several roots that together pass an answer's bound end
// the page early, truncated; the pages still show every hit once.
func TestSearchPageBounded(t *testing.T) {
	_, roots, fakes := fakeRoots(t, fakesOf(3, func(i int) *fakeRoot {
		f := &fakeRoot{}
		for j := range 20 {
			f.hits = append(f.hits, fakeHit{Path: fmt.Sprintf("d%02d.md", j), Score: float64(20 - j), Snippet: strings.Repeat("x", 3000)})
		}
		return f
	})...)
	c := startFront(t, roots, fakes)
	seen := map[string]bool{}
	cursor, pages := "", 0
	for ; pages < 10; pages++ {
		var p struct {
			mergedPage
			Truncated bool `json:"truncated"`
		}
		args := map[string]any{"query": "x", "limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		c.tool("search", args, &p)
		if b, _ := json.Marshal(p); len(b) > 100_000 || len(p.Hits) == 0 {
			t.Fatalf("page %d: %d bytes, %d hits", pages, len(b), len(p.Hits))
		}
		for _, h := range p.Hits {
			if seen[h.Path] {
				t.Fatalf("%s twice", h.Path)
			}
			seen[h.Path] = true
		}
		if cursor = p.Next; cursor == "" {
			break
		}
		if !p.Truncated {
			t.Errorf("page %d ends early, not marked truncated", pages)
		}
	}
	if len(seen) != 60 || pages < 1 {
		t.Errorf("%d hits in %d pages; want 60 in more than one", len(seen), pages+1)
	}
}

// TestUnknownToolRouted: a tool the front does not know goes to the root its path names,
// or to the first root, its answer's paths below the root's name.
func TestUnknownToolRouted(t *testing.T) {
	_, roots, fakes := fakeRoots(t, fakesOf(2, func(i int) *fakeRoot { return &fakeRoot{hits: make([]fakeHit, i)} })...)
	c := startFront(t, roots, fakes)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "r0/x.md 0"},
		{map[string]any{"path": "r1/y.md"}, "r1/y.md 1"},
	} {
		var v struct {
			Path string `json:"path"`
			Size int    `json:"size"`
		}
		c.tool("echo", tc.args, &v)
		if got := fmt.Sprint(v.Path, " ", v.Size); got != tc.want {
			t.Errorf("echo %v = %s; want %s", tc.args, got, tc.want)
		}
	}
}

// TestRootNames: a root is named after its folder; a second of the same name, or one that
// would read as the status resource, takes -2.
func TestRootNames(t *testing.T) {
	var names []string
	taken := func(n string) bool { return slices.Contains(names, n) }
	for _, root := range []string{"/a/docs", "/b/docs", "/c/docs", "/", "/x/_status", "/y/session:x", "/z/notes"} {
		names = append(names, rootName(root, taken))
	}
	want := []string{"docs", "docs-2", "docs-3", "root", "_status-2", "root-2", "notes"}
	if !slices.Equal(names, want) {
		t.Errorf("names = %v; want %v", names, want)
	}
}

// TestPrefixPaths: every path of an answer goes below the root's name, session documents
// and the order of the keys left as they are.
func TestPrefixPaths(t *testing.T) {
	in := `{"type":"folder","path":"","name":"","n":1.50,"folders":[{"path":"a","name":"a"}],` +
		`"hits":[{"path":"session:x.md","context_type":"session","context_id":"session"},{"path":"b/c.md","context_id":"b","snippet":"a < b & c"}],` +
		`"focus":"","history":["","a"],"folder":"a"}`
	v, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	prefixPaths(v, "docs-2")
	want := `{"type":"folder","path":"docs-2","name":"docs-2","n":1.50,"folders":[{"path":"docs-2/a","name":"a"}],` +
		`"hits":[{"path":"session:x.md","context_type":"session","context_id":"session"},{"path":"docs-2/b/c.md","context_id":"docs-2/b","snippet":"a < b & c"}],` +
		`"focus":"docs-2","history":["docs-2","docs-2/a"],"folder":"docs-2/a"}`
	if got := string(encode(v)); got != want {
		t.Errorf("prefixPaths:\n got %s\nwant %s", got, want)
	}
}

// TestFolders: every local folder among the roots, in order, once.
func TestFolders(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := Folders([]Root{{URI: "https://x"}, {URI: "file://" + b}, {URI: "file://" + a}, {URI: "file://localhost" + b}})
	if !slices.Equal(got, []string{b, a}) {
		t.Errorf("Folders = %v; want %v", got, []string{b, a})
	}
}

type changesPage struct {
	Cursor   string       `json:"cursor"`
	Complete bool         `json:"complete"`
	Count    int          `json:"count"`
	Changes  []fakeChange `json:"changes"`
	Message  string       `json:"message"`
	Partial  struct {
		Note string `json:"note"`
	} `json:"partial"`
}

// TestChangesAcrossRoots: changes across roots merges every root's changes by time, their
// paths below the root's name; paging, whatever the page size, shows every change once in
// that order, and a cursor hears only of later changes, of every root; a folder narrows to
// one root, which a merged cursor can continue; a root that fails makes the answer partial,
// naming it, and the cursor keeps its place; a cursor not of a merged changes is refused.
func TestChangesAcrossRoots(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) string { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC).Format(time.RFC3339Nano) }
	fakes := map[string]*fakeRoot{}
	var roots []string
	rng := rand.New(rand.NewPCG(3, 4))
	var want []string // every change, as the client sees it, by time, then root
	for s := range 60 {
		for i := range 3 {
			if rng.IntN(3) == i {
				want = append(want, fmt.Sprintf("r%d/d%02d.md", i, s))
			}
		}
	}
	for i := range 3 {
		f := &fakeRoot{}
		for _, w := range want {
			if p, ok := strings.CutPrefix(w, fmt.Sprintf("r%d/", i)); ok {
				s, _ := strconv.Atoi(p[1:3])
				f.changes = append(f.changes, fakeChange{Kind: "modified", Path: p, Time: at(s)})
			}
		}
		dir := filepath.Join(base, fmt.Sprint("r", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fakes[dir], roots = f, append(roots, dir)
	}
	fakes[roots[1]].changes[0].Kind, fakes[roots[1]].changes[0].From = "moved", "old/x.md"
	c := startFront(t, roots, fakes)
	paths := func(p changesPage) []string {
		var out []string
		for _, ch := range p.Changes {
			out = append(out, ch.Path)
		}
		return out
	}
	var all changesPage
	c.tool("changes", map[string]any{}, &all)
	if got := paths(all); !slices.Equal(got, want) || !all.Complete || all.Count != len(want) {
		t.Fatalf("changes of every root: %v (complete %v), want %v", got, all.Complete, want)
	}
	if ch := all.Changes[slices.Index(paths(all), "r1/"+fakes[roots[1]].changes[0].Path)]; ch.From != "r1/old/x.md" {
		t.Errorf("a moved document's from: %q, want r1/old/x.md", ch.From)
	}
	for _, limit := range []int{1, 7, 20} {
		var got []string
		var p changesPage
		c.tool("changes", map[string]any{"limit": limit}, &p)
		for pages := 0; ; pages++ {
			if p.Count > limit || pages > len(want) {
				t.Fatalf("limit %d: a page of %d", limit, p.Count)
			}
			got = append(got, paths(p)...)
			if p.Complete {
				break
			}
			if !strings.Contains(p.Message, p.Cursor) {
				t.Errorf("limit %d: message %q names not the cursor", limit, p.Message)
			}
			cursor := p.Cursor
			p = changesPage{}
			c.tool("changes", map[string]any{"limit": limit, "cursor": cursor}, &p)
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: pages give %v, want %v", limit, got, want)
		}
	}

	// Later changes, from the cursor of the whole answer.
	for i, f := range []*fakeRoot{fakes[roots[0]], fakes[roots[2]]} {
		f.mu.Lock()
		f.changes = append(f.changes, fakeChange{Kind: "added", Path: fmt.Sprint("new", i, ".md"), Time: at(100 + i)})
		f.mu.Unlock()
	}
	var later changesPage
	c.tool("changes", map[string]any{"cursor": all.Cursor}, &later)
	if got := fmt.Sprint(paths(later)); got != "[r0/new0.md r2/new1.md]" || !later.Complete {
		t.Errorf("changes after the cursor: %s (complete %v)", got, later.Complete)
	}
	// A folder is one root's; a merged cursor continues in it.
	var one changesPage
	c.tool("changes", map[string]any{"folder": "r2", "cursor": all.Cursor}, &one)
	if got := fmt.Sprint(paths(one)); got != "[r2/new1.md]" {
		t.Errorf("changes of r2 after the merged cursor: %s", got)
	}
	c.tool("changes", map[string]any{"folder": "r0"}, &one)
	if got := paths(one); len(got) != len(fakes[roots[0]].changes) || !strings.HasPrefix(got[0], "r0/") {
		t.Errorf("changes of r0: %v", got)
	}

	// A root that fails: the others' changes come, the answer partial; its place is kept.
	fakes[roots[1]].mu.Lock()
	fakes[roots[1]].fail = true
	fakes[roots[1]].changes = append(fakes[roots[1]].changes, fakeChange{Kind: "added", Path: "late.md", Time: at(200)})
	fakes[roots[1]].mu.Unlock()
	var part changesPage
	c.tool("changes", map[string]any{"cursor": later.Cursor}, &part)
	if len(part.Changes) != 0 || !strings.Contains(part.Partial.Note, "root r1") {
		t.Errorf("changes with r1 failing: %v, partial %q", paths(part), part.Partial.Note)
	}
	fakes[roots[1]].mu.Lock()
	fakes[roots[1]].fail = false
	fakes[roots[1]].mu.Unlock()
	var back changesPage
	c.tool("changes", map[string]any{"cursor": part.Cursor}, &back)
	if got := fmt.Sprint(paths(back)); got != "[r1/late.md]" || back.Partial.Note != "" {
		t.Errorf("changes once r1 answers again: %s, partial %q", got, back.Partial.Note)
	}

	for _, cursor := range []string{"changes:garbage", "c3", encodeCursor(searchCursor{Query: "y", Roots: map[string]*rootPlace{}}),
		changesPrefix + "e30"} {
		var f struct {
			Type string `json:"error_type"`
		}
		if !c.toolResult("changes", map[string]any{"cursor": cursor}, &f) || f.Type != "invalid_argument" {
			t.Errorf("changes with cursor %q: %+v; want invalid_argument", cursor, f)
		}
	}
}

// TestChangesAcrossRootsBounded: changes of several roots, each root's page within its
// bound but too large together, end early; the pages still show every change once, and a
// diff's headers carry the root's name.
func TestChangesAcrossRootsBounded(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fakes := map[string]*fakeRoot{}
	var roots, want []string
	big := strings.Repeat("+a line of the new text\n", 1500) // 36k characters
	for i := range 2 {
		f := &fakeRoot{}
		for s := range 6 {
			p := fmt.Sprintf("d%d.md", s)
			f.changes = append(f.changes, fakeChange{Kind: "modified", Path: p,
				Time: time.Date(2026, 1, 1, 0, 0, 2*s+i, 0, time.UTC).Format(time.RFC3339Nano),
				Diff: "--- a/" + p + "\n+++ b/" + p + "\n@@ -1 +1,1500 @@\n" + big})
		}
		dir := filepath.Join(base, fmt.Sprint("r", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fakes[dir], roots = f, append(roots, dir)
	}
	for s := range 6 {
		want = append(want, fmt.Sprintf("r0/d%d.md", s), fmt.Sprintf("r1/d%d.md", s))
	}
	c := startFront(t, roots, fakes)
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatalf("no end to the pages: %v", got)
		}
		args := map[string]any{"limit": 10}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var p changesPage
		c.tool("changes", args, &p)
		if p.Count > 2 {
			t.Errorf("a page of %d changes of 36k characters each", p.Count)
		}
		for _, ch := range p.Changes {
			got = append(got, ch.Path)
			if !strings.HasPrefix(ch.Diff, "--- a/"+ch.Path+"\n+++ b/"+ch.Path+"\n") {
				t.Errorf("the diff of %s: %.60q", ch.Path, ch.Diff)
			}
		}
		if p.Complete {
			break
		}
		cursor = p.Cursor
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages give %v, want %v", got, want)
	}
}

// TestChangesSubscribedAcrossRoots: a client subscribed to guide://_changes of several
// roots hears of each root's update of its own changes as an update of guide://_changes.
func TestChangesSubscribedAcrossRoots(t *testing.T) {
	base, roots, fakes := fakeRoots(t, fakesOf(2, func(i int) *fakeRoot { return &fakeRoot{} })...)
	third := filepath.Join(base, "r2") // added later
	if err := os.Mkdir(third, 0o755); err != nil {
		t.Fatal(err)
	}
	fakes[third] = &fakeRoot{}
	c := startFront(t, roots, fakes)
	c.send(`{"jsonrpc":"2.0","id":"s","method":"resources/subscribe","params":{"uri":"guide://_changes"}}`)
	updated := map[string]int{}
	answered := false
	asked := false
	for !answered || updated["guide://_changes"] < 3 || updated["guide://r2/_changes"] < 1 {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if err := json.Unmarshal(c.read(), &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case string(m.ID) == `"s"`:
			answered = true
		case m.Method == "roots/list":
			// A root added: subscribed too, its updates are heard.
			var list []map[string]string
			for _, r := range append(slices.Clone(roots), third) {
				list = append(list, map[string]string{"uri": "file://" + r})
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"roots": list}})
			c.send(string(b))
		case m.Method == "notifications/resources/updated":
			updated[m.Params.URI]++
		}
		if updated["guide://_changes"] == 2 && !asked {
			asked = true
			c.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
		}
	}
}

// fakeRoots makes a folder r0, r1, … for each fake, below a fresh base folder: the roots
// a client offers, and the fake each one's owner is.
func fakeRoots(t *testing.T, fs ...*fakeRoot) (base string, roots []string, fakes map[string]*fakeRoot) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fakes = map[string]*fakeRoot{}
	for i, f := range fs {
		dir := filepath.Join(base, fmt.Sprint("r", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fakes[dir], roots = f, append(roots, dir)
	}
	return base, roots, fakes
}

// fakesOf is n fakes, the i-th made by each(i).
func fakesOf(n int, each func(i int) *fakeRoot) []*fakeRoot {
	fs := make([]*fakeRoot, n)
	for i := range fs {
		fs[i] = each(i)
	}
	return fs
}
