package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/guide/guide/internal/contentroot"
	"github.com/guide/guide/internal/cookie"
	"github.com/guide/guide/internal/events"
)

// file is a document found in the tree, as far as its metadata tells.
type file struct {
	rel    string
	target string // what to read, relative to the root: the file, or a link's target inside it
	size   int64
	mt     time.Time
	inode  uint64
	// status is set when the file is known unreadable without reading it.
	status events.Status
	reason string
}

// same reports whether the stream's state of the document matches the file's metadata,
// so that the file need not be read.
func (f *file) same(k knownDoc) bool {
	return k.exists && k.size == f.size && k.sec == f.mt.Unix() && k.nsec == uint32(f.mt.Nanosecond()) &&
		(k.inode == 0 || f.inode == 0 || k.inode == f.inode) &&
		(f.status == "" || f.status == k.status)
}

// walk lists every document below the folder dir (relative, "" for the root). It reads
// through the content root: it never descends a symbolic link, and a folder swapped for
// one while it walks is not read. It stops when ctx ends, with what it found so far.
func (x *Indexer) walk(ctx context.Context, dir string) ([]file, []error) {
	var files []file
	var errs []error
	_ = x.tree.Walk(dir, func(rel string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			if d != nil && d.IsDir() && rel != dir {
				return fs.SkipDir
			}
			return nil
		}
		if rel == "." {
			return nil
		}
		if !ValidName(d.Name()) {
			errs = append(errs, &NameError{Path: rel})
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if x.ignored.Load().Self(rel, true) || (x.Skip != nil && x.Skip(rel, true)) {
				return fs.SkipDir
			}
			return nil
		}
		if x.ignored.Load().Self(rel, false) || (x.Skip != nil && x.Skip(rel, false)) || cookie.Stray(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return nil
		}
		if f, ok := x.stat(rel, info); ok {
			files = append(files, f)
		}
		return nil
	})
	return files, errs
}

// stat describes the file rel (not followed if it is a link) as a document, if it is one.
// A link is a document when it leads to a file inside the root, whose bytes it shows; a
// link to a folder is not (the folder is indexed where it really is).
func (x *Indexer) stat(rel string, info fs.FileInfo) (file, bool) {
	f := file{rel: rel, target: rel, size: info.Size(), mt: info.ModTime().UTC(), inode: inode(info)}
	switch {
	case x.isConfig(rel):
		return f, false // configuration, not a document
	case info.Mode()&fs.ModeSymlink != 0:
		x.noteLink(rel)
		target, ti, err := x.tree.Target(rel)
		switch {
		case errors.Is(err, contentroot.ErrOutside):
			f.status, f.reason, f.size = events.StatusOutsideRoot, "symbolic link to a place outside the project root", 0
		case errors.Is(err, fs.ErrNotExist):
			f.status, f.reason = events.StatusUnreadable, "broken symbolic link"
		case err != nil:
			f.status, f.reason = events.StatusUnreadable, err.Error()
		case ti.IsDir() || !ti.Mode().IsRegular():
			return f, false
		default:
			f.target, f.size, f.mt, f.inode = target, ti.Size(), ti.ModTime().UTC(), inode(ti)
		}
	case !info.Mode().IsRegular():
		// Sockets, pipes, devices: not documents, and never opened (a FIFO would block the
		// read). Said once, so that a file that never shows up is explained.
		if _, seen := x.notFiles.LoadOrStore(rel, true); !seen {
			x.log.Info("not indexed: not a regular file", "path", rel, "type", fileType(info.Mode()))
		}
		return f, false
	}
	if key := x.key(rel); key != rel {
		x.standIns.Store(key, rel)
		f.rel, f.status, f.size = key, events.StatusPathTooLong, 0
		f.reason = fmt.Sprintf("the path is too long to index (%d bytes); it is %s", len(rel), rel)
	}
	return f, true
}

// key is the path a file is published under: its own, or a stand-in when its own does
// not fit in a subject.
func (x *Indexer) key(rel string) string {
	if len(rel) < events.MaxSubjectLen/3-len(x.Project)-16 {
		return rel // fits whatever its bytes encode to
	}
	if _, err := x.subjects.Document(rel); errors.Is(err, events.ErrPathTooLong) {
		return events.StandIn(rel)
	}
	return rel
}

// ValidName reports whether a file or folder name can name a document: valid UTF-8
// without U+FFFD, so that a client can send it back as JSON (which replaces invalid bytes
// with U+FFFD) and find the document it was shown.
func ValidName(name string) bool {
	return utf8.ValidString(name) && !strings.ContainsRune(name, utf8.RuneError)
}

// NameError is reported for a file or folder left out of the index for its name.
type NameError struct{ Path string }

func (e *NameError) Error() string {
	return fmt.Sprintf("%q: not indexed: the name is not valid UTF-8; rename it", e.Path)
}

func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// withLinks adds to paths every link that leads to a place at or below one of them: when
// a file or folder changes or goes, so may each link's document that leads there. The
// link is recorded again when it is compared.
func (x *Indexer) withLinks(paths []string) []string {
	out := paths
	x.linkTargets.Range(func(k, v any) bool {
		link := k.(string)
		for _, target := range v.([]string) {
			if slices.ContainsFunc(paths, func(p string) bool { return target == p || strings.HasPrefix(target, p+"/") }) {
				out = append(out, link)
				x.linkTargets.Delete(link)
				return true
			}
		}
		return true
	})
	return out
}

// noteLink records where the link rel leads, inside the root: the path it names (a link
// to a link, or to what is not there yet, is compared again when that path changes) and
// the path it resolves to in the end, when it does.
func (x *Indexer) noteLink(rel string) {
	abs := x.tree.Abs(rel)
	var targets []string
	if dest, err := os.Readlink(abs); err == nil {
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(abs), dest)
		}
		if t, ok := x.tree.Rel(filepath.Clean(dest)); ok {
			targets = append(targets, t)
		}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		if t, ok := x.tree.Rel(real); ok {
			targets = append(targets, t)
		}
	}
	if len(targets) > 0 {
		x.linkTargets.Store(rel, targets)
	} else {
		x.linkTargets.Delete(rel)
	}
}

// fileType names the kind of a file that is neither a regular file nor a folder.
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return m.Type().String()
}
