package soak

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// tree is what the soak knows of the content root and the folder outside it: the files
// and folders its operations may pick. Every operation is drawn from one seeded random
// source and acts on the real file system, so that a seed replays the same operations.
type tree struct {
	root    string // the content root
	outside string // a folder beside the root, which no document may ever show
	marker  string // a word written only in the files outside the root
	r       *rand.Rand

	files        []string // slash paths relative to root: regular files and links to files
	outsideFiles []string // absolute paths of the files outside the root
	folders      []string // slash paths relative to root, "" excluded
	n            int      // names issued
}

// op is one operation in the log: enough to read what happened and to replay it by hand.
type op struct {
	Kind string
	Path string
	To   string
	Err  string
}

func (o op) String() string {
	s := o.Kind + " " + quote(o.Path)
	if o.To != "" {
		s += " -> " + quote(o.To)
	}
	if o.Err != "" {
		s += " (" + o.Err + ")"
	}
	return s
}

func quote(s string) string {
	if s == "" {
		return `""`
	}
	if strings.ContainsAny(s, " \t\"") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// newTree lists root and writes the outside folder.
func newTree(root, outside, marker string, r *rand.Rand) (*tree, error) {
	t := &tree{root: root, outside: outside, marker: marker, r: r}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel := filepath.ToSlash(p[len(root)+1:])
		if d.IsDir() {
			t.folders = append(t.folders, rel)
		} else if d.Type().IsRegular() {
			t.files = append(t.files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(t.files)
	sort.Strings(t.folders)
	for _, rel := range []string{"secret.md", "settings.md", "sub/deep.md", "sub/notes.md"} {
		p := filepath.Join(outside, filepath.FromSlash(rel))
		t.outsideFiles = append(t.outsideFiles, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, t.outsideContent(), 0o644); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// outsideContent is text made of the marker, so that any part of it read into a document
// still carries the marker.
func (t *tree) outsideContent() []byte {
	var b strings.Builder
	b.WriteString("# " + t.marker + "\n\n")
	for range 5 + t.r.IntN(20) {
		b.WriteString(t.marker + " " + t.marker + " " + t.marker + "\n")
	}
	return []byte(b.String())
}

var words = strings.Fields(`river lantern orchard copper meadow harbor quiet signal thunder
velvet marble anchor ember falcon glacier hollow ivory juniper kettle ledger mosaic nectar
opal pepper quartz raven saffron timber umber vessel willow yonder zephyr beacon cinder`)

// text is a document's new content: a heading and a few lines of words, with a unique word
// so that search can find this version and no other.
func (t *tree) text() []byte {
	t.n++
	var b strings.Builder
	fmt.Fprintf(&b, "# soak %d\n\n", t.n)
	for range 1 + t.r.IntN(6) {
		for range 3 + t.r.IntN(10) {
			b.WriteString(words[t.r.IntN(len(words))] + " ")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "version%s\n", letters(t.r, 10))
	return []byte(b.String())
}

// letters is n random lowercase letters.
func letters(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// name is a fresh file or folder name, sometimes with spaces or letters beyond ASCII.
func (t *tree) name(ext string) string {
	t.n++
	stems := []string{"note", "draft plan", "résumé", "日本語", "chapter", "ideas", "Ünïcode mix", "log"}
	return fmt.Sprintf("%s %d%s", stems[t.r.IntN(len(stems))], t.n, ext)
}

func (t *tree) abs(rel string) string { return filepath.Join(t.root, filepath.FromSlash(rel)) }

// folder picks a folder of the root ("" for the root itself).
func (t *tree) folder() string {
	if len(t.folders) == 0 || t.r.IntN(8) == 0 {
		return ""
	}
	f := t.folders[t.r.IntN(len(t.folders))]
	if strings.Count(f, "/") >= maxDepth-1 {
		return "" // keep the tree as deep as real ones, not deeper
	}
	return f
}

func (t *tree) file() (string, bool) {
	if len(t.files) == 0 {
		return "", false
	}
	return t.files[t.r.IntN(len(t.files))], true
}

func remove(s []string, v string) []string {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// under is every entry of s at or below folder rel.
func under(s []string, rel string) []string {
	var out []string
	for _, x := range s {
		if x == rel || strings.HasPrefix(x, rel+"/") {
			out = append(out, x)
		}
	}
	return out
}

// dropTree forgets a folder and everything below it.
func (t *tree) dropTree(rel string) {
	for _, f := range under(t.files, rel) {
		t.files = remove(t.files, f)
	}
	for _, f := range under(t.folders, rel) {
		t.folders = remove(t.folders, f)
	}
}

// moveTree renames what the soak knows below from to below to.
func (t *tree) moveTree(from, to string) {
	for i, f := range t.files {
		if f == from || strings.HasPrefix(f, from+"/") {
			t.files[i] = to + f[len(from):]
		}
	}
	for i, f := range t.folders {
		if f == from || strings.HasPrefix(f, from+"/") {
			t.folders[i] = to + f[len(from):]
		}
	}
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// maxDepth bounds how deep the operations nest folders (moves may go a little deeper).
const maxDepth = 6

// smallFolder is the most files a folder deleted or swapped for a link may hold.
const smallFolder = 12

// weighted is a kind of operation and how often it is drawn against the others.
type weighted struct {
	kind   string
	weight int
}

// draw picks a kind at random, each as often as its weight says: one draw from r, so that a
// seed replays the same kinds.
func draw(r *rand.Rand, kinds []weighted) string {
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	n := r.IntN(total)
	for _, k := range kinds {
		if n < k.weight {
			return k.kind
		}
		n -= k.weight
	}
	return ""
}

// fsKinds weighs each kind of file-system operation.
var fsKinds = []weighted{
	{"create", 14}, {"write", 18}, {"save", 8}, {"append", 5}, {"delete", 7}, {"rename", 6},
	{"move", 5}, {"mkdir", 5}, {"rename-folder", 3}, {"move-folder-new-parent", 4},
	{"delete-folder", 2}, {"file-to-link-inside", 3}, {"file-to-link-outside", 3},
	{"folder-to-link-inside", 2}, {"folder-to-link-outside", 2}, {"link-to-file", 2},
	{"chmod-file", 2}, {"chmod-folder", 1}, {"write-outside", 2},
}

// step does one random file-system operation and says what it did.
func (t *tree) step() op {
	o := t.do(draw(t.r, fsKinds))
	if o.Kind == "" {
		o = t.do("create") // nothing to act on: grow the tree instead
	}
	return o
}

// do runs one operation of the given kind; an empty op when there is nothing to act on.
func (t *tree) do(kind string) op {
	o := op{Kind: kind}
	fail := func(err error) op {
		if err != nil {
			o.Err = err.Error()
		}
		return o
	}
	switch kind {
	case "create":
		o.Path = join(t.folder(), t.name(".md"))
		err := os.WriteFile(t.abs(o.Path), t.text(), 0o644)
		if err == nil {
			t.files = append(t.files, o.Path)
		}
		return fail(err)
	case "write", "append", "save":
		f, ok := t.file()
		if !ok {
			return op{}
		}
		o.Path = f
		if fi, err := os.Lstat(t.abs(f)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			kind, o.Kind = "save", "save" // never write through a link: the outside stays the marker's
		}
		switch kind {
		case "write": // in place, as most programs do
			return fail(os.WriteFile(t.abs(f), t.text(), 0o644))
		case "append":
			fh, err := os.OpenFile(t.abs(f), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return fail(err)
			}
			_, err = fh.Write(t.text())
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
			return fail(err)
		default: // an editor's atomic save: a temporary file renamed over the document
			tmp := t.abs(f) + ".tmp"
			if err := os.WriteFile(tmp, t.text(), 0o644); err != nil {
				return fail(err)
			}
			return fail(os.Rename(tmp, t.abs(f)))
		}
	case "delete":
		f, ok := t.file()
		if !ok {
			return op{}
		}
		o.Path = f
		t.files = remove(t.files, f)
		return fail(os.Remove(t.abs(f)))
	case "rename", "move":
		f, ok := t.file()
		if !ok {
			return op{}
		}
		dir := path.Dir(f)
		if dir == "." {
			dir = ""
		}
		if kind == "move" {
			dir = t.folder()
		}
		o.Path, o.To = f, join(dir, t.name(".md"))
		err := os.Rename(t.abs(f), t.abs(o.To))
		if err == nil {
			t.files = remove(t.files, f)
			t.files = append(t.files, o.To)
		}
		return fail(err)
	case "mkdir":
		o.Path = join(t.folder(), t.name(""))
		if err := os.Mkdir(t.abs(o.Path), 0o755); err != nil {
			return fail(err)
		}
		t.folders = append(t.folders, o.Path)
		for range 1 + t.r.IntN(3) {
			f := join(o.Path, t.name(".md"))
			if err := os.WriteFile(t.abs(f), t.text(), 0o644); err != nil {
				return fail(err)
			}
			t.files = append(t.files, f)
		}
		return o
	case "rename-folder", "move-folder-new-parent", "delete-folder", "folder-to-link-inside", "folder-to-link-outside":
		if len(t.folders) == 0 {
			return op{}
		}
		f := t.folders[t.r.IntN(len(t.folders))]
		if kind != "rename-folder" && kind != "move-folder-new-parent" && len(under(t.files, f)) > smallFolder {
			return op{} // the tree would soon be gone: delete and swap only small folders
		}
		o.Path = f
		dir := path.Dir(f)
		if dir == "." {
			dir = ""
		}
		switch kind {
		case "rename-folder":
			o.To = join(dir, t.name(""))
			err := os.Rename(t.abs(f), t.abs(o.To))
			if err == nil {
				t.moveTree(f, o.To)
			}
			return fail(err)
		case "move-folder-new-parent": // mkdir m1 && mv c1/sub m1/sub
			parent := join(t.folder(), t.name(""))
			if strings.HasPrefix(parent+"/", f+"/") {
				parent = t.name("")
			}
			o.To = join(parent, path.Base(f))
			if err := os.Mkdir(t.abs(parent), 0o755); err != nil {
				return fail(err)
			}
			t.folders = append(t.folders, parent)
			err := os.Rename(t.abs(f), t.abs(o.To))
			if err == nil {
				t.moveTree(f, o.To)
			}
			return fail(err)
		case "delete-folder":
			t.dropTree(f)
			return fail(os.RemoveAll(t.abs(f)))
		case "folder-to-link-inside", "folder-to-link-outside": // rm -rf f && ln -s elsewhere f
			target := filepath.Join(t.outside, "sub")
			if kind == "folder-to-link-outside" {
				// The outside folder holds the same names as the one it replaces, so that a
				// read of a path the indexer knew, through the link, finds a file.
				target = filepath.Join(t.outside, t.name(""))
				for _, file := range under(t.files, f) {
					p := filepath.Join(target, filepath.FromSlash(file[len(f)+1:]))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						return fail(err)
					}
					if err := os.WriteFile(p, t.outsideContent(), 0o644); err != nil {
						return fail(err)
					}
					t.outsideFiles = append(t.outsideFiles, p)
				}
			}
			if kind == "folder-to-link-inside" {
				other := t.folders[t.r.IntN(len(t.folders))]
				if other == f || strings.HasPrefix(other, f+"/") || strings.HasPrefix(f, other+"/") {
					return op{}
				}
				target = t.abs(other)
			}
			o.To = target
			t.dropTree(f)
			if err := os.RemoveAll(t.abs(f)); err != nil {
				return fail(err)
			}
			return fail(os.Symlink(target, t.abs(f)))
		}
	case "file-to-link-inside", "file-to-link-outside": // rm f && ln -s elsewhere f
		f, ok := t.file()
		if !ok {
			return op{}
		}
		target := filepath.Join(t.outside, []string{"secret.md", "settings.md", "sub/deep.md"}[t.r.IntN(3)])
		if kind == "file-to-link-inside" {
			other, _ := t.file()
			if other == f {
				return op{}
			}
			target = t.abs(other)
		}
		o.Path, o.To = f, target
		if err := os.Remove(t.abs(f)); err != nil {
			return fail(err)
		}
		return fail(os.Symlink(target, t.abs(f)))
	case "link-to-file": // a link becomes a file again
		var links []string
		for _, f := range t.files {
			if fi, err := os.Lstat(t.abs(f)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				links = append(links, f)
			}
		}
		if len(links) == 0 {
			return op{}
		}
		o.Path = links[t.r.IntN(len(links))]
		if err := os.Remove(t.abs(o.Path)); err != nil {
			return fail(err)
		}
		return fail(os.WriteFile(t.abs(o.Path), t.text(), 0o644))
	case "chmod-file":
		f, ok := t.file()
		if !ok {
			return op{}
		}
		if fi, err := os.Lstat(t.abs(f)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return op{} // a link has no mode of its own
		}
		mode := []fs.FileMode{0o000, 0o600, 0o644, 0o444}[t.r.IntN(4)]
		o.Path, o.To = f, fmt.Sprintf("%#o", mode)
		return fail(os.Chmod(t.abs(f), mode))
	case "chmod-folder":
		f := t.folder()
		mode := []fs.FileMode{0o555, 0o755, 0o700}[t.r.IntN(3)]
		o.Path, o.To = f, fmt.Sprintf("%#o", mode)
		return fail(os.Chmod(t.abs(f), mode))
	case "write-outside":
		o.Path = t.outsideFiles[t.r.IntN(len(t.outsideFiles))]
		return fail(os.WriteFile(o.Path, t.outsideContent(), 0o644))
	}
	return o
}

// restore gives every folder of the root back the modes the soak may have taken away, so
// that the disk oracle reads what the indexer can read.
func (t *tree) restore() {
	_ = filepath.WalkDir(t.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}
