package query

import (
	"fmt"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// Tree depth bounds: deep enough for any real project, shallow enough to bound a reply.
const (
	MinDepth     = 1
	MaxDepth     = 5
	DefaultDepth = 2
)

// TreeNode is a folder or a document in a tree: names, paths and counts, never content.
type TreeNode struct {
	Type string `json:"type"` // "folder" or "document"
	Name string `json:"name"`
	Path string `json:"path"`
	// Words: a document's word count, or everything below a folder.
	Words int `json:"words"`
	// Documents below a folder at any depth, also where Children stop at the depth limit.
	Documents int           `json:"documents,omitempty"`
	Title     string        `json:"title,omitempty"`
	Status    events.Status `json:"status,omitempty"` // a document's, omitted when ok
	Template  bool          `json:"template,omitempty"`
	Children  []*TreeNode   `json:"children,omitempty"`
}

// TreeView is what tree returns.
type TreeView struct {
	*TreeNode
	Depth     int    `json:"depth"`
	Entries   int    `json:"entries"`
	Truncated bool   `json:"truncated,omitempty"`
	Message   string `json:"message,omitempty"`
}

// treeShare is the part of the response bound a tree takes: a tree is an overview, so
// asking for the structure of a large project costs an agent about 12k tokens rather than
// 25k, and the answer stays quick to send and to read. A truncated tree says how to see
// more.
const treeShare = 2

// Tree answers tree(folder, depth): the folder's subfolders and documents, depth levels deep.
func Tree(s *projection.Snapshot, rawFolder string, depth int, lim Limits) (*TreeView, *Error) {
	lim = lim.orDefault()
	if depth < MinDepth || depth > MaxDepth {
		return nil, Errorf(ErrInvalidArgument, "depth %d is out of range; it is %d to %d", depth, MinDepth, MaxDepth)
	}
	p, qerr := CleanPath(rawFolder)
	if qerr != nil {
		return nil, qerr
	}
	f, ok := s.Folder(p)
	if !ok {
		if _, isDoc := s.Document(p); isDoc {
			return nil, Errorf(ErrInvalidPath, "%q is a document, not a folder", p).
				WithInstruction("Use view to read a document; tree takes a folder.")
		}
		return nil, Errorf(ErrNotFound, "no folder at %q", p).
			WithInstruction("Check the folder with tree(\"\") or view(\"\"), then call tree again.")
	}
	v := &TreeView{Depth: depth}
	w := &treeWalk{lim: lim, budget: lim.MaxChars/treeShare - 300}
	v.TreeNode = w.folder(f, depth)
	v.Entries = w.entries
	if w.truncated {
		v.Truncated = true
		v.Message = fmt.Sprintf("tree truncated after %d entries; call tree on a subfolder or with a smaller depth", w.entries)
	}
	return v, nil
}

type treeWalk struct {
	lim       Limits
	budget    int
	entries   int
	truncated bool
}

// take reserves room for one entry, breadth within a folder before depth.
func (w *treeWalk) take(size int) bool {
	if w.truncated || w.entries >= w.lim.MaxEntries || w.budget < size {
		w.truncated = true
		return false
	}
	w.entries++
	w.budget -= size
	return true
}

func (w *treeWalk) folder(f *projection.Folder, depth int) *TreeNode {
	n := &TreeNode{Type: "folder", Name: f.Name(), Path: f.Path, Words: f.Words, Documents: f.Documents}
	if depth == 0 {
		return n
	}
	// Reserve this level's entries first, so that a truncated tree is complete near the
	// top rather than deep in its first branch.
	var sub []*projection.Folder
	for _, c := range f.Folders() {
		if !w.take(entrySize(c.Name(), c.Path, "")) {
			break
		}
		sub = append(sub, c)
	}
	var docs []*TreeNode
	for _, d := range f.Docs() {
		if !w.take(entrySize(d.Name(), d.Path, d.Title)) {
			break
		}
		dn := &TreeNode{Type: "document", Name: d.Name(), Path: d.Path, Words: d.Words, Title: d.Title, Template: d.Template()}
		if d.Status != events.StatusOK {
			dn.Status = d.Status
		}
		docs = append(docs, dn)
	}
	n.Children = make([]*TreeNode, 0, len(sub)+len(docs))
	for _, c := range sub {
		n.Children = append(n.Children, w.folder(c, depth-1))
	}
	n.Children = append(n.Children, docs...)
	return n
}
