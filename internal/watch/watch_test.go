package watch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/watch"
)

// TestReadyMeansWatched: once Ready is closed, a change anywhere in the tree is delivered,
// in the last folder to be watched as in the first. An indexer scans the tree after Ready:
// a file changed after the scan read it is then always seen.
func TestReadyMeansWatched(t *testing.T) {
	root := t.TempDir()
	var deepest string
	for i := range 300 {
		deepest = filepath.Join(root, fmt.Sprintf("f%03d", i), "a", "b")
		if err := os.MkdirAll(deepest, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	out := make(chan watch.Batch, 16)
	w := &watch.Watcher{Root: root, Ready: ready}
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx, out) }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("watcher stopped before it was ready: %v", err)
	}
	// The first and the last folder of the walk; no wait between Ready and the writes.
	first := filepath.Join(root, "f000", "a", "b", "first.md")
	last := filepath.Join(deepest, "last.md")
	for _, p := range []string{first, last} {
		if err := os.WriteFile(p, []byte("words"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"f000/a/b/first.md", strings.TrimPrefix(filepath.ToSlash(last), filepath.ToSlash(root)+"/")}
	seen := map[string]bool{}
	deadline := time.After(30 * time.Second)
	for !seen[want[0]] || !seen[want[1]] {
		select {
		case b := <-out:
			if b.Rescan {
				t.Fatalf("a rescan (%s) where two changes were due", b.Reason)
			}
			for _, p := range b.Paths {
				seen[p] = true
			}
		case <-deadline:
			got := make([]string, 0, len(seen))
			for p := range seen {
				got = append(got, p)
			}
			slices.Sort(got)
			t.Fatalf("changes delivered: %v; want %v among them", got, want)
		}
	}
}
