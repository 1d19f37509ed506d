package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/client"
)

// Writer changes a tree the way an agent does, and checks at once after each change,
// with no wait of its own, that an MCP client's search, view and tree hold it: read your
// writes. It keeps its documents in one folder of the tree.
type Writer struct {
	Root   string
	Folder string // its folder, relative to Root ("ryw" when empty)
	Rand   *rand.Rand

	docs   map[string]string // its documents on disk: path to the token they hold
	serial int
}

// Outcome is what one trial found.
type Outcome struct {
	Op      string // write, create, rename or delete
	Stale   string // the first answer without the change, unmarked ("" when none)
	Partial int    // answers that said they were partial (they may miss it)
}

// Trial makes one change (a new token written into a document, a document created,
// renamed or deleted) and calls search, view and tree at once.
func (w *Writer) Trial(ctx context.Context, c client.MCPClient) (Outcome, error) {
	if w.docs == nil {
		w.docs = map[string]string{}
		if w.Folder == "" {
			w.Folder = "ryw"
		}
		if err := os.MkdirAll(filepath.Join(w.Root, filepath.FromSlash(w.Folder)), 0o755); err != nil {
			return Outcome{}, err
		}
	}
	paths := make([]string, 0, len(w.docs))
	for p := range w.docs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	op := "create"
	if n := len(paths); n >= 3 {
		switch r := w.Rand.IntN(100); {
		case r < 45:
			op = "write"
		case r < 60:
			op = "rename"
		case r < 80 && n < 40, n <= 3:
			op = "create"
		default:
			op = "delete"
		}
	}
	ch := &check{c: c, out: Outcome{Op: op}}
	pick := func() string { return paths[w.Rand.IntN(len(paths))] }
	switch op {
	case "create", "write":
		p := w.newPath()
		if op == "write" {
			p = pick()
		}
		tok := w.token()
		if err := w.write(p, tok); err != nil {
			return ch.out, err
		}
		ch.present(ctx, w.Folder, p, tok)
	case "rename":
		from, to := pick(), w.newPath()
		if err := os.Rename(w.abs(from), w.abs(to)); err != nil {
			return ch.out, err
		}
		tok := w.docs[from]
		delete(w.docs, from)
		w.docs[to] = tok
		ch.present(ctx, w.Folder, to, tok)
		ch.absent(ctx, w.Folder, from, tok)
	case "delete":
		p := pick()
		if err := os.Remove(w.abs(p)); err != nil {
			return ch.out, err
		}
		tok := w.docs[p]
		delete(w.docs, p)
		ch.absent(ctx, w.Folder, p, tok)
	}
	return ch.out, ch.err
}

func (w *Writer) abs(p string) string { return filepath.Join(w.Root, filepath.FromSlash(p)) }

func (w *Writer) newPath() string {
	w.serial++
	return path.Join(w.Folder, fmt.Sprintf("note-%d-%d.md", w.Rand.IntN(1<<20), w.serial))
}

// token is a word no other document holds.
func (w *Writer) token() string {
	b := make([]byte, 12)
	for i := range b {
		b[i] = byte('a' + w.Rand.IntN(26))
	}
	return "q" + string(b)
}

func (w *Writer) write(p, tok string) error {
	w.docs[p] = tok
	return os.WriteFile(w.abs(p), []byte("# Note\n\nThe word "+tok+" was written just now.\n"), 0o644)
}

// check calls the tools of one trial and notes the first stale answer.
type check struct {
	c   client.MCPClient
	out Outcome
	err error
}

// answer calls a tool, and returns its text unless the call failed or the answer says it
// is partial (then it may miss the change, and says so).
func (k *check) answer(ctx context.Context, tool string, args map[string]any) (string, bool, bool) {
	if k.err != nil || k.out.Stale != "" {
		return "", false, false
	}
	text, isErr, err := call(ctx, k.c, tool, args)
	if err != nil {
		k.err = err
		return "", false, false
	}
	if strings.Contains(text, "guide-cookie") {
		k.out.Stale = fmt.Sprintf("%s(%v) shows a sync cookie: %s", tool, args, clip(text))
		return "", false, false
	}
	var head struct {
		Partial json.RawMessage `json:"partial"`
	}
	if json.Unmarshal([]byte(text), &head) == nil && head.Partial != nil {
		k.out.Partial++
		return "", false, false
	}
	return text, isErr, true
}

func (k *check) stale(format string, args ...any) {
	if k.out.Stale == "" {
		k.out.Stale = fmt.Sprintf(format, args...)
	}
}

// present checks that p, holding tok, is found, shown and listed.
func (k *check) present(ctx context.Context, folder, p, tok string) {
	if text, _, ok := k.answer(ctx, "search", map[string]any{"query": tok, "scope": "all"}); ok && !slices.Contains(hitPaths(text), p) {
		k.stale("search(%s) right after %s of %s: %s", tok, k.out.Op, p, clip(text))
	}
	if text, isErr, ok := k.answer(ctx, "view", map[string]any{"path": p}); ok {
		var d struct {
			Content string `json:"content"`
		}
		if isErr || json.Unmarshal([]byte(text), &d) != nil || !strings.Contains(d.Content, tok) {
			k.stale("view(%s) right after %s: %s", p, k.out.Op, clip(text))
		}
	}
	if text, _, ok := k.answer(ctx, "tree", map[string]any{"folder": folder, "depth": 1}); ok && !slices.Contains(treePaths(text), p) {
		k.stale("tree(%s) right after %s of %s: %s", folder, k.out.Op, p, clip(text))
	}
}

// absent checks that p is found, shown and listed no more.
func (k *check) absent(ctx context.Context, folder, p, tok string) {
	if text, _, ok := k.answer(ctx, "search", map[string]any{"query": tok, "scope": "all"}); ok && slices.Contains(hitPaths(text), p) {
		k.stale("search(%s) right after %s of %s still finds it: %s", tok, k.out.Op, p, clip(text))
	}
	if text, isErr, ok := k.answer(ctx, "view", map[string]any{"path": p}); ok && !isErr {
		k.stale("view(%s) right after %s still shows it: %s", p, k.out.Op, clip(text))
	}
	if text, _, ok := k.answer(ctx, "tree", map[string]any{"folder": folder, "depth": 1}); ok && slices.Contains(treePaths(text), p) {
		k.stale("tree(%s) right after %s of %s still lists it: %s", folder, k.out.Op, p, clip(text))
	}
}

func hitPaths(text string) []string {
	var r struct {
		Hits []struct {
			Path string `json:"path"`
		} `json:"hits"`
	}
	_ = json.Unmarshal([]byte(text), &r)
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Path)
	}
	return out
}

func treePaths(text string) []string {
	var n node
	_ = json.Unmarshal([]byte(text), &n)
	var out []string
	for _, c := range n.Children {
		out = append(out, c.Path)
	}
	return out
}
