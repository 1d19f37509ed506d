package reconcile_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/reconcile"
	"github.com/guide/guide/internal/testkit"
)

func newIndexer(t *testing.T, root string) (*reconcile.Indexer, *events.Stream) {
	t.Helper()
	s := testkit.Stream(t, testkit.NATS(t))
	return &reconcile.Indexer{Root: root, Project: "p", Stream: s, Logger: testkit.Logger()}, s
}

func TestReconcile(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	x, s := newIndexer(t, root)
	ctx := testkit.Context(t)

	t.Run("FirstScanPublishesEverything", func(t *testing.T) {
		sum, err := x.Reconcile(ctx)
		testkit.NoErr(t, err, "reconcile")
		n := len(testkit.Disk(t, root))
		testkit.Equal(t, [3]int{sum.Documents, sum.Published, sum.Unchanged}, [3]int{n, n, 0}, "documents, published, unchanged")
		testkit.Equal(t, sum.StreamSeq, uint64(n+2), "stream sequence (documents and two scan events)")
	})
	t.Run("NothingChangedPublishesNothing", func(t *testing.T) {
		info, _ := s.Info(ctx)
		sum, err := x.Reconcile(ctx)
		testkit.NoErr(t, err, "reconcile")
		testkit.Equal(t, [2]int{sum.Published, sum.Deleted}, [2]int{0, 0}, "published, deleted")
		after, _ := s.Info(ctx)
		testkit.Equal(t, after.State.LastSeq, info.State.LastSeq, "stream head")
		testkit.Equal(t, sum.ScanID, "", "no scan events when nothing changed")
	})
	t.Run("TouchWithoutChangePublishesNothing", func(t *testing.T) {
		p := filepath.Join(root, "README.md")
		b, _ := os.ReadFile(p)
		testkit.NoErr(t, os.WriteFile(p, b, 0o644), "rewrite same bytes")
		sum, err := x.Reconcile(ctx)
		testkit.NoErr(t, err, "reconcile")
		testkit.Equal(t, sum.Published, 0, "published")
	})
	t.Run("ChangesAndDeletes", func(t *testing.T) {
		testkit.WriteFile(t, root, "README.md", "changed")
		testkit.NoErr(t, os.RemoveAll(filepath.Join(root, "Characters")), "remove folder")
		sum, err := x.Reconcile(ctx)
		testkit.NoErr(t, err, "reconcile")
		testkit.Equal(t, [2]int{sum.Published, sum.Deleted}, [2]int{1, 2}, "published, deleted")
		cur, _, _ := testkit.Current(ctx, s, "p")
		testkit.Equal(t, cur["Characters/Elara.md"].Op, events.OpDelete, "deleted document's last event")
		scan, err := s.LatestScan(ctx, "p")
		testkit.NoErr(t, err, "latest scan")
		testkit.Equal(t, [3]any{scan.Op, scan.Scan.Published, scan.Scan.Deleted}, [3]any{events.OpScanEnd, 1, 2}, "scan end counts")
	})
}

