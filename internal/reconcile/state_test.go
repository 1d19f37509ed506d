package reconcile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/reconcile"
	"github.com/guide/guide/internal/testkit"
)

// TestStateFile: a run with a current state file reads nothing of the stream but its end,
// one after other writers reads what they published, and a file that cannot be trusted
// (missing, corrupt, of another stream or project, ahead of the stream, too far behind
// it) is set aside for the stream, read whole. In every case the run publishes what the
// stream lacks: here a.md, which another writer deleted while it is still in the tree;
// each bad file claims the stream holds a.md as it is (a run that believed it would
// publish nothing).
func TestStateFile(t *testing.T) {
	type setup struct {
		t    *testing.T
		ctx  context.Context
		s    *events.Stream
		file string
	}
	// doctor rewrites the state file as claiming to be current, then as change says.
	doctor := func(change func(st *reconcile.StateFileContent)) func(setup) {
		return func(c setup) {
			st, err := reconcile.ReadStateFile(c.file)
			testkit.NoErr(c.t, err, "read the state file")
			info, err := c.s.Info(c.ctx)
			testkit.NoErr(c.t, err, "info")
			st.Seq = info.State.LastSeq
			if change != nil {
				change(&st)
			}
			testkit.NoErr(c.t, reconcile.WriteStateFile(c.file, st), "write the state file")
		}
	}
	rewrite := func(change func([]byte) []byte) func(setup) {
		return func(c setup) {
			doctor(nil)(c)
			b, err := os.ReadFile(c.file)
			testkit.NoErr(c.t, err, "read")
			testkit.NoErr(c.t, os.WriteFile(c.file, change(b), 0o600), "write")
		}
	}
	cases := []struct {
		name     string
		prepare  func(setup)
		known    string
		setAside string // what Summary.StateFile holds, in part
		stays    bool   // the file cannot be replaced
	}{
		{"EventsAfterTheFileAreRead", nil, "state file and events after it", "", false},
		{"Missing", func(c setup) { testkit.NoErr(c.t, os.Remove(c.file), "remove") }, "stream", "missing", false},
		{"Empty", rewrite(func([]byte) []byte { return nil }), "stream", "corrupt", false},
		{"Truncated", rewrite(func(b []byte) []byte { return b[:len(b)/2] }), "stream", "corrupt", false},
		{"ByteFlipped", rewrite(func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }), "stream", "corrupt", false},
		{"Unreadable", func(c setup) {
			testkit.NoErr(c.t, os.Remove(c.file), "remove")
			testkit.NoErr(c.t, os.Mkdir(c.file, 0o700), "a folder in its place")
		}, "stream", "corrupt", true},
		{"AnotherStream", doctor(func(st *reconcile.StateFileContent) { st.Stream = "GUIDE@1" }), "stream", "of another stream", false},
		{"AnotherProject", doctor(func(st *reconcile.StateFileContent) { st.Project = "q" }), "stream", "of another project", false},
		{"AheadOfTheStream", doctor(func(st *reconcile.StateFileContent) { st.Seq += 5 }), "stream", "ahead of the stream", false},
		{"TooFarBehind", doctor(func(st *reconcile.StateFileContent) {
			st.Seq = 0
			for p := range st.Docs {
				if p != "a.md" {
					delete(st.Docs, p)
				}
			}
		}), "stream", "too far behind", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, p := range []string{"a.md", "b.md", "c.md", "d/e.md"} {
				testkit.WriteFile(t, root, p, "text of "+p)
			}
			s := testkit.Stream(t, testkit.NATS(t))
			ctx := testkit.Context(t)
			file := filepath.Join(t.TempDir(), reconcile.StateFileName)
			index := stateIndexer(t, ctx, root, s, file)
			first := index()
			testkit.Equal(t, [2]any{first.Published, first.Known}, [2]any{4, "stream"}, "first run: published, known from")
			again := index()
			testkit.Equal(t, [3]any{again.Published, again.Known, again.StateFile}, [3]any{0, "state file", ""}, "a run with the file current")

			// Another writer deletes a.md; the tree still holds it.
			pub := s.Publisher()
			testkit.NoErr(t, pub.Publish(ctx, &events.Event{Op: events.OpDelete, Project: "p", Path: "a.md"}), "publish")
			_, err := pub.Flush(ctx)
			testkit.NoErr(t, err, "flush")
			if tc.prepare != nil {
				tc.prepare(setup{t, ctx, s, file})
			}

			sum := index()
			testkit.Equal(t, [2]any{sum.Published, sum.Known}, [2]any{1, tc.known}, "published (a.md again), known from")
			if !strings.Contains(sum.StateFile, tc.setAside) || (tc.setAside == "") != (sum.StateFile == "") {
				t.Errorf("state file set aside as %q, want %q", sum.StateFile, tc.setAside)
			}
			cur, _, err := testkit.Current(ctx, s, "p")
			testkit.NoErr(t, err, "current")
			testkit.Equal(t, cur["a.md"].Op, events.OpUpsert, "a.md's last event")

			// The file is rewritten whole: the next run reads nothing but the stream's end.
			if tc.stays {
				return
			}
			next := index()
			testkit.Equal(t, [3]any{next.Published, next.Known, next.StateFile}, [3]any{0, "state file", ""}, "the run after")
		})
	}
}

