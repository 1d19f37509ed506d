package contentroot_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/guide/guide/internal/contentroot"
	"github.com/guide/guide/internal/testkit"
)

func TestRoot(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	out := t.TempDir()
	testkit.WriteFile(t, out, "secret.md", "outside")
	testkit.WriteFile(t, dir, "v2/a.md", "inside")
	for link, to := range map[string]string{
		"cur": out, "in": "v2", "rel.md": "v2/a.md", "abs.md": filepath.Join(dir, "v2/a.md"),
		"out.md": filepath.Join(out, "secret.md"), "up.md": "../x.md", "broken.md": "missing.md",
		// Whether a link leaves the root never depends on what lies outside it: a missing
		// file out there, or reached through a folder link that leads there, is outside.
		"gone.md": filepath.Join(out, "missing.md"), "via.md": filepath.Join(dir, "cur/missing.md"),
		"via-rel.md": "cur/missing.md",
		// Links within the root are followed however they are written.
		"absin": filepath.Join(dir, "v2"), "chain.md": filepath.Join(dir, "absin/a.md"),
		"chain-rel.md": "absin/../absin/a.md", "loop.md": "loop2.md", "loop2.md": "loop.md",
	} {
		testkit.NoErr(t, os.Symlink(to, filepath.Join(dir, link)), "symlink "+link)
	}
	r, err := contentroot.Open(dir)
	testkit.NoErr(t, err, "open")
	defer r.Close()

	t.Run("ParentLinksAreNotFolders", func(t *testing.T) {
		for _, p := range []string{"cur/secret.md", "in/a.md", "rel.md/x", "../x", "/etc/passwd", "v2/../v2/a.md"} {
			if _, err := r.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Lstat(%q) = %v; want not found", p, err)
			}
			if _, err := r.ReadFile(p); err == nil {
				t.Errorf("ReadFile(%q) read through", p)
			}
		}
		if _, err := r.ReadDir("in"); err == nil {
			t.Error("ReadDir of a link to a folder listed it")
		}
	})
	t.Run("Targets", func(t *testing.T) {
		for link, want := range map[string]string{"rel.md": "v2/a.md", "abs.md": "v2/a.md", "chain.md": "v2/a.md", "chain-rel.md": "v2/a.md"} {
			got, st, err := r.Target(link)
			testkit.NoErr(t, err, "target "+link)
			testkit.Equal(t, [2]any{got, st.Size()}, [2]any{want, int64(6)}, "target of "+link)
			b, err := r.ReadFile(got)
			testkit.NoErr(t, err, "read "+got)
			testkit.Equal(t, string(b), "inside", "content through "+link)
		}
		for _, link := range []string{"out.md", "up.md", "cur", "gone.md", "via.md", "via-rel.md"} {
			if _, _, err := r.Target(link); !errors.Is(err, contentroot.ErrOutside) {
				t.Errorf("Target(%q) = %v; want ErrOutside", link, err)
			}
		}
		if _, _, err := r.Target("broken.md"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Target(broken.md) = %v; want not found", err)
		}
		if _, _, err := r.Target("loop.md"); err == nil || errors.Is(err, contentroot.ErrOutside) {
			t.Errorf("Target(loop.md) = %v; want a loop error", err)
		}
	})
	t.Run("WalkDoesNotFollowLinks", func(t *testing.T) {
		var seen []string
		testkit.NoErr(t, r.Walk("", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Type().IsRegular() {
				seen = append(seen, p)
			}
			return nil
		}), "walk")
		testkit.Equal(t, seen, []string{"v2/a.md"}, "regular files walked")
	})
}

// TestReader: a Reader opens what Root.Open opens and refuses what it refuses, checking a
// folder once for the files of it opened one after another, and again when the files of
// another folder came between (by then the folder may have become a link).
func TestReader(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	out := t.TempDir()
	testkit.WriteFile(t, out, "secret.md", "outside")
	testkit.WriteFile(t, dir, "top.md", "top")
	testkit.WriteFile(t, dir, "v2/a.md", "a")
	testkit.WriteFile(t, dir, "v2/b.md", "b")
	testkit.WriteFile(t, dir, "w/x/c.md", "c")
	for link, to := range map[string]string{
		"cur": out, "in": "v2", "v2/up.md": "../top.md", "v2/out.md": filepath.Join(out, "secret.md"),
	} {
		testkit.NoErr(t, os.Symlink(to, filepath.Join(dir, link)), "symlink "+link)
	}
	r, err := contentroot.Open(dir)
	testkit.NoErr(t, err, "open")
	defer r.Close()
	rd := r.Reader()
	read := func(p string) (string, error) {
		f, err := rd.Open(p)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		return string(b), err
	}
	for p, want := range map[string]string{"top.md": "top", "v2/a.md": "a", "v2/b.md": "b", "v2/up.md": "top", "w/x/c.md": "c"} {
		got, err := read(p)
		testkit.NoErr(t, err, "read "+p)
		testkit.Equal(t, got, want, "content of "+p)
	}
	// After a file of each folder, so that a folder's check is remembered.
	for _, p := range []string{"v2/a.md", "v2/out.md", "v2/a.md", "v2/../v2/a.md", "v2/./a.md", "v2/../../x",
		"cur/secret.md", "in/a.md", "../x", "/etc/passwd", "v2/a.md/x"} {
		if _, err := read(p); err == nil && p != "v2/a.md" {
			t.Errorf("Reader.Open(%q) read through", p)
		}
	}
	got, err := read("v2/a.md")
	testkit.NoErr(t, err, "read v2/a.md")
	testkit.Equal(t, got, "a", "content of v2/a.md")
	// The folder becomes a link to another folder of the root while another is read.
	_, err = read("w/x/c.md")
	testkit.NoErr(t, err, "read w/x/c.md")
	testkit.NoErr(t, os.Rename(filepath.Join(dir, "v2"), filepath.Join(dir, "v3")), "rename")
	testkit.NoErr(t, os.Symlink("v3", filepath.Join(dir, "v2")), "symlink v2")
	if _, err := read("v2/b.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reader.Open(v2/b.md) through a folder now a link = %v; want not found", err)
	}
	// A file gone from the folder last checked, and back.
	testkit.NoErr(t, os.Remove(filepath.Join(dir, "w/x/c.md")), "remove")
	if _, err := read("w/x/c.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reader.Open of a removed file = %v; want not found", err)
	}
}
