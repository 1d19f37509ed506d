// Package contentroot is the content tree as the indexer and the watcher read it. Every
// read goes through one os.Root, which refuses any path that escapes the root through a
// symbolic link in any component, and through a check that each parent folder of a path
// is a real folder: a document lives where its folders really are, never behind a link.
package contentroot

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Root is an open content root. It is safe for concurrent use.
type Root struct {
	dir string
	r   *os.Root
}

// ErrOutside is reported for a symbolic link that leads outside the root.
var ErrOutside = errors.New("symbolic link to a place outside the project root")

// NotInTree is the error for a path that is not in the tree as it stands: a parent folder
// is a symbolic link or a file, or the name is not a relative path. It counts as not
// existing: whatever was known there is gone.
type NotInTree struct {
	Path   string
	Reason string
}

func (e *NotInTree) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }

// Is makes a path that is not in the tree read as one that does not exist.
func (e *NotInTree) Is(target error) bool { return target == fs.ErrNotExist }

// Open opens the folder dir, which must be absolute with its own symbolic links resolved.
func Open(dir string) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Root{dir: dir, r: r}, nil
}

// Dir is the root's absolute path.
func (t *Root) Dir() string { return t.dir }

// Close releases the root.
func (t *Root) Close() error { return t.r.Close() }

// Abs is the absolute path of rel, for what needs a name rather than a read (a watch).
func (t *Root) Abs(rel string) string {
	if rel == "" || rel == "." {
		return t.dir
	}
	return filepath.Join(t.dir, filepath.FromSlash(rel))
}

// Rel is the slash path of abs relative to the root, and whether abs lies below it.
func (t *Root) Rel(abs string) (string, bool) {
	r, ok := strings.CutPrefix(abs, t.dir+string(filepath.Separator))
	if !ok || r == "" {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// name turns a relative slash path into one os.Root takes, after checking that every
// parent folder is a real folder.
func (t *Root) name(rel string) (string, error) {
	if rel == "" || rel == "." {
		return ".", nil
	}
	if !filepath.IsLocal(rel) || path.Clean(rel) != rel {
		return "", &NotInTree{Path: rel, Reason: "not a clean relative path"}
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		dir := rel[:i]
		st, err := t.r.Lstat(filepath.FromSlash(dir))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
			return "", &NotInTree{Path: rel, Reason: "its folder " + dir + " cannot be reached: " + err.Error()}
		}
		if !st.IsDir() {
			return "", &NotInTree{Path: rel, Reason: "its folder " + dir + " is not a folder (a symbolic link or a file)"}
		}
	}
	return filepath.FromSlash(rel), nil
}

// Lstat describes rel without following it if it is a symbolic link.
func (t *Root) Lstat(rel string) (fs.FileInfo, error) {
	n, err := t.name(rel)
	if err != nil {
		return nil, err
	}
	return t.r.Lstat(n)
}

// Open opens rel for reading; a symbolic link is followed only within the root.
func (t *Root) Open(rel string) (*os.File, error) {
	n, err := t.name(rel)
	if err != nil {
		return nil, err
	}
	return t.r.Open(n)
}

// Reader opens files as Root.Open does, remembering the folder of the last one it
// checked: the files of one folder, opened one after another (a walk's order), have their
// folders checked once (each a real folder, not a link or a file), where Root.Open checks
// every folder of every path, each resolved from the root again. Every open still goes
// through the root, which nothing escapes. A Reader is not safe for concurrent use: one
// per goroutine.
type Reader struct {
	t   *Root
	dir string // slash path of the folder last checked; "" for none
}

// Reader returns a Reader of the tree.
func (t *Root) Reader() *Reader { return &Reader{t: t} }

// Open opens rel for reading, as Root.Open does.
func (rd *Reader) Open(rel string) (*os.File, error) {
	i := strings.LastIndexByte(rel, '/')
	if i <= 0 || rel[:i] != rd.dir {
		rd.dir = ""
		n, err := rd.t.name(rel)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			rd.dir = rel[:i]
		}
		return rd.t.r.Open(n)
	}
	if !filepath.IsLocal(rel) || path.Clean(rel) != rel {
		return nil, &NotInTree{Path: rel, Reason: "not a clean relative path"}
	}
	f, err := rd.t.r.Open(filepath.FromSlash(rel))
	if err != nil {
		// The folder may have changed since it was checked: check it again.
		rd.dir = ""
		return rd.t.Open(rel)
	}
	return f, nil
}

// ReadFile reads rel whole; a symbolic link is followed only within the root.
func (t *Root) ReadFile(rel string) ([]byte, error) {
	n, err := t.name(rel)
	if err != nil {
		return nil, err
	}
	return t.r.ReadFile(n)
}

// ReadDir lists the folder rel, which must be a real folder, not a link to one.
func (t *Root) ReadDir(rel string) ([]fs.DirEntry, error) {
	st, err := t.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &NotInTree{Path: rel, Reason: "not a folder"}
	}
	n, _ := t.name(rel)
	f, err := t.r.Open(n)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Walk calls fn for the folder rel and everything below it, in lexical order, as
// fs.WalkDir does, with slash paths relative to the root. Symbolic links are reported, not
// followed; rel itself must be a real folder.
func (t *Root) Walk(rel string, fn fs.WalkDirFunc) error {
	start := rel
	if start == "" {
		start = "."
	}
	st, err := t.Lstat(rel)
	if err != nil {
		return fn(start, nil, err)
	}
	if !st.IsDir() {
		return fn(start, nil, &NotInTree{Path: rel, Reason: "not a folder"})
	}
	return fs.WalkDir(t.r.FS(), start, fn)
}

// Target is what the symbolic link rel leads to: a path relative to the root with no link
// in it, and what is there. It is ErrOutside when the link leaves the root, at any step,
// and not found when it is broken inside the root. Links are followed one component at a
// time through the root (relative or absolute, to a file or a folder); nothing outside
// the root is ever looked at, so the answer changes only when the tree does.
func (t *Root) Target(rel string) (string, fs.FileInfo, error) {
	if _, err := t.name(rel); err != nil {
		return "", nil, err
	}
	target, err := t.resolve(rel)
	if err != nil {
		return "", nil, err
	}
	st, err := t.r.Stat(filepath.FromSlash(cmp.Or(target, ".")))
	if err != nil {
		return "", nil, err
	}
	return target, st, nil
}

// maxHops is how many links one path may pass through, as Linux's ELOOP limit.
const maxHops = 40

// resolve follows the slash path rel, relative to the root, to the path with no link in
// it that it names, stopping with ErrOutside as soon as a step would leave the root.
func (t *Root) resolve(rel string) (string, error) {
	done, rest, hops := "", strings.Split(rel, "/"), 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if done == "" {
				return "", ErrOutside
			}
			done = strings.TrimSuffix(path.Dir(done), ".")
			continue
		}
		next := path.Join(done, c)
		st, err := t.r.Lstat(filepath.FromSlash(next))
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if hops++; hops > maxHops {
			return "", &fs.PathError{Op: "resolve", Path: rel, Err: syscall.ELOOP}
		}
		dest, err := t.r.Readlink(filepath.FromSlash(next))
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(dest) {
			dest = filepath.Clean(dest)
			if dest != t.dir {
				r, ok := t.Rel(dest)
				if !ok {
					return "", ErrOutside
				}
				dest = r
			} else {
				dest = ""
			}
			done = ""
		}
		rest = append(strings.Split(filepath.ToSlash(dest), "/"), rest...)
	}
	return done, nil
}
