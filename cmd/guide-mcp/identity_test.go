package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/testkit"
)

// userClient starts the built guide-mcp over stdio as a user whose data home is home,
// with no --data: the data directory is the default one.
func userClient(t *testing.T, home string, args ...string) *client.Client {
	t.Helper()
	env := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data")}
	// The owner daemon it starts stops soon after its last client.
	c, err := client.NewStdioMCPClient(filepath.Join(binDir, "guide-mcp"), env, append(args, "--idle-timeout", "2s")...)
	if err != nil {
		t.Fatalf("start guide-mcp: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	initialize(t, c)
	return c
}

// TestSameNamedRootsServedTogether: two folders named docs are two projects, each with
// its own data directory, served at the same time; a symbolic link to one of them names
// the same project.
func TestSameNamedRootsServedTogether(t *testing.T) {
	home, base := t.TempDir(), t.TempDir()
	a, b := filepath.Join(base, "a", "docs"), filepath.Join(base, "b", "docs")
	testkit.WriteFile(t, a, "alpha.md", "# Alpha\n")
	testkit.WriteFile(t, b, "beta.md", "# Beta\n")
	link := filepath.Join(base, "link")
	testkit.NoErr(t, os.Symlink(a, link), "symlink")

	ca := userClient(t, home, "--root", a)
	cb := userClient(t, home, "--root", b)
	sa, sb := testkit.WaitCaughtUp(t, ca), testkit.WaitCaughtUp(t, cb)
	testkit.RequireMatchesDisk(t, ca, a)
	testkit.RequireMatchesDisk(t, cb, b)
	if !strings.HasPrefix(sa.Project, "docs-") || !strings.HasPrefix(sb.Project, "docs-") || sa.Project == sb.Project {
		t.Fatalf("projects %q and %q: want two names docs-<hash>", sa.Project, sb.Project)
	}
	for _, p := range []string{sa.Project, sb.Project} {
		if _, err := os.Stat(filepath.Join(home, "data", "guide", p, "query")); err != nil {
			t.Errorf("data directory of %s: %v", p, err)
		}
	}

	testkit.NoErr(t, ca.Close(), "close the first client")
	cl := userClient(t, home, "--root", link)
	testkit.Equal(t, testkit.WaitCaughtUp(t, cl).Project, sa.Project, "project through the symbolic link")
	testkit.RequireMatchesDisk(t, cl, a)
}

// TestRenamedProjectRebuilds: a data directory built under another project name (the
// folder's bare name, as before projects were named after their path) is rebuilt for the
// new name: the projections start again and the tree is published under the new subjects.
func TestRenamedProjectRebuilds(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	c := stdioClient(t, "--root", root, "--data", data, "--project", "sample")
	testkit.Equal(t, testkit.WaitCaughtUp(t, c).Project, "sample", "project named by --project")
	testkit.NoErr(t, c.Close(), "close")
	// The owner of the first run serves its project until it stops, idle.
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		return !owner.Held(data), "the first run's owner still holds the data directory"
	})

	testkit.WriteFile(t, root, "Plot/new.md", "written between the two runs")
	c = stdioClient(t, "--root", root, "--data", data)
	st := testkit.WaitCaughtUp(t, c)
	testkit.Equal(t, st.Project, datadir.ProjectName(root), "project named after the root's path")
	testkit.RequireMatchesDisk(t, c, root)
}
