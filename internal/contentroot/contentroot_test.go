package contentroot_test

import (
	"errors"
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
