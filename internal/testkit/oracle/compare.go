package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/events"
)

// Diff is how what an MCP client sees through tree, view and search differs from the
// documents of a disk. The zero Diff means they agree.
type Diff struct {
	Phantom []string // documents tree lists that are not on disk
	Lost    []string // documents on disk that tree does not list
	Stale   []string // documents whose view differs from the disk: content or status
	// Other is the first difference of another kind ("" if none): a tool's error, a folder
	// missing from tree, a document search does not find or a hit not on disk.
	Other string
	// Sample is the first stale document's view beside the disk's.
	Sample string
}

// Empty reports whether the client's view and the disk agree.
func (d Diff) Empty() bool {
	return len(d.Phantom)+len(d.Lost)+len(d.Stale) == 0 && d.Other == ""
}

// String describes the difference in one line ("" when they agree).
func (d Diff) String() string {
	switch {
	case len(d.Phantom)+len(d.Lost) > 0:
		return fmt.Sprintf("tree differs from disk: %d not on disk %v, %d missing %v",
			len(d.Phantom), head(d.Phantom), len(d.Lost), head(d.Lost))
	case len(d.Stale) > 0:
		return fmt.Sprintf("%d stale: %s", len(d.Stale), d.Sample)
	}
	return d.Other
}

// node is the part of a tree result the comparison reads.
type node struct {
	Type      string  `json:"type"`
	Path      string  `json:"path"`
	Documents int     `json:"documents"`
	Children  []*node `json:"children"`
	Truncated bool    `json:"truncated"`
}

// walk collects documents and folders; a folder with documents below it but no children
// sits at the depth limit, and goes to more.
func (n *node) walk(docs, folders map[string]bool, more *[]string, top bool) {
	if n.Type == "document" {
		docs[n.Path] = true
		return
	}
	folders[n.Path] = true
	if !top && len(n.Children) == 0 && n.Documents > 0 {
		*more = append(*more, n.Path)
	}
	for _, c := range n.Children {
		c.walk(docs, folders, more, false)
	}
}

// Compare compares what an MCP client sees with disk (as Disk reads it): tree lists every
// document and its folder and nothing else; view shows each document's status, and the
// content of every one whose status is ok; view refuses a link that leaves the root; and a
// sample of the documents is each found by search, which finds nothing that is not on
// disk. Trees deeper than five levels are read from each fifth-level folder down. The
// error is for a call that failed (the transport, not the tool).
func Compare(ctx context.Context, c client.MCPClient, disk map[string]Doc) (Diff, error) {
	docs, folders, other, err := list(ctx, c)
	if err != nil || other != "" {
		return Diff{Other: other}, err
	}
	var d Diff
	for p := range docs {
		if _, ok := disk[p]; !ok {
			d.Phantom = append(d.Phantom, p)
		}
	}
	paths := make([]string, 0, len(disk))
	for p := range disk {
		if !docs[p] {
			d.Lost = append(d.Lost, p)
			continue
		}
		paths = append(paths, p)
	}
	sort.Strings(d.Phantom)
	sort.Strings(d.Lost)
	sort.Strings(paths)
	for _, p := range paths {
		if dir := path.Dir(p); dir != "." && !folders[dir] {
			d.Other = fmt.Sprintf("folder %q of %q missing from tree", dir, p)
			break
		}
	}
	for _, p := range paths {
		why, err := viewDiffers(ctx, c, p, disk[p])
		if err != nil {
			return d, err
		}
		if why != "" {
			d.Stale = append(d.Stale, p)
			if d.Sample == "" {
				d.Sample = why
			}
		}
	}
	if d.Empty() {
		d.Other, err = searchDiffers(ctx, c, disk)
	}
	return d, err
}

// list reads every document and folder tree lists, one level at a time where a listing is
// truncated, and page by page with view where one folder is too large for a listing.
// other is a tool's error.
func list(ctx context.Context, c client.MCPClient) (docs, folders map[string]bool, other string, err error) {
	docs, folders = map[string]bool{}, map[string]bool{}
	type visit struct {
		folder string
		depth  int
	}
	queue := []visit{{"", 5}}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		text, isErr, err := call(ctx, c, "tree", map[string]any{"folder": v.folder, "depth": v.depth})
		if err != nil {
			return nil, nil, "", err
		}
		if isErr {
			return nil, nil, fmt.Sprintf("tree(%q): %s", v.folder, text), nil
		}
		var n node
		if err := json.Unmarshal([]byte(text), &n); err != nil {
			return nil, nil, fmt.Sprintf("tree(%q): %v", v.folder, err), nil
		}
		if !n.Truncated {
			var more []string
			n.walk(docs, folders, &more, true)
			for _, f := range more {
				queue = append(queue, visit{f, 5})
			}
			continue
		}
		if v.depth > 1 {
			queue = append(queue, visit{v.folder, 1}) // one level at a time
			continue
		}
		// A folder too large for one listing: page through it with view.
		folders[v.folder] = true
		for offset := 0; ; {
			text, isErr, err := call(ctx, c, "view", map[string]any{"path": v.folder, "offset": offset})
			if err != nil {
				return nil, nil, "", err
			}
			var page struct {
				Folders    []struct{ Path string } `json:"folders"`
				Documents  []struct{ Path string } `json:"documents"`
				Truncated  bool                    `json:"truncated"`
				NextOffset int                     `json:"next_offset"`
			}
			if isErr || json.Unmarshal([]byte(text), &page) != nil {
				return nil, nil, fmt.Sprintf("view(%q, offset %d): %s", v.folder, offset, text), nil
			}
			for _, f := range page.Folders {
				queue = append(queue, visit{f.Path, 5})
			}
			for _, d := range page.Documents {
				docs[d.Path] = true
			}
			if !page.Truncated {
				break
			}
			offset = page.NextOffset
		}
	}
	return docs, folders, "", nil
}

