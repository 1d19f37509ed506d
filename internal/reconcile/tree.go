package reconcile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/guide/guide/internal/events"
)

// file is a document found in the tree, as far as its metadata tells.
type file struct {
	rel   string
	abs   string // what to read: the file, or a symbolic link's target inside the root
	size  int64
	mt    time.Time
	inode uint64
	// status is set when the file is known unreadable without reading it.
	status events.Status
	reason string
}

// same reports whether the stream's state of the document matches the file's metadata,
// so that the file need not be read.
func (f *file) same(st events.DocState) bool {
	return st.Op == events.OpUpsert && st.Size == f.size && st.Mtime.Equal(f.mt) &&
		(st.Inode == 0 || f.inode == 0 || st.Inode == f.inode) &&
		(f.status == "" || f.status == st.Status)
}

// walk lists every document below dir.
func (x *Indexer) walk(dir string) ([]file, []error) {
	var files []file
	var errs []error
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			if d != nil && d.IsDir() && p != dir {
				return fs.SkipDir
			}
			return nil
		}
		if p == x.root {
			return nil
		}
		rel := filepath.ToSlash(p[len(x.root)+1:])
		if d.IsDir() {
			if x.ignored.Load().Self(rel, true) || (x.Skip != nil && x.Skip(rel, true)) {
				return fs.SkipDir
			}
			return nil
		}
		if x.ignored.Load().Self(rel, false) || (x.Skip != nil && x.Skip(rel, false)) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return nil
		}
		if f, ok := x.stat(p, rel, info); ok {
			files = append(files, f)
		}
		return nil
	})
	return files, errs
}

// stat describes the file at p (not followed if it is a link) as a document, if it is one.
func (x *Indexer) stat(p, rel string, info fs.FileInfo) (file, bool) {
	f := file{rel: rel, abs: p, size: info.Size(), mt: info.ModTime().UTC(), inode: inode(info)}
	switch {
	case x.isConfig(rel):
		return f, false // configuration, not a document
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			f.status, f.reason = events.StatusUnreadable, "broken symbolic link"
			break
		}
		if !within(x.root, target) {
			f.status, f.reason, f.size = events.StatusOutsideRoot, "symbolic link to a place outside the project root", 0
			break
		}
		ti, err := os.Stat(target)
		if err != nil {
			f.status, f.reason = events.StatusUnreadable, err.Error()
			break
		}
		if ti.IsDir() || !ti.Mode().IsRegular() {
			return f, false // a folder is indexed where it really is
		}
		f.abs, f.size, f.mt, f.inode = target, ti.Size(), ti.ModTime().UTC(), inode(ti)
	case !info.Mode().IsRegular():
		return f, false // sockets, pipes, devices: not documents
	}
	return f, true
}

func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
