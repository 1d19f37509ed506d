package reconcile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestWatchLinkFollowsItsTarget: a symbolic link to a file inside the root is a document
// showing that file's bytes; when the file is written the link's document changes with it,
// and when the file goes the link is listed as broken — while watching, not at the next
// rescan.
func TestWatchLinkFollowsItsTarget(t *testing.T) {
	p := watching(t, nil)
	testkit.WriteFile(t, p.Root, "linked/target.md", "first words")
	testkit.NoErr(t, os.Symlink("linked/target.md", filepath.Join(p.Root, "alias.md")), "ln -s")
	viewSays := func(want string) {
		t.Helper()
		testkit.Eventually(t, settle, func() (bool, string) {
			got := testkit.Text(t, p.Call("view", map[string]any{"path": "alias.md"}))
			return strings.Contains(got, want), "view(alias.md) = " + got
		})
	}
	viewSays("first words")
	testkit.WriteFile(t, p.Root, "linked/target.md", "second words")
	viewSays("second words")
	testkit.NoErr(t, os.Remove(filepath.Join(p.Root, "linked/target.md")), "rm target")
	viewSays("broken symbolic link")
}

// TestWatchLinkToFolderWhoseTargetGoes: a link to a folder inside the root is not a
// document while the folder is there (the folder is indexed where it is); when the folder
// goes, the link is listed as broken, while watching.
func TestWatchLinkToFolderWhoseTargetGoes(t *testing.T) {
	p := watching(t, nil)
	testkit.WriteFile(t, p.Root, "shelf/book.md", "pages")
	testkit.NoErr(t, os.Symlink("shelf", filepath.Join(p.Root, "shortcut")), "ln -s")
	testkit.EventuallyMatchesDisk(t, p.Client, p.Root, settle)
	testkit.NoErr(t, os.RemoveAll(filepath.Join(p.Root, "shelf")), "rm -r shelf")
	testkit.Eventually(t, settle, func() (bool, string) {
		got := testkit.Text(t, p.Call("view", map[string]any{"path": "shortcut"}))
		return strings.Contains(got, "broken symbolic link"), "view(shortcut) = " + got
	})
}

// TestWatchLinkToALinkThatBecomesAFile: a link to a link that leaves the root is listed as
// outside the root; when that second link is replaced by a file, the first shows the file,
// while watching.
func TestWatchLinkToALinkThatBecomesAFile(t *testing.T) {
	p := watching(t, nil)
	outsideFile := filepath.Join(t.TempDir(), "far.md")
	testkit.NoErr(t, os.WriteFile(outsideFile, []byte("far away"), 0o644), "outside file")
	testkit.NoErr(t, os.Symlink(outsideFile, filepath.Join(p.Root, "hop.md")), "ln -s outside")
	testkit.NoErr(t, os.Symlink(filepath.Join(p.Root, "hop.md"), filepath.Join(p.Root, "alias.md")), "ln -s hop")
	view := func(want string) {
		t.Helper()
		testkit.Eventually(t, settle, func() (bool, string) {
			got := testkit.Text(t, p.Call("view", map[string]any{"path": "alias.md"}))
			return strings.Contains(got, want), "view(alias.md) = " + got
		})
	}
	view("leaves the project root")
	testkit.NoErr(t, os.Remove(filepath.Join(p.Root, "hop.md")), "rm hop")
	testkit.WriteFile(t, p.Root, "hop.md", "near words")
	view("near words")
}
