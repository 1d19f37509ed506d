package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// TestTreeAndViewEqualDisk is the end-to-end contract: after a scan, every file on disk is
// in tree, and view returns its bytes.
func TestTreeAndViewEqualDisk(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	testkit.RequireMatchesDisk(t, p.Client, root)
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

// TestInitialWaitCountsFromStart: a catalog that never completes a scan makes calls wait
// for it only until InitialWait after the process started; past that, every call answers
// from what the catalog holds at once, focus (which reads the catalog twice) included.
func TestInitialWaitCountsFromStart(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "", func(s *mcpserver.Server) {
		s.InitialWait = time.Hour
		s.Started = time.Now().Add(-2 * time.Hour) // the hour has passed
	})
	// No scan: the catalog has never held a complete one.
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"view", map[string]any{"path": ""}}, {"focus", map[string]any{"context": ""}}, {"list", nil}} {
		testkit.Call(t, p.Client, call.tool, call.args)
	}
}
