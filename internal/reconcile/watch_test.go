package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// settle is how long the tests give the pipeline to reflect the disk. Generous: it bounds
// a wait, it is not a measure (make bench measures freshness).
const settle = 30 * time.Second

func watching(t *testing.T, b *broker.Broker) *testkit.Pipeline {
	t.Helper()
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, b, root, "")
	p.Watch()
	testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
	return p
}

func move(t *testing.T, root, from, to string) {
	t.Helper()
	testkit.NoErr(t, os.MkdirAll(filepath.Dir(filepath.Join(root, to)), 0o755), "mkdir")
	testkit.NoErr(t, os.Rename(filepath.Join(root, from), filepath.Join(root, to)), "rename "+from)
}

// lastSeq is the stream's head.
func lastSeq(t *testing.T, p *testkit.Pipeline) uint64 {
	t.Helper()
	info, err := p.Stream.Info(testkit.Context(t))
	testkit.NoErr(t, err, "stream info")
	return info.State.LastSeq
}

func TestWatch(t *testing.T) {
	p := watching(t, nil)
	root := p.Root

	t.Run("CreateWriteDelete", func(t *testing.T) {
		testkit.WriteFile(t, root, "fresh.md", "one")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
		testkit.WriteFile(t, root, "fresh.md", "two")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
		testkit.NoErr(t, os.Remove(filepath.Join(root, "fresh.md")), "remove")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
	})
	t.Run("NewNestedFolderFilledAtOnce", func(t *testing.T) {
		// mkdir -p a/b/c && echo x > a/b/c/f.md: the file exists before any watch on c.
		testkit.NoErr(t, os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755), "mkdir -p")
		testkit.NoErr(t, os.WriteFile(filepath.Join(root, "a/b/c/f.md"), []byte("x"), 0o644), "write")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
	})
	t.Run("AtomicSave", func(t *testing.T) {
		// An editor writes a temporary file beside the target, then renames it over it.
		tmp := filepath.Join(root, "Characters", ".Elara.md.swp")
		testkit.NoErr(t, os.WriteFile(tmp, []byte("# Elara\n\nSaved atomically."), 0o644), "write temp")
		testkit.NoErr(t, os.Rename(tmp, filepath.Join(root, "Characters", "Elara.md")), "rename over")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
	})
	t.Run("RenameAndMoveFile", func(t *testing.T) {
		move(t, root, "Characters/Kael Stormborn.md", "Characters/Kael.md")
		move(t, root, "Characters/Kael.md", "Plot/Kael.md")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
	})
	t.Run("RenameMoveAndDeleteFolders", func(t *testing.T) {
		move(t, root, "Worldbuilding", "World")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
		move(t, root, "World/Creatures", "Plot/Outlines/Creatures")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
		// The moved folder is still watched under its new name.
		testkit.WriteFile(t, root, "Plot/Outlines/Creatures/Wyrm.md", "a new creature")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
		testkit.NoErr(t, os.RemoveAll(filepath.Join(root, "World")), "rm -r")
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
	})
	t.Run("EditorFilesIgnored", func(t *testing.T) {
		for _, name := range []string{"notes.md~", ".notes.md.swp", "4913", ".#notes.md", "notes.md.tmp"} {
			testkit.WriteFile(t, root, "Plot/"+name, "scratch")
		}
		testkit.WriteFile(t, root, "Plot/notes.md", "kept")
		testkit.Eventually(t, settle, func() (bool, string) {
			var v struct {
				Documents []struct{ Name string } `json:"documents"`
			}
			testkit.Decode(t, p.Call("view", map[string]any{"path": "Plot"}), &v)
			names := map[string]bool{}
			for _, d := range v.Documents {
				names[d.Name] = true
			}
			if !names["notes.md"] {
				return false, "notes.md never appeared"
			}
			for n := range names {
				if n != "notes.md" && n != "Kael.md" {
					t.Fatalf("editor file %q indexed", n)
				}
			}
			return true, ""
		})
	})
	t.Run("ChmodIsNoise", func(t *testing.T) {
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
		before := lastSeq(t, p)
		testkit.NoErr(t, os.Chmod(filepath.Join(root, "README.md"), 0o600), "chmod")
		testkit.WriteFile(t, root, "marker.md", "after the chmod") // a change that must arrive
		testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
		testkit.Equal(t, lastSeq(t, p), before+1, "events published: the marker's only")
	})
}

