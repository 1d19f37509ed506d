package reconcile_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// documents lists the paths the stream holds as documents of project p.
func documents(t *testing.T, s *events.Stream) []string {
	t.Helper()
	cur, _, err := testkit.Current(testkit.Context(t), s, "p")
	testkit.NoErr(t, err, "current state")
	var out []string
	for p, st := range cur {
		if st.Op == events.OpUpsert {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// repository is testdata/sample with rule files at two levels, a log file, and the
// project configuration.
func repository(t *testing.T) string {
	root := testkit.CopyTree(t, "../../testdata/sample")
	testkit.WriteFile(t, root, ".gitignore", "*.log\nPlot/\n")
	testkit.WriteFile(t, root, "Characters/.gitignore", "Elara.md\n")
	testkit.WriteFile(t, root, ".guideignore", "*.bin\n")
	testkit.WriteFile(t, root, "guide.yaml", "categories:\n  people:\n    dir: Characters\n")
	testkit.WriteFile(t, root, "build.log", "noise")
	testkit.WriteFile(t, root, "Characters/old.log", "noise")
	return root
}

var sampleDocs = []string{
	"Characters/Elara.md", "Characters/Kael Stormborn.md", "Notes and drafts/idées.md",
	"Plot/Outlines/act-one.md", "README.md", "Worldbuilding/Creatures/Dragons.md",
	"Worldbuilding/magic-system.md", "Worldbuilding/map.bin",
	"guidelines/code-review.md", "guidelines/prompt.md.mustache",
}

func without(all []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(all), func(p string) bool { return slices.Contains(drop, p) })
}

func TestGitignore(t *testing.T) {
	t.Run("EveryLevelAndGuideignoreOnTop", func(t *testing.T) {
		x, s := newIndexer(t, repository(t))
		_, err := x.Reconcile(testkit.Context(t))
		testkit.NoErr(t, err, "reconcile")
		testkit.Equal(t, documents(t, s), without(sampleDocs, "Plot/Outlines/act-one.md", "Characters/Elara.md", "Worldbuilding/map.bin"),
			"documents (rule files and guide.yaml are configuration)")
	})
	t.Run("NoGitignore", func(t *testing.T) {
		x, s := newIndexer(t, repository(t))
		x.NoGitignore = true
		_, err := x.Reconcile(testkit.Context(t))
		testkit.NoErr(t, err, "reconcile")
		want := append(without(sampleDocs, "Worldbuilding/map.bin"), "build.log", "Characters/old.log")
		slices.Sort(want)
		testkit.Equal(t, documents(t, s), want, "documents with only .guideignore in force")
	})
	t.Run("ConfigurationFilesOnceDocumentsAreDeleted", func(t *testing.T) {
		// A stream written before rule files and guide.yaml were configuration holds them
		// as documents: the next reconcile deletes them.
		root := repository(t)
		x, s := newIndexer(t, root)
		ctx := testkit.Context(t)
		pub := s.Publisher()
		for _, p := range []string{".gitignore", ".guideignore", "guide.yaml", "Characters/.gitignore"} {
			testkit.NoErr(t, pub.Publish(ctx, &events.Event{Op: events.OpUpsert, Project: "p", Path: p,
				Content: []byte("x"), Hash: events.HashContent([]byte("x")), Status: events.StatusOK, Mtime: time.Now()}), "publish "+p)
		}
		_, err := pub.Flush(ctx)
		testkit.NoErr(t, err, "flush")
		sum, err := x.Reconcile(ctx)
		testkit.NoErr(t, err, "reconcile")
		testkit.Equal(t, sum.Deleted, 4, "deleted")
		testkit.Equal(t, slices.Contains(documents(t, s), "guide.yaml"), false, "guide.yaml a document")
	})
}

// TestWatchGitignore: editing a .gitignore while watching deletes the documents it now
// leaves out and adds those it brings back; a folder brought back is watched from then on.
func TestWatchGitignore(t *testing.T) {
	root := repository(t)
	x, s := newIndexer(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = x.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor := func(what string, want []string) {
		t.Helper()
		slices.Sort(want)
		deadline := time.Now().Add(settle)
		for !slices.Equal(documents(t, s), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the stream holds %v, want %v", what, documents(t, s), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	base := without(sampleDocs, "Worldbuilding/map.bin")
	waitFor("first scan", without(base, "Plot/Outlines/act-one.md", "Characters/Elara.md"))

	testkit.WriteFile(t, root, ".gitignore", "*.log\n")
	testkit.WriteFile(t, root, "Characters/.gitignore", "Kael*\n")
	waitFor("rules edited", without(base, "Characters/Kael Stormborn.md"))

	testkit.WriteFile(t, root, "Plot/Outlines/act-two.md", "in a folder brought back")
	waitFor("a file written in a folder brought back", append(without(base, "Characters/Kael Stormborn.md"), "Plot/Outlines/act-two.md"))

	testkit.WriteFile(t, root, "Worldbuilding/.gitignore", "Creatures/\n")
	waitFor("a new .gitignore", append(without(base, "Characters/Kael Stormborn.md", "Worldbuilding/Creatures/Dragons.md"), "Plot/Outlines/act-two.md"))
}

// TestGitignoreOfManyGlobstarsOverADeepTree: a .gitignore line of many "**" does not stall
// the first scan of a deep tree; the document at the bottom is published, and the one the
// line names is left out.
func TestGitignoreOfManyGlobstarsOverADeepTree(t *testing.T) {
	root := t.TempDir()
	dir := ""
	for i := 1; i <= 30; i++ {
		dir = path.Join(dir, fmt.Sprintf("d%02d", i))
	}
	testkit.WriteFile(t, root, ".gitignore", strings.Repeat("**/", 11)+"nomatch\n"+strings.Repeat("**/d*/", 10)+"**/skip.md\n")
	testkit.WriteFile(t, root, dir+"/bottom.md", "# Bottom\n")
	testkit.WriteFile(t, root, dir+"/skip.md", "# Skip\n")
	x, s := newIndexer(t, root)
	_, err := x.Reconcile(testkit.Context(t))
	testkit.NoErr(t, err, "reconcile")
	testkit.Equal(t, documents(t, s), []string{dir + "/bottom.md"}, "documents")
}