// viewDiffers says how view of the document p differs from doc ("" when it agrees).
func viewDiffers(ctx context.Context, c client.MCPClient, p string, doc Doc) (string, error) {
	text, isErr, err := call(ctx, c, "view", map[string]any{"path": p})
	if err != nil {
		return "", err
	}
	if doc.Status == events.StatusOutsideRoot { // view refuses to follow it
		if !isErr {
			return fmt.Sprintf("view(%q) answers %s, but it is a link that leaves the root", p, clip(text)), nil
		}
		return "", nil
	}
	if isErr {
		return fmt.Sprintf("view(%q): %s", p, text), nil
	}
	var v struct {
		Content   string        `json:"content"`
		Status    events.Status `json:"status"`
		Truncated bool          `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return fmt.Sprintf("view(%q): %v", p, err), nil
	}
	switch {
	case v.Status != doc.Status:
		return fmt.Sprintf("view(%q) says %s, disk says %s", p, v.Status, doc.Status), nil
	case doc.Status == events.StatusOK && !v.Truncated && v.Content != doc.Content:
		return fmt.Sprintf("view(%q) = %q, disk has %q", p, clip(v.Content), clip(doc.Content)), nil
	}
	return "", nil
}

// searchSample bounds how many documents the search comparison checks per call.
const searchSample = 25

// searchDiffers checks search against the disk: a sample of the documents whose status is
// ok is each found by a search for one of its own words within its folder, and no hit of
// those searches names a path that is not on disk (a stale hit). It describes the first
// difference ("" when there is none).
func searchDiffers(ctx context.Context, c client.MCPClient, disk map[string]Doc) (string, error) {
	paths := make([]string, 0, len(disk))
	for p := range disk {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	step := max(1, len(paths)/searchSample)
	for i := 0; i < len(paths); i += step {
		p := paths[i]
		word := searchWord(disk[p].Content)
		if word == "" || disk[p].Status != events.StatusOK {
			continue
		}
		folder := path.Dir(p)
		if folder == "." {
			folder = ""
		}
		found, skip := false, false
		cursor := ""
		for page := 0; page < 20 && !found && !skip; page++ {
			args := map[string]any{"query": word, "folder": folder, "limit": 100, "scope": "all"}
			if cursor != "" {
				args["cursor"] = cursor
			}
			text, isErr, err := call(ctx, c, "search", args)
			if err != nil {
				return "", err
			}
			if isErr {
				var f struct {
					ErrorType string `json:"error_type"`
				}
				if json.Unmarshal([]byte(text), &f) == nil && f.ErrorType == "invalid_argument" {
					skip = true // a common word only: nothing to search this document by
					break
				}
				return fmt.Sprintf("search(%q, %q): %s", word, folder, text), nil
			}
			var res struct {
				Hits []struct {
					Path string `json:"path"`
				} `json:"hits"`
				NextCursor string `json:"next_cursor"`
			}
			if err := json.Unmarshal([]byte(text), &res); err != nil {
				return fmt.Sprintf("search(%q): %v", word, err), nil
			}
			for _, h := range res.Hits {
				if h.Path == p {
					found = true
				}
				if _, ok := disk[h.Path]; !ok && !strings.HasPrefix(h.Path, "session:") {
					return fmt.Sprintf("search(%q) finds %q, which is not on disk", word, h.Path), nil
				}
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if !found && !skip {
			return fmt.Sprintf("search(%q, folder %q) does not find %q", word, folder, p), nil
		}
	}
	return "", nil
}

// searchWord picks a word of a document to search it by: its longest word of ASCII letters
// alone, which the index holds as a whole word whatever the analysis. A run of ASCII
// letters next to another letter ("berschreitung" in "Zeitüberschreitung") is part of a
// longer word, not one.
func searchWord(content string) string {
	best, start, ascii := "", 0, true
	for i := 0; i <= len(content); i++ {
		if i < len(content) {
			c := content[i]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				continue
			}
			if c >= 0x80 { // a byte of a letter (or mark) beyond ASCII: the word goes on
				ascii = false
				continue
			}
		}
		if n := i - start; ascii && n > len(best) && n >= 3 {
			best = content[start:i]
		}
		start, ascii = i+1, true
	}
	return best
}

// call calls a tool and returns its text and whether it is an error result.
func call(ctx context.Context, c client.MCPClient, tool string, args map[string]any) (text string, isErr bool, err error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	r, err := c.CallTool(ctx, req)
	if err != nil {
		return "", false, fmt.Errorf("%s(%v): %w", tool, args, err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), r.IsError, nil
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
