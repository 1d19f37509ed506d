package projection

import (
	"path"
	"slices"
	"strings"
)

// Folder is a directory of the tree as the catalog knows it: it exists while it holds a
// document at any depth. Its children are kept sorted by name, so that listings are cheap.
type Folder struct {
	Path string
	// Documents and Words count everything below the folder, at any depth.
	Documents int
	Words     int

	parent  *Folder
	folders []*Folder   // sorted by name
	docs    []*Document // sorted by name, unless unsorted is set during a batch
	// unsorted: documents were appended during the current batch; sorted before any
	// search and at the end of the batch, so that a bulk load is not quadratic.
	unsorted bool
}

func (f *Folder) sortDocs() {
	if f.unsorted {
		slices.SortFunc(f.docs, func(a, b *Document) int { return strings.Compare(a.Name(), b.Name()) })
		f.unsorted = false
	}
}

// Name is the folder's last path element ("" for the root).
func (f *Folder) Name() string {
	if f.Path == "" {
		return ""
	}
	return path.Base(f.Path)
}

// Folders returns the subfolders, sorted by name. The slice must not be modified.
func (f *Folder) Folders() []*Folder { return f.folders }

// Docs returns the documents directly in the folder, sorted by name. The slice must not
// be modified.
func (f *Folder) Docs() []*Document { return f.docs }

// Walk calls fn for f and then for every folder below it, depth first, in path order.
func (f *Folder) Walk(fn func(*Folder)) {
	fn(f)
	for _, sub := range f.folders {
		sub.Walk(fn)
	}
}

// EachDoc calls fn for every document in f and below it, in path order.
func (f *Folder) EachDoc(fn func(*Document)) {
	f.Walk(func(f *Folder) {
		for _, d := range f.Docs() {
			fn(d)
		}
	})
}

func folderCmp(a *Folder, name string) int { return strings.Compare(a.Name(), name) }
func docCmp(a *Document, name string) int  { return strings.Compare(a.Name(), name) }

func (f *Folder) child(name string) (*Folder, bool) {
	i, ok := slices.BinarySearchFunc(f.folders, name, folderCmp)
	if !ok {
		return nil, false
	}
	return f.folders[i], true
}

func (f *Folder) doc(name string) (*Document, bool) {
	f.sortDocs()
	i, ok := slices.BinarySearchFunc(f.docs, name, docCmp)
	if !ok {
		return nil, false
	}
	return f.docs[i], true
}

// tree is the folder hierarchy, maintained as documents come and go.
type tree struct {
	root    *Folder
	folders map[string]*Folder
	dirty   []*Folder // folders with unsorted documents
}

func newTree() *tree {
	root := &Folder{}
	return &tree{root: root, folders: map[string]*Folder{"": root}}
}

// folder returns the folder at p, creating it and its ancestors.
func (t *tree) folder(p string) *Folder {
	if f, ok := t.folders[p]; ok {
		return f
	}
	parent := t.folder(ParentOf(p))
	f := &Folder{Path: p, parent: parent}
	name := f.Name()
	i, _ := slices.BinarySearchFunc(parent.folders, name, folderCmp)
	parent.folders = slices.Insert(parent.folders, i, f)
	t.folders[p] = f
	return f
}

// put inserts a new document (isNew) or replaces one, keeping every ancestor's counts.
func (t *tree) put(d *Document, isNew bool) {
	f := t.folder(d.Dir())
	dn, dw := 1, d.Words
	if isNew {
		f.docs = append(f.docs, d)
		if n := len(f.docs); n > 1 && !f.unsorted && f.docs[n-2].Name() > d.Name() {
			f.unsorted = true
			t.dirty = append(t.dirty, f)
		}
	} else {
		f.sortDocs()
		i, found := slices.BinarySearchFunc(f.docs, d.Name(), docCmp)
		if !found {
			panic("projection: replacing a document the tree does not hold: " + d.Path)
		}
		old := f.docs[i]
		dn, dw = 0, d.Words-old.Words
		f.docs[i] = d
	}
	for a := f; a != nil; a = a.parent {
		a.Documents += dn
		a.Words += dw
	}
}

// remove deletes a document, and every folder it leaves empty.
func (t *tree) remove(p string) {
	f, ok := t.folders[ParentOf(p)]
	if !ok {
		return
	}
	f.sortDocs()
	i, found := slices.BinarySearchFunc(f.docs, path.Base(p), docCmp)
	if !found {
		return
	}
	old := f.docs[i]
	f.docs = slices.Delete(f.docs, i, i+1)
	for a := f; a != nil; a = a.parent {
		a.Documents--
		a.Words -= old.Words
	}
	for f.parent != nil && f.Documents == 0 {
		parent := f.parent
		if j, ok := slices.BinarySearchFunc(parent.folders, f.Name(), folderCmp); ok {
			parent.folders = slices.Delete(parent.folders, j, j+1)
		}
		delete(t.folders, f.Path)
		f = parent
	}
}

// settle sorts every folder left unsorted by the batch.
func (t *tree) settle() {
	for _, f := range t.dirty {
		f.sortDocs()
	}
	t.dirty = t.dirty[:0]
}