func TestStatuses(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	testkit.WriteFile(t, outside, "secret.txt", "TOP SECRET")
	testkit.WriteFile(t, root, "text.md", "fine")
	testkit.WriteFile(t, root, "bin.dat", "a\x00b")
	testkit.WriteFile(t, root, "latin1.txt", "caf\xe9")
	testkit.WriteFile(t, root, "big.md", strings.Repeat("x", 2048))
	testkit.WriteFile(t, root, ".git/config", "[core]")
	testkit.WriteFile(t, root, "sub/inside.md", "inside")
	testkit.NoErr(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "escape.txt")), "symlink out")
	testkit.NoErr(t, os.Symlink(outside, filepath.Join(root, "escape-dir")), "symlink dir out")
	testkit.NoErr(t, os.Symlink("sub/inside.md", filepath.Join(root, "alias.md")), "symlink in")
	testkit.NoErr(t, os.Symlink("missing.md", filepath.Join(root, "dangling.md")), "dangling")
	testkit.NoErr(t, os.Symlink(filepath.Join(root, "sub/inside.md"), filepath.Join(root, "abs-alias.md")), "absolute symlink in")
	testkit.NoErr(t, os.Symlink("sub", filepath.Join(root, "sub-alias")), "symlink to a folder in")

	x, s := newIndexer(t, root)
	x.MaxSize = 1024
	ctx := testkit.Context(t)
	_, err := x.Reconcile(ctx)
	testkit.NoErr(t, err, "reconcile")
	cur, _, err := testkit.Current(ctx, s, "p")
	testkit.NoErr(t, err, "current")
	got := map[string]events.Status{}
	for p, st := range cur {
		got[p] = st.Status
	}
	testkit.Equal(t, got, map[string]events.Status{
		"text.md":       events.StatusOK,
		"bin.dat":       events.StatusBinary,
		"latin1.txt":    events.StatusInvalidUTF8,
		"big.md":        events.StatusTooLarge,
		"sub/inside.md": events.StatusOK,
		"alias.md":      events.StatusOK,
		"abs-alias.md":  events.StatusOK,
		"escape.txt":    events.StatusOutsideRoot,
		"dangling.md":   events.StatusUnreadable,
		"escape-dir":    events.StatusOutsideRoot, // listed, so that its absence is explained
	}, "statuses (.git is not indexed)")
	for _, p := range []string{"escape.txt", "bin.dat", "big.md"} {
		e, err := s.Latest(ctx, "p", p)
		testkit.NoErr(t, err, "latest "+p)
		if len(e.Content) != 0 {
			t.Errorf("%s: %d content bytes travelled; want none", p, len(e.Content))
		}
	}
	e, _ := s.Latest(ctx, "p", "alias.md")
	testkit.Equal(t, string(e.Content), "inside", "a link inside the root reads its target")
	e, _ = s.Latest(ctx, "p", "abs-alias.md")
	testkit.Equal(t, string(e.Content), "inside", "an absolute link inside the root reads its target")
}

// TestNamesNotValidUTF8: a file or folder whose name is not valid UTF-8 is not indexed, and
// the scan says so; a path argument that was not valid UTF-8 is an invalid path.
func TestNamesNotValidUTF8(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, "ok.md", "# Fine")
	testkit.WriteFile(t, root, "bad\xff.md", "# Bad name")
	testkit.WriteFile(t, root, "dir\xfe/inner.md", "# Inside a badly named folder")
	testkit.WriteFile(t, root, "lit\ufffd.md", "# A name with U+FFFD")
	p := testkit.NewPipeline(t, nil, root, "")
	sum := p.Reconcile()
	testkit.Equal(t, [2]int{sum.Published, sum.Failed}, [2]int{1, 3}, "published, failed (the badly named)")
	testkit.RequireMatchesDisk(t, p.Client, root)
	for _, path := range []string{"bad\xff.md", "dir\xfe/inner.md", "lit\ufffd.md"} {
		f := testkit.DecodeFailure(t, p.Call("view", map[string]any{"path": path}))
		testkit.Equal(t, f.ErrorType, "invalid_path", "view of "+path)
	}
	// A notification about one publishes nothing either.
	before := lastSeq(t, p)
	testkit.WriteFile(t, root, "bad\xff.md", "# Bad name, changed")
	_, err := p.Indexer.ReconcilePaths(testkit.Context(t), []string{"bad\xff.md", "dir\xfe"})
	testkit.NoErr(t, err, "reconcile paths")
	testkit.Equal(t, lastSeq(t, p), before, "stream head")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	testkit.NoErr(t, err, "listen")
	defer ln.Close()
	return ln.Addr().String()
}

