package projection_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/testkit/damage"
)

// notes writes n documents of some length under root.
func notes(t *testing.T, root string, n int) {
	t.Helper()
	for i := range n {
		testkit.WriteFile(t, root, fmt.Sprintf("part-%d/note-%d.md", i%5, i),
			fmt.Sprintf("# Note %d\n\n%s\n", i, strings.Repeat(fmt.Sprintf("the words of note %d ", i), 20+i%40)))
	}
}

// TestDamagedBodiesAreRepairedFromTheStream scribbles over the body file of a stopped
// pipeline's catalog and starts it again: every document reads as on disk — the damaged
// ones read again from the stream and written back — none with other bytes; the status
// reports the repair, and a restart finds the body file whole.
func TestDamagedBodiesAreRepairedFromTheStream(t *testing.T) {
	root := t.TempDir()
	notes(t, root, 300)
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	p.Stop()
	bodies, _ := filepath.Glob(filepath.Join(p.DataDir, "bodies.*"))
	if len(bodies) != 1 {
		t.Fatalf("body files: %v", bodies)
	}
	testkit.NoErr(t, damage.File(bodies[0], damage.Scribble, rand.New(rand.NewPCG(1, 2))), "scribble")

	p.Start()
	testkit.WaitCaughtUp(t, p.Client)
	// A body kept past its snapshot (search's snippets) is checked as one read within it.
	disk := testkit.Disk(t, root)
	var kept []projection.Body
	var paths []string
	testkit.NoErr(t, p.Catalog.Read(func(s *projection.Snapshot) error {
		for path := range disk {
			d, ok := s.Document(path)
			if !ok {
				return fmt.Errorf("%s missing", path)
			}
			b, err := s.KeepBody(d)
			if err != nil {
				return err
			}
			kept, paths = append(kept, b), append(paths, path)
		}
		return nil
	}), "keep the bodies")
	for i, b := range kept {
		got, err := b.Read()
		b.Release()
		if err != nil || disk[paths[i]] != string(got) {
			t.Fatalf("%s kept: %.40q, %v; want the disk's bytes", paths[i], got, err)
		}
	}
	testkit.RequireMatchesDisk(t, p.Client, root)
	testkit.Eventually(t, 10*time.Second, func() (bool, string) {
		st := testkit.ReadStatus(t, p.Client)
		return len(st.Repairs) > 0, fmt.Sprintf("no repair in the status: %+v", st)
	})
	p.Stop() // waits for the bodies being written back

	// Whole again: read without a stream to repair from, every body is good.
	c := &projection.Catalog{Dir: p.DataDir, Logger: testkit.Logger()}
	testkit.NoErr(t, c.Open(), "open")
	defer c.Close()
	testkit.NoErr(t, c.Read(func(s *projection.Snapshot) error {
		for path, want := range disk {
			d, ok := s.Document(path)
			if !ok {
				return fmt.Errorf("%s missing", path)
			}
			b, err := s.Content(d)
			if err != nil || string(b) != want {
				return fmt.Errorf("%s: %q, %v after the repair", path, b, err)
			}
		}
		return nil
	}), "the repaired body file")
}

// TestCatalogDamagedWhileServingIsRebuilt cuts catalog.db short under a running pipeline:
// the read that faults marks it damaged, the runner resets it, and it is rebuilt from the
// stream, equal to the disk again, with the repair in the status.
func TestCatalogDamagedWhileServingIsRebuilt(t *testing.T) {
	root := t.TempDir()
	notes(t, root, 300)
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	testkit.NoErr(t, os.Truncate(filepath.Join(p.DataDir, "catalog.db"), 32<<10), "truncate")
	p.Catalog.Release() // pages are read again from the file
	_ = p.Call("get_summary", map[string]any{"path": "part-1/note-1.md"})
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		st := testkit.ReadStatus(t, p.Client)
		return len(st.Repairs) > 0, fmt.Sprintf("no repair in the status: %+v", st)
	})
	testkit.WaitCaughtUp(t, p.Client)
	testkit.EventuallyMatchesDisk(t, p.Client, root, 30*time.Second)
}
