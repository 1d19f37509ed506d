package testkit

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/query"
)

// node is the part of a tree result the disk comparison reads.
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

// Diff is how what an MCP client sees through tree, view and search differs from a tree of
// files. The zero Diff means they agree.
type Diff struct {
	Phantom []string // documents tree lists that are not on disk
	Lost    []string // files on disk that tree does not list
	Stale   []string // documents whose view differs from the file's content
	// Other is the first difference of another kind ("" if none): a failed call, a folder
	// missing from tree, a document search does not find or a hit not on disk.
	Other string
	// Sample is the first stale document's view beside the disk's content.
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

// Mismatch compares what an MCP client sees through tree, view and search with the files
// under root, and describes the first difference ("" when they agree). Trees deeper than five
// levels are compared from each fifth-level folder down.
func Mismatch(t testing.TB, c client.MCPClient, root string) string {
	t.Helper()
	return Compare(t, c, Disk(t, root)).String()
}

// Compare compares what an MCP client sees through tree, view and search with disk (path →
// content, as Disk reads it). A document of disk whose view is not "ok" (a link that leaves
// the root, an unreadable file), or that has no content, is compared by its presence only.
func Compare(t testing.TB, c client.MCPClient, disk map[string]string) Diff {
	t.Helper()
	docs, folders := map[string]bool{}, map[string]bool{}
	type visit struct {
		folder string
		depth  int
	}
	queue := []visit{{"", 5}}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		r := Call(t, c, "tree", map[string]any{"folder": v.folder, "depth": v.depth})
		if r.IsError {
			return Diff{Other: fmt.Sprintf("tree(%q): %s", v.folder, Text(t, r))}
		}
		var n node
		if err := json.Unmarshal([]byte(Text(t, r)), &n); err != nil {
			return Diff{Other: fmt.Sprintf("tree(%q): %v", v.folder, err)}
		}
		if n.Truncated {
			if v.depth > 1 {
				queue = append(queue, visit{v.folder, 1}) // one level at a time
				continue
			}
			// A folder too large for one listing: page through it with view.
			folders[v.folder] = true
			for offset := 0; ; {
				r := Call(t, c, "view", map[string]any{"path": v.folder, "offset": offset})
				var page struct {
					Folders    []struct{ Path string } `json:"folders"`
					Documents  []struct{ Path string } `json:"documents"`
					Truncated  bool                    `json:"truncated"`
					NextOffset int                     `json:"next_offset"`
				}
				if r.IsError || json.Unmarshal([]byte(Text(t, r)), &page) != nil {
					return Diff{Other: fmt.Sprintf("view(%q, offset %d): %s", v.folder, offset, Text(t, r))}
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
			continue
		}
		var more []string
		n.walk(docs, folders, &more, true)
		for _, f := range more {
			queue = append(queue, visit{f, 5})
		}
	}
	var d Diff
	for p := range docs {
		if _, ok := disk[p]; !ok {
			d.Phantom = append(d.Phantom, p)
		}
	}
	for p := range disk {
		if !docs[p] {
			d.Lost = append(d.Lost, p)
		}
		if dir := path.Dir(p); dir != "." && !folders[dir] && d.Other == "" {
			d.Other = fmt.Sprintf("folder %q of %q missing from tree", dir, p)
		}
	}
	sort.Strings(d.Phantom)
	sort.Strings(d.Lost)
	paths := make([]string, 0, len(disk))
	for p := range disk {
		if docs[p] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		content := disk[p]
		r := Call(t, c, "view", map[string]any{"path": p})
		if r.IsError && content == "" {
			continue // listed without content: a link that leaves the root, say
		}
		if r.IsError {
			d.Stale = append(d.Stale, p)
			if d.Sample == "" {
				d.Sample = fmt.Sprintf("view(%q): %s", p, Text(t, r))
			}
			continue
		}
		var v struct {
			Content   string `json:"content"`
			Status    string `json:"status"`
			Truncated bool   `json:"truncated"`
		}
		if err := json.Unmarshal([]byte(Text(t, r)), &v); err != nil {
			d.Stale = append(d.Stale, p)
			if d.Sample == "" {
				d.Sample = fmt.Sprintf("view(%q): %v", p, err)
			}
			continue
		}
		if v.Status == "ok" && !v.Truncated && v.Content != content {
			d.Stale = append(d.Stale, p)
			if d.Sample == "" {
				d.Sample = fmt.Sprintf("view(%q) = %q, disk has %q", p, clip(v.Content), clip(content))
			}
		}
	}
	if d.Other == "" && len(d.Phantom)+len(d.Lost)+len(d.Stale) == 0 {
		d.Other = searchMismatch(t, c, disk)
	}
	return d
}

// searchSample bounds how many documents the search comparison checks per call.
const searchSample = 25

// searchMismatch checks search against the disk: a sample of the documents on disk is each
// found by a search for one of its own words within its folder, and no hit of those
// searches names a path that is not on disk (a stale hit). Documents without a word of
// letters (binary, empty) are skipped.
func searchMismatch(t testing.TB, c client.MCPClient, disk map[string]string) string {
	t.Helper()
	paths := make([]string, 0, len(disk))
	for p := range disk {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	step := max(1, len(paths)/searchSample)
	for i := 0; i < len(paths); i += step {
		p := paths[i]
		word := searchWord(disk[p])
		if word == "" || !utf8.ValidString(disk[p]) || strings.IndexByte(disk[p], 0) >= 0 {
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
			r := Call(t, c, "search", args)
			if r.IsError {
				var f Failure
				if json.Unmarshal([]byte(Text(t, r)), &f) == nil && f.ErrorType == "invalid_argument" {
					skip = true // a common word only: nothing to search this document by
					break
				}
				return fmt.Sprintf("search(%q, %q): %s", word, folder, Text(t, r))
			}
			var res struct {
				Hits []struct {
					Path string `json:"path"`
				} `json:"hits"`
				NextCursor string `json:"next_cursor"`
			}
			if err := json.Unmarshal([]byte(Text(t, r)), &res); err != nil {
				return fmt.Sprintf("search(%q): %v", word, err)
			}
			for _, h := range res.Hits {
				if h.Path == p {
					found = true
				}
				if _, ok := disk[h.Path]; !ok && !strings.HasPrefix(h.Path, "session:") {
					return fmt.Sprintf("search(%q) finds %q, which is not on disk", word, h.Path)
				}
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if !found && !skip {
			return fmt.Sprintf("search(%q, folder %q) does not find %q", word, folder, p)
		}
	}
	return ""
}

// searchWord picks a word of a document to search it by: its longest run of ASCII letters,
// which the index holds as a whole word whatever the analysis.
func searchWord(content string) string {
	best, cur := "", 0
	for i := 0; i <= len(content); i++ {
		if i < len(content) && (content[i] >= 'a' && content[i] <= 'z' || content[i] >= 'A' && content[i] <= 'Z') {
			cur++
			continue
		}
		if cur > len(best) && cur >= 3 {
			best = content[i-cur : i]
		}
		cur = 0
	}
	return best
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

// RequireMatchesDisk fails unless tree and view agree with the files under root.
func RequireMatchesDisk(t testing.TB, c client.MCPClient, root string) {
	t.Helper()
	if m := Mismatch(t, c, root); m != "" {
		t.Fatal(m)
	}
}

// EventuallyMatchesDisk waits until tree and view agree with the files under root.
func EventuallyMatchesDisk(t testing.TB, c client.MCPClient, root string, within time.Duration) {
	t.Helper()
	Eventually(t, within, func() (bool, string) {
		m := Mismatch(t, c, root)
		return m == "", m
	})
}

// ReadStatus reads the status resource.
func ReadStatus(t testing.TB, c client.MCPClient) query.Status {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "guide://_status"
	res, err := c.ReadResource(Context(t), req)
	if err != nil {
		t.Fatalf("read status: %v", err)
	}
	var st query.Status
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &st); err != nil {
		t.Fatalf("status: %v", err)
	}
	return st
}

// WaitCaughtUp waits until the status resource says the initial scan is applied and every
// projection (the catalog and the search index) has applied the whole stream. caught_up is
// required, not only sequences: until the runner has checked which stream the projections
// were built from, the status shows what they hold from before, and after the stream was
// deleted and created again, their old sequences may well exceed the new stream's last.
func WaitCaughtUp(t testing.TB, c client.MCPClient) query.Status {
	t.Helper()
	var st query.Status
	Eventually(t, 30*time.Second, func() (bool, string) {
		st = ReadStatus(t, c)
		return st.CaughtUp && st.InitialScanDone && st.Lag == 0 && st.AppliedSeq >= st.StreamLastSeq && st.StreamLastSeq > 0 &&
			(st.Index == nil || st.Index.AppliedSeq >= st.StreamLastSeq), fmt.Sprintf("not caught up: %+v", st)
	})
	return st
}
