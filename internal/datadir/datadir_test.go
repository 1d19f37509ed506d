package datadir_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/testkit"
)

func TestProjectName(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a", "docs"), filepath.Join(base, "b", "docs")
	testkit.NoErr(t, os.MkdirAll(a, 0o755), "mkdir")
	testkit.NoErr(t, os.MkdirAll(b, 0o755), "mkdir")
	link := filepath.Join(base, "link")
	testkit.NoErr(t, os.Symlink(a, link), "symlink")

	t.Run("BaseNameAndHash", func(t *testing.T) {
		if n := datadir.ProjectName(a); !regexp.MustCompile(`^docs-[0-9a-f]{8}$`).MatchString(n) {
			t.Fatalf("ProjectName(%s) = %q; want docs- and 8 hex digits", a, n)
		}
	})
	t.Run("SameNamedFoldersDiffer", func(t *testing.T) {
		if datadir.ProjectName(a) == datadir.ProjectName(b) {
			t.Fatalf("%s and %s share the project %q", a, b, datadir.ProjectName(a))
		}
	})
	t.Run("EveryPathToOneFolderIsOneProject", func(t *testing.T) {
		want := datadir.ProjectName(a)
		wd, err := os.Getwd()
		testkit.NoErr(t, err, "getwd")
		t.Cleanup(func() { _ = os.Chdir(wd) })
		testkit.NoErr(t, os.Chdir(filepath.Join(base, "b")), "chdir")
		for _, p := range []string{link, link + "/", filepath.Join(base, "a", ".", "docs"), "../a/docs", "../link"} {
			testkit.Equal(t, datadir.ProjectName(p), want, "project of "+p)
		}
	})
}
