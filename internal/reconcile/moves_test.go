package reconcile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestWatchFoldersMovedIntoNewParents: mkdir m && mv c/sub m/sub, for many folders at once;
// the moved folders and the folders below them stay watched, so that later changes in them
// arrive without a rescan.
func TestWatchFoldersMovedIntoNewParents(t *testing.T) {
	const n = 50
	root := t.TempDir()
	for i := range n {
		testkit.WriteFile(t, root, fmt.Sprintf("c%02d/sub/a.md", i), fmt.Sprintf("# A %d\n\nfirst", i))
		testkit.WriteFile(t, root, fmt.Sprintf("c%02d/sub/deep/b.md", i), fmt.Sprintf("# B %d\n\nfirst", i))
	}
	p := testkit.NewPipeline(t, nil, root, "")
	p.Watch()
	testkit.EventuallyMatchesDisk(t, p.Client, root, settle)

	for i := range n {
		testkit.NoErr(t, os.Mkdir(filepath.Join(root, fmt.Sprintf("m%02d", i)), 0o755), "mkdir")
		testkit.NoErr(t, os.Rename(filepath.Join(root, fmt.Sprintf("c%02d/sub", i)), filepath.Join(root, fmt.Sprintf("m%02d/sub", i))), "mv")
	}
	testkit.EventuallyMatchesDisk(t, p.Client, root, settle)

	// Changes inside the moved folders, at every depth: edits, new files, new folders.
	for i := range n {
		testkit.WriteFile(t, root, fmt.Sprintf("m%02d/sub/a.md", i), fmt.Sprintf("# A %d\n\nsecond", i))
		testkit.WriteFile(t, root, fmt.Sprintf("m%02d/sub/deep/b.md", i), fmt.Sprintf("# B %d\n\nsecond", i))
		testkit.WriteFile(t, root, fmt.Sprintf("m%02d/sub/deep/c.md", i), fmt.Sprintf("# C %d\n\nnew", i))
		testkit.WriteFile(t, root, fmt.Sprintf("m%02d/sub/deep/new/d.md", i), fmt.Sprintf("# D %d\n\nnew", i))
	}
	testkit.EventuallyMatchesDisk(t, p.Client, root, settle)

	// And back, into other new parents, then changed again.
	for i := range n {
		testkit.NoErr(t, os.MkdirAll(filepath.Join(root, fmt.Sprintf("back/n%02d", i)), 0o755), "mkdir -p")
		testkit.NoErr(t, os.Rename(filepath.Join(root, fmt.Sprintf("m%02d/sub", i)), filepath.Join(root, fmt.Sprintf("back/n%02d/sub", i))), "mv")
	}
	testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
	for i := range n {
		testkit.WriteFile(t, root, fmt.Sprintf("back/n%02d/sub/deep/new/d.md", i), fmt.Sprintf("# D %d\n\nthird", i))
		testkit.NoErr(t, os.Remove(filepath.Join(root, fmt.Sprintf("back/n%02d/sub/deep/c.md", i))), "rm")
	}
	testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
}
