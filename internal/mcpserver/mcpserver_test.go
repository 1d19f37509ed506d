package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

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
	// Documents, and no scan: the catalog holds them and has never held a complete scan.
	testkit.PublishDocs(t, p.Stream, p.Project, "notes/n%d.md", "# Note %d", 3)
	info, err := p.Stream.Info(testkit.Context(t))
	testkit.NoErr(t, err, "stream info")
	p.WaitApplied(info.State.LastSeq)
	if st := testkit.ReadStatus(t, p.Client); st.InitialScanDone {
		t.Fatal("the catalog holds a complete scan: the test needs one that never did")
	}

	// A call that waited for the scan would wait out the hour: the calls run with no
	// deadline of their own, and the test gives up on them long before.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type answer struct {
		tool string
		res  *mcp.CallToolResult
		err  error
	}
	answers := make(chan answer)
	go func() {
		defer close(answers)
		for _, call := range []struct {
			tool string
			args map[string]any
		}{{"view", map[string]any{"path": "notes"}}, {"focus", map[string]any{"context": "notes"}}, {"list", nil}} {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = call.tool, call.args
			res, err := p.Client.CallTool(ctx, req)
			select {
			case answers <- answer{call.tool, res, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	got := map[string]*mcp.CallToolResult{}
	giveUp := time.NewTimer(30 * time.Second)
	defer giveUp.Stop()
	for len(got) < 3 {
		select {
		case a := <-answers:
			testkit.NoErr(t, a.err, a.tool)
			got[a.tool] = a.res
		case <-giveUp.C:
			t.Fatalf("answered %d of 3 calls; the others still wait for a scan, though InitialWait from the start has passed", len(got))
		}
	}
	var fv query.FolderView
	testkit.Decode(t, got["view"], &fv)
	testkit.Equal(t, len(fv.Documents), 3, "documents view shows")
	var fr query.FocusResult
	testkit.Decode(t, got["focus"], &fr)
	testkit.Equal(t, fr.Documents, 3, "documents available from the focus")
	var l query.ListResult
	testkit.Decode(t, got["list"], &l)
	testkit.Equal(t, l.Total, 3, "documents list shows")
}
