// Package oracle says what the indexer publishes for a tree of files, worked out from the
// files themselves, and compares it with what an MCP client is shown through tree, view
// and search: nothing lost, nothing invented, nothing stale. The tests (through testkit)
// and the soak, which is a program, share it; it reports with plain errors, never through
// a testing.TB.
package oracle

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/guide/guide/internal/contentroot"
	"github.com/guide/guide/internal/cookie"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/guideyaml"
	"github.com/guide/guide/internal/ignore"
	"github.com/guide/guide/internal/reconcile"
)

// Doc is a document as the indexer publishes it.
type Doc struct {
	// Status is what the indexer says of it: ok for text within the size limit, else why
	// its content does not travel (binary, invalid_utf8, too_large, unreadable,
	// outside_root, path_too_long).
	Status events.Status
	// Content is the bytes the file (or the file a link leads to) holds, whatever its
	// status; "" when there is nothing to read: a link that leaves the root or leads
	// nowhere, an unreadable file, a stand-in.
	Content string
}

// Options are the indexer's settings the disk's documents depend on. The zero value is an
// indexer with its defaults and no size limit.
type Options struct {
	// Project is the project the documents are published under. It matters only for a
	// path of about a thousand bytes: whether its subject fits, or it gets a stand-in.
	Project string
	// MaxSize is the indexer's size limit (reconcile.Indexer.MaxSize); 0 for none.
	MaxSize int64
}

// Disk reads the tree at root as the indexer does with its default settings, and returns
// every document by the path it is published under. It follows the indexer's rules:
//
//   - what the ignore rules leave out is not there: the built-in ones, the repository's
//     (every .gitignore, .git/info/exclude, the user's global excludes file) and the
//     root's .guideignore; nor are the files of rules themselves, nor guide.yaml, nor a
//     sync cookie (cookie.Stray);
//   - a file or folder whose name is not valid UTF-8 (or holds U+FFFD) is not there;
//   - sockets, pipes and devices are not documents;
//   - a symbolic link is a document when it leads to a file inside the root (with that
//     file's bytes), when it leaves the root (outside_root, never read, be it to a file or
//     a folder) or when it leads nowhere (unreadable); a link to a folder inside the root
//     is not (the folder is indexed where it is). Where a link leads is read through the
//     content root as the indexer reads it: a relative link is followed only through
//     relative links that stay inside the root;
//   - a file's status says whether its bytes travel: too_large over MaxSize, binary with a
//     NUL in its first 8 KiB, invalid_utf8, unreadable, else ok;
//   - a path too long for a subject is published under its stand-in (path_too_long).
//
// Templates (.mustache) are documents like any other. A folder that cannot be read is an
// error: what the indexer keeps of it depends on what it knew before.
func Disk(root string, o Options) (map[string]Doc, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	rules, err := ignore.Load(real, ignore.Options{Git: true})
	if err != nil {
		return nil, err
	}
	tree, err := contentroot.Open(real)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	subjects := events.NewSubjects(o.Project)
	docs := map[string]Doc{}
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == real {
			return nil
		}
		rel := filepath.ToSlash(p[len(real)+1:])
		if !reconcile.ValidName(d.Name()) || rules.Self(rel, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || ignore.RuleFile(rel) || rel == guideyaml.FileName || cookie.Stray(rel) {
			return nil
		}
		doc, ok := read(tree, rel, d.Type(), o.MaxSize)
		if !ok {
			return nil
		}
		if _, err := subjects.Document(rel); errors.Is(err, events.ErrPathTooLong) {
			rel, doc = events.StandIn(rel), Doc{Status: events.StatusPathTooLong}
		}
		docs[rel] = doc
		return nil
	})
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// read describes the entry rel of type typ as a document, if it is one.
func read(tree *contentroot.Root, rel string, typ fs.FileMode, maxSize int64) (Doc, bool) {
	target := rel
	switch {
	case typ&fs.ModeSymlink != 0:
		t, info, err := tree.Target(rel)
		switch {
		case errors.Is(err, contentroot.ErrOutside):
			return Doc{Status: events.StatusOutsideRoot}, true
		case err != nil:
			return Doc{Status: events.StatusUnreadable}, true // broken, or its target cannot be reached
		case !info.Mode().IsRegular():
			return Doc{}, false // a folder inside the root, a pipe: not a document
		}
		target = t
	case !typ.IsRegular():
		return Doc{}, false
	}
	b, err := os.ReadFile(filepath.Join(tree.Dir(), filepath.FromSlash(target)))
	if err != nil {
		return Doc{Status: events.StatusUnreadable}, true
	}
	doc := Doc{Status: events.StatusOK, Content: string(b)}
	switch {
	case maxSize > 0 && int64(len(b)) > maxSize:
		doc.Status = events.StatusTooLarge
	case events.IsBinary(b):
		doc.Status = events.StatusBinary
	case !utf8.Valid(b):
		doc.Status = events.StatusInvalidUTF8
	}
	return doc, true
}
