package mcpserver_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// collect walks a tree result into path → words for documents, and the set of folders.
func collect(n *query.TreeNode, docs map[string]int, folders map[string]bool) {
	if n.Type == "document" {
		docs[n.Path] = n.Words
		return
	}
	folders[n.Path] = true
	for _, c := range n.Children {
		collect(c, docs, folders)
	}
}

// TestTreeAndViewEqualDisk is the end-to-end contract: after a scan, every file on disk is
// in tree, and view returns its bytes.
func TestTreeAndViewEqualDisk(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	disk := testkit.Disk(t, root)

	var tv query.TreeView
	testkit.Decode(t, p.Call("tree", map[string]any{"folder": "", "depth": 5}), &tv)
	docs, folders := map[string]int{}, map[string]bool{}
	collect(tv.TreeNode, docs, folders)
	var got, want []string
	for p := range docs {
		got = append(got, p)
	}
	for p := range disk {
		want = append(want, p)
		if d := filepath.ToSlash(filepath.Dir(p)); d != "." && !folders[d] {
			t.Errorf("folder %q missing from tree", d)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	testkit.Equal(t, got, want, "documents in tree")

	for path, content := range disk {
		var dv query.DocumentView
		testkit.Decode(t, p.Call("view", map[string]any{"path": path}), &dv)
		if strings.IndexByte(content, 0) >= 0 {
			testkit.Equal(t, dv.Status, "binary", "status of "+path)
			continue
		}
		testkit.Equal(t, dv.Content, content, "content of "+path)
	}
}

func TestViewFollowsChanges(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	testkit.WriteFile(t, root, "Characters/Elara.md", "# Elara\n\nRewritten.\n")
	testkit.WriteFile(t, root, "new/deep/file.md", "fresh")
	if err := os.Remove(filepath.Join(root, "Characters/Kael Stormborn.md")); err != nil {
		t.Fatal(err)
	}
	sum := p.Reconcile()
	testkit.Equal(t, [3]int{sum.Published, sum.Deleted, sum.Unchanged}, [3]int{2, 1, 8}, "published, deleted, unchanged")

	var dv query.DocumentView
	testkit.Decode(t, p.Call("view", map[string]any{"path": "Characters/Elara.md"}), &dv)
	testkit.Equal(t, dv.Content, "# Elara\n\nRewritten.\n", "changed content")
	testkit.Decode(t, p.Call("view", map[string]any{"path": "new/deep/file.md"}), &dv)
	testkit.Equal(t, dv.Content, "fresh", "new content")
	f := testkit.DecodeFailure(t, p.Call("view", map[string]any{"path": "Characters/Kael Stormborn.md"}))
	testkit.Equal(t, f.ErrorType, "not_found", "deleted document")
}
