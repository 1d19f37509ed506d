package soak

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/ignore"
	"github.com/guide/guide/internal/testkit"
)

// disk reads the tree as the indexer should see it: path → content for every document.
// A link to a file inside the root is a document with the target's content; a link that
// leaves the root, or leads nowhere, is a document listed without content (its status
// says why), be it to a file or a folder; a link to a folder inside the root is not
// followed (the folder is indexed where it is).
func disk(root string) (map[string]string, error) {
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	srcs := []ignore.Source{ignore.DefaultSource()}
	if b, err := os.ReadFile(filepath.Join(root, ignore.File)); err == nil {
		srcs = append(srcs, ignore.Parse(ignore.File, string(b)))
	}
	rules, err := ignore.New(srcs...)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel := filepath.ToSlash(p[len(root)+1:])
		if rules.Self(rel, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				out[rel] = "" // unreadable: listed with its status
				return nil
			}
			out[rel] = string(b)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := filepath.EvalSymlinks(p)
			if err != nil || !(target == root || strings.HasPrefix(target, root+string(filepath.Separator))) {
				out[rel] = "" // broken, or outside the root: listed, never read
				return nil
			}
			fi, err := os.Stat(target)
			if err != nil || fi.IsDir() || !fi.Mode().IsRegular() {
				if err != nil {
					out[rel] = ""
				}
				return nil
			}
			b, err := os.ReadFile(target)
			if err != nil {
				out[rel] = ""
				return nil
			}
			out[rel] = string(b)
		}
		return nil
	})
	return out, err
}

// compare runs testkit's comparison of an MCP client's view with the disk.
func compare(c client.MCPClient, files map[string]string) (d testkit.Diff, err error) {
	err = guard(func(t testing.TB) { d = testkit.Compare(t, c, files) })
	return d, err
}

// tb lets the soak, which is not a test, use testkit's checks: a failure ends the check
// (it panics, and guard recovers) instead of a test.
type tb struct {
	testing.TB // nil: testkit calls only the methods below
	cleanups   []func()
}

type fatal struct{ msg string }

func (t *tb) Helper()                           {}
func (t *tb) Name() string                      { return "soak" }
func (t *tb) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }
func (t *tb) Logf(string, ...any)               {}
func (t *tb) Log(...any)                        {}
func (t *tb) Fatal(args ...any)                 { panic(fatal{fmt.Sprint(args...)}) }
func (t *tb) Fatalf(format string, args ...any) { panic(fatal{fmt.Sprintf(format, args...)}) }
func (t *tb) Errorf(format string, args ...any) { panic(fatal{fmt.Sprintf(format, args...)}) }
func (t *tb) FailNow()                          { panic(fatal{"FailNow"}) }

// guard runs f with a tb, and returns its failure as an error.
func guard(f func(t testing.TB)) (err error) {
	t := &tb{}
	defer func() {
		for i := len(t.cleanups) - 1; i >= 0; i-- {
			t.cleanups[i]()
		}
	}()
	defer func() {
		switch v := recover().(type) {
		case nil:
		case fatal:
			err = errors.New(v.msg)
		default:
			err = fmt.Errorf("check panicked: %v", v)
		}
	}()
	f(t)
	return nil
}