// TestWatchMoveFolderOfThousand: one mv of a folder of 1,000 files yields 1,000 deletes
// and 1,000 upserts.
func TestWatchMoveFolderOfThousand(t *testing.T) {
	root := t.TempDir()
	for i := range 1000 {
		testkit.WriteFile(t, root, fmt.Sprintf("src/batch/doc-%04d.md", i), fmt.Sprintf("document %d", i))
	}
	p := testkit.NewPipeline(t, nil, root, "")
	p.Watch()
	testkit.EventuallyMatchesDisk(t, p.Client, root, settle)
	before := lastSeq(t, p)

	move(t, root, "src/batch", "dst/moved")
	testkit.EventuallyMatchesDisk(t, p.Client, root, settle)

	cur, _, err := testkit.Current(testkit.Context(t), p.Stream, p.Project)
	testkit.NoErr(t, err, "current")
	var deletes, upserts int
	for _, st := range cur {
		if st.Seq <= before {
			continue
		}
		switch st.Op {
		case events.OpDelete:
			deletes++
		case events.OpUpsert:
			upserts++
		}
	}
	testkit.Equal(t, [2]int{deletes, upserts}, [2]int{1000, 1000}, "deletes and upserts after the move")
}

// TestWatchGuideIgnore: .guideignore leaves paths out, and editing it brings them back;
// it is configuration, not a document.
func TestWatchGuideIgnore(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	testkit.WriteFile(t, root, ".guideignore", "Plot/\n*.bin\n")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Indexer.Ignore = []string{"README.md"}
	p.Watch()
	visible := func() map[string]bool {
		var v struct {
			Folders   []struct{ Name string } `json:"folders"`
			Documents []struct{ Name string } `json:"documents"`
		}
		testkit.Decode(t, p.Call("view", map[string]any{"path": ""}), &v)
		out := map[string]bool{}
		for _, f := range v.Folders {
			out[f.Name+"/"] = true
		}
		for _, d := range v.Documents {
			out[d.Name] = true
		}
		return out
	}
	waitFor := func(what string, ok func(map[string]bool) bool) {
		t.Helper()
		testkit.Eventually(t, settle, func() (bool, string) {
			v := visible()
			return ok(v), fmt.Sprintf("%s: root shows %v", what, v)
		})
	}
	waitFor("ignored paths left out", func(v map[string]bool) bool {
		return v["Characters/"] && !v["Plot/"] && !v["README.md"] && !v[".guideignore"]
	})
	testkit.WriteFile(t, root, "Plot/Outlines/act-two.md", "ignored too")
	testkit.WriteFile(t, root, ".guideignore", "*.bin\n")
	waitFor("a folder no longer ignored comes back", func(v map[string]bool) bool { return v["Plot/"] && !v["README.md"] })
}

// TestWatchOverflow: a burst of creates larger than the kernel's event queue is found by
// the rescan that the overflow triggers.
func TestWatchOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 50,000 files")
	}
	p := watching(t, nil)
	n := 50_000
	if raceEnabled {
		n = 20_000 // still above the default queue of 16,384 events
	}
	for i := range n {
		testkit.WriteFile(t, p.Root, fmt.Sprintf("burst/%02d/f-%05d.md", i%50, i), "x")
	}
	testkit.EventuallyMatchesDisk(t, p.Client, p.Root, 3*time.Minute)
}

// TestWatchNATSRestartDuringChurn: the indexer keeps watching while NATS is down, and
// publishes what changed meanwhile when it is back.
func TestWatchNATSRestartDuringChurn(t *testing.T) {
	store, addr := t.TempDir(), freeAddr(t)
	startServer := func() *broker.Broker {
		b := &broker.Broker{StoreDir: store, Listen: addr, Name: "server", Logger: testkit.Logger()}
		testkit.NoErr(t, b.Open(), "start NATS")
		return b
	}
	server := startServer()
	client := &broker.Broker{URL: "nats://" + addr, Name: "client", Logger: testkit.Logger()}
	testkit.NoErr(t, client.Open(), "connect")
	t.Cleanup(func() { _ = client.Close() })
	p := watching(t, client)

	var wg sync.WaitGroup
	ctx, stop := context.WithCancel(context.Background())
	testkit.NoErr(t, os.MkdirAll(filepath.Join(p.Root, "churn"), 0o755), "churn folder")
	wg.Go(func() {
		// Not the test's goroutine: a failure is reported with t.Error and ends the churn.
		for i := 0; ctx.Err() == nil; i++ {
			name := filepath.Join(p.Root, fmt.Sprintf("churn/%d.md", i%40))
			if err := os.WriteFile(name, fmt.Appendf(nil, "version %d", i), 0o644); err != nil {
				t.Errorf("churn: %v", err)
				return
			}
			if i%7 == 0 {
				_ = os.Remove(filepath.Join(p.Root, fmt.Sprintf("churn/%d.md", (i+13)%40)))
			}
			time.Sleep(2 * time.Millisecond) // paces the churn
		}
	})
	// The sleeps below are the scenario's timeline, not waits for a condition: churn runs
	// before, during and after the outage.
	time.Sleep(300 * time.Millisecond)
	_ = server.Close()
	time.Sleep(500 * time.Millisecond) // churn goes on while NATS is down
	server = startServer()
	t.Cleanup(func() { _ = server.Close() })
	time.Sleep(300 * time.Millisecond) // and goes on after it is back
	stop()
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	testkit.EventuallyMatchesDisk(t, p.Client, p.Root, time.Minute)
}
