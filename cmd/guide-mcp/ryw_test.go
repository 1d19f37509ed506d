package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/testkit/oracle"
)

// rywTrials is how many changes each read-your-writes test makes, each checked at once
// (fewer with -short).
func rywTrials() int {
	if testing.Short() {
		return 30
	}
	return 200
}

// TestReadYourWrites: a client that changes a file of the folder (a new word written into
// a document; a document created, renamed, deleted) and at once calls search, view and
// tree gets answers that hold the change, every time: through mcp-go's client on the
// all-in-one process, and through a stdio bridge to the owner. The bound on the wait is
// set high, so that no answer of a loaded machine is partial: each must be fresh.
func TestReadYourWrites(t *testing.T) {
	t.Run("AllInOne", func(t *testing.T) {
		root := testkit.CopyTree(t, "../../testdata/sample")
		m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0", "--sync-wait", "20s")
		c := httpClient(t, m)
		testkit.WaitCaughtUp(t, c)
		readYourWrites(t, c, root, rywTrials(), 1)
	})
	t.Run("Bridge", func(t *testing.T) {
		root := testkit.CopyTree(t, "../../testdata/sample")
		c := bridgedClient(t, root, t.TempDir(), "--sync-wait", "20s")
		testkit.WaitCaughtUp(t, c)
		readYourWrites(t, c, root, rywTrials(), 2)
	})
}

// TestSyncCookiesStayOutOfGit: in a git repository the sync cookies go into .git, so
// that git status never lists one, however often it runs while calls sync; none is left
// behind, and none is ever a document.
func TestSyncCookiesStayOutOfGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := testkit.CopyTree(t, "../../testdata/sample")
	git := func(args ...string) string {
		cmd := exec.Command(gitBin, append([]string{"-C", root}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		testkit.NoErr(t, err, "git "+strings.Join(args, " ")+": "+string(out))
		return string(out)
	}
	git("init", "-q")
	git("-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "sample")

	m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0", "--sync-wait", "20s")
	c := httpClient(t, m)
	testkit.WaitCaughtUp(t, c)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var shown string
	statuses := 0
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Not git(): a failure here must not end the test from this goroutine.
			out, _ := exec.Command(gitBin, "-C", root, "status", "--porcelain", "--untracked-files=all", "--ignored").CombinedOutput()
			statuses++
			if strings.Contains(string(out), "cookie") {
				shown = string(out)
				return
			}
		}
	})
	readYourWrites(t, c, root, 60, 3)
	close(stop)
	wg.Wait()
	t.Logf("git status ran %d times meanwhile", statuses)
	if shown != "" {
		t.Fatalf("git status lists a sync cookie:\n%s", shown)
	}
	for _, dir := range []string{root, filepath.Join(root, ".git")} {
		entries, err := os.ReadDir(dir)
		testkit.NoErr(t, err, "read "+dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), "cookie") {
				t.Errorf("a sync cookie is left behind: %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}

// readYourWrites makes trials changes to root and checks each at once through c: no
// answer misses the change, none says it is partial, none shows a sync cookie; then the
// whole tree agrees with the disk.
func readYourWrites(t *testing.T, c client.MCPClient, root string, trials int, seed uint64) {
	t.Helper()
	w := &oracle.Writer{Root: root, Rand: rand.New(rand.NewPCG(seed, 33))}
	ops := map[string]int{}
	for i := range trials {
		out, err := w.Trial(testkit.Context(t), c)
		testkit.NoErr(t, err, "trial")
		ops[out.Op]++
		if out.Stale != "" {
			t.Fatalf("trial %d (%s): %s", i, out.Op, out.Stale)
		}
		if out.Partial > 0 {
			t.Fatalf("trial %d (%s): %d answers said they were partial", i, out.Op, out.Partial)
		}
	}
	t.Logf("%d trials, every answer fresh: %v", trials, ops)
	testkit.RequireMatchesDisk(t, c, root)
}