// TestPathTooLongForSubject: a document whose path does not fit in a subject is listed
// under a stand-in path with a status and a reason that gives its real path.
func TestPathTooLongForSubject(t *testing.T) {
	root := t.TempDir()
	seg := strings.Repeat("文", 80) // 240 bytes, 720 once encoded
	long := strings.Repeat(seg+"/", 5) + "notes.md"
	testkit.WriteFile(t, root, long, "# Notes\n\ndeep down")
	testkit.WriteFile(t, root, "short.md", "# Short")
	p := testkit.NewPipeline(t, nil, root, "")
	sum := p.Reconcile()
	testkit.Equal(t, [2]int{sum.Published, sum.Failed}, [2]int{2, 0}, "published, failed")

	standIn := events.StandIn(long)
	var v struct {
		Path, Status, Reason, Message string
	}
	testkit.Decode(t, p.Call("view", map[string]any{"path": standIn}), &v)
	testkit.Equal(t, v.Status, "path_too_long", "status of "+standIn)
	if !strings.Contains(v.Reason, long) {
		t.Fatalf("reason %q does not give the real path", v.Reason)
	}
	var l struct {
		Documents []struct{ Path, Status, Reason string } `json:"documents"`
	}
	testkit.Decode(t, p.Call("view", map[string]any{"path": events.TooLongFolder}), &l)
	testkit.Equal(t, len(l.Documents), 1, "documents listed in "+events.TooLongFolder)

	// Stable: a second scan publishes nothing; gone: its stand-in is deleted.
	testkit.Equal(t, p.Reconcile().Published, 0, "published by a second scan")
	testkit.NoErr(t, os.Remove(filepath.Join(root, long)), "rm")
	sum, err := p.Indexer.ReconcilePaths(testkit.Context(t), []string{long})
	testkit.NoErr(t, err, "reconcile paths")
	testkit.Equal(t, sum.Deleted, 1, "deleted")

	// Its folder moved away: told only of the folder, the indexer deletes it too.
	testkit.WriteFile(t, root, long, "# Notes\n\nback again")
	testkit.Equal(t, p.Reconcile().Published, 1, "published again")
	testkit.NoErr(t, os.Rename(filepath.Join(root, seg), filepath.Join(t.TempDir(), "away")), "mv folder away")
	sum, err = p.Indexer.ReconcilePaths(testkit.Context(t), []string{seg})
	testkit.NoErr(t, err, "reconcile paths")
	testkit.Equal(t, sum.Deleted, 1, "deleted with its folder")
}

func TestPublishFailureStopsReading(t *testing.T) {
	// A server that takes messages of 256 KiB at most.
	ns, err := server.NewServer(&server.Options{JetStream: true, StoreDir: t.TempDir(), DontListen: true, NoSigs: true, NoLog: true, MaxPayload: 256 << 10})
	testkit.NoErr(t, err, "nats server")
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	testkit.NoErr(t, err, "connect")
	t.Cleanup(nc.Close)
	s := &events.Stream{Conn: nc}
	testkit.NoErr(t, s.Open(testkit.Context(t)), "stream")

	root := t.TempDir()
	// First in the walk's order, and larger than the server takes: its publish fails.
	testkit.WriteFile(t, root, "0000-huge.md", strings.Repeat("x", 300<<10))
	const small = 1000
	for i := range small {
		testkit.WriteFile(t, root, fmt.Sprintf("doc%04d.md", i), fmt.Sprintf("# doc %d\n", i))
	}
	// MaxSize lets the huge file's content travel, so that its publish fails.
	x := &reconcile.Indexer{Root: root, Project: "p", Stream: s, Logger: testkit.Logger(), MaxSize: 1 << 20}
	sum, err := x.Reconcile(testkit.Context(t))
	if err == nil {
		t.Fatal("reconcile published a document larger than the server takes")
	}
	t.Logf("read %d files before the failure stopped the reading (%v)", sum.Read, err)
	// The files read after the failure are wasted: the retry compares them again.
	if sum.Read > small/2 {
		t.Fatalf("read %d of %d files after the first publish failed; want the reading to stop", sum.Read, small+1)
	}
}

// TestFirstScanTakesAcksAsItGoes: a first scan records what the stream holds of each file
// as its acks come, not all at its end, where a million files' acks were 200 MB held beside
// what is known of the same files.
func TestFirstScanTakesAcksAsItGoes(t *testing.T) {
	root := t.TempDir()
	for i := range 3000 {
		testkit.WriteFile(t, root, fmt.Sprintf("d%02d/f%04d.md", i/100, i), fmt.Sprintf("# note %d\n", i))
	}
	x, s := newIndexer(t, root)
	s.MaxPending = 64
	var known []int // what was known at each report of the scan's progress
	x.Progress = func(p reconcile.Progress) {
		if !p.Done {
			known = append(known, x.KnownCount())
		}
	}
	sum, err := x.Reconcile(testkit.Context(t))
	testkit.NoErr(t, err, "reconcile")
	testkit.Equal(t, sum.Published, 3000, "published")
	if len(known) == 0 || known[len(known)-1] == 0 {
		t.Fatalf("known during the scan: %v; want the acks taken as they came", known)
	}
	testkit.Equal(t, x.KnownCount(), 3000, "known once the scan ended")
}