// TestStateFileOfARecreatedStream: a stream deleted and made again under the same name
// holds none of what the file says; the run publishes everything again.
func TestStateFileOfARecreatedStream(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, "a.md", "a")
	testkit.WriteFile(t, root, "b.md", "b")
	s := testkit.Stream(t, testkit.NATS(t))
	ctx := testkit.Context(t)
	file := filepath.Join(t.TempDir(), reconcile.StateFileName)
	index := stateIndexer(t, ctx, root, s, file)
	index()
	// Publish to it until it reaches the old stream's end, so that only its identity
	// tells the two apart.
	testkit.NoErr(t, s.JS.DeleteStream(ctx, events.DefaultStream), "delete the stream")
	// Made again at once, the stream can be refused while the server still removes the
	// old one's store ("error creating store for stream", seen under make test's load).
	testkit.Eventually(t, 10*time.Second, func() (bool, string) {
		if err := s.Open(ctx); err != nil {
			return false, "make it again: " + err.Error()
		}
		return true, ""
	})
	pub := s.Publisher()
	for range 4 {
		testkit.NoErr(t, pub.Publish(ctx, &events.Event{Op: events.OpDelete, Project: "other", Path: "x.md"}), "publish")
	}
	_, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")
	sum := index()
	testkit.Equal(t, [2]any{sum.Published, sum.Known}, [2]any{2, "stream"}, "published, known from")
	if !strings.Contains(sum.StateFile, "of another stream") {
		t.Errorf("state file set aside as %q", sum.StateFile)
	}
}

// TestRunKeepsItsStateFile: a running indexer writes its state when it stops, and the
// next run builds on it.
func TestRunKeepsItsStateFile(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, "a.md", "a")
	s := testkit.Stream(t, testkit.NATS(t))
	file := filepath.Join(t.TempDir(), reconcile.StateFileName)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	x := &reconcile.Indexer{Root: root, Project: "p", Stream: s, Logger: testkit.Logger(), StateFile: file}
	done := make(chan error)
	go func() { done <- x.Run(ctx) }()
	published := func(path string) func() (bool, string) {
		return func() (bool, string) {
			cur, _, err := testkit.Current(ctx, s, "p")
			return err == nil && cur[path].Op == events.OpUpsert, path + " not published"
		}
	}
	testkit.Eventually(t, 10*time.Second, published("a.md"))
	testkit.WriteFile(t, root, "b.md", "b")
	testkit.Eventually(t, 10*time.Second, published("b.md"))
	cancel()
	testkit.NoErr(t, <-done, "run")
	st, err := reconcile.ReadStateFile(file)
	testkit.NoErr(t, err, "read the state file")
	if _, ok := st.Docs["b.md"]; !ok {
		t.Errorf("the state file lacks b.md: %v", st.Docs)
	}
	y := &reconcile.Indexer{Root: root, Project: "p", Stream: s, Logger: testkit.Logger(), StateFile: file}
	sum, err := y.Reconcile(testkit.Context(t))
	testkit.NoErr(t, err, "reconcile")
	testkit.Equal(t, [2]any{sum.Published, sum.Known}, [2]any{0, "state file"}, "published, known from")
}

// stateIndexer returns a function that runs an indexer of root with state file file on
// stream s, and returns its summary.
func stateIndexer(t *testing.T, ctx context.Context, root string, s *events.Stream, file string) func() reconcile.Summary {
	return func() reconcile.Summary {
		t.Helper()
		x := &reconcile.Indexer{Root: root, Project: "p", Stream: s, Logger: testkit.Logger(), StateFile: file}
		sum, err := x.Reconcile(ctx)
		testkit.NoErr(t, err, "reconcile")
		return sum
	}
}
