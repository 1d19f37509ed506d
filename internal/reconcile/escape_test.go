package reconcile_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// secret is the word only the files outside the root hold.
const secret = "zebrafishoutside"

// outside makes a folder outside the root holding the files the root's current/ holds,
// with other bytes.
func outside(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteFile(t, dir, "settings.md", "# Settings\n\n"+secret+" from outside the root")
	testkit.WriteFile(t, dir, "deep/notes.md", "# Notes\n\n"+secret+" deeper outside")
	return dir
}

// requireNoOutsideBytes reads every event the stream holds and fails on any that carries
// the outside files' bytes.
func requireNoOutsideBytes(t *testing.T, p *testkit.Pipeline) {
	t.Helper()
	ctx := testkit.Context(t)
	st, err := p.Stream.JS.Stream(ctx, events.DefaultStream)
	testkit.NoErr(t, err, "stream")
	last := lastSeq(t, p)
	for seq := uint64(1); seq <= last; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		testkit.NoErr(t, err, "get message")
		if strings.Contains(string(m.Data), secret) {
			t.Fatalf("the stream holds bytes from outside the root at %d (%s)", seq, m.Subject)
		}
	}
}

// requireNotServed checks that view and search show nothing of the outside files, and that
// nothing is listed below current/.
func requireNotServed(t *testing.T, p *testkit.Pipeline) {
	t.Helper()
	for _, path := range []string{"current/settings.md", "current/deep/notes.md"} {
		if r := p.Call("view", map[string]any{"path": path}); !r.IsError {
			t.Fatalf("view(%q) answers %s", path, testkit.Text(t, r))
		}
	}
	if text := testkit.Text(t, p.Call("search", map[string]any{"query": secret})); strings.Contains(text, "current/") {
		t.Fatalf("search finds the outside files: %s", text)
	}
}

// TestParentFolderSwappedForLink: a folder replaced by a symbolic link to a place outside
// the root never lets the outside bytes in, and what was below it is deleted.
func TestParentFolderSwappedForLink(t *testing.T) {
	swap := map[string]func(t *testing.T, root, target string){
		"RemovedThenLinked": func(t *testing.T, root, target string) {
			testkit.NoErr(t, os.RemoveAll(filepath.Join(root, "current")), "rm -rf current")
			testkit.NoErr(t, os.Symlink(target, filepath.Join(root, "current")), "ln -s")
		},
		"MovedAwayThenLinked": func(t *testing.T, root, target string) {
			testkit.NoErr(t, os.Rename(filepath.Join(root, "current"), filepath.Join(t.TempDir(), "old")), "mv current away")
			testkit.NoErr(t, os.Symlink(target, filepath.Join(root, "current")), "ln -s")
		},
	}
	for name, swap := range swap {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			testkit.WriteFile(t, root, "current/settings.md", "# Settings\n\ninside the root")
			testkit.WriteFile(t, root, "current/deep/notes.md", "# Notes\n\ninside the root")
			testkit.WriteFile(t, root, "README.md", "# Readme")
			p := testkit.NewPipeline(t, nil, root, "")
			p.Watch()
			testkit.EventuallyMatchesDisk(t, p.Client, root, settle)

			swap(t, root, outside(t))
			testkit.WriteFile(t, root, "marker.md", "after the swap")
			testkit.Eventually(t, settle, func() (bool, string) {
				if r := p.Call("view", map[string]any{"path": "marker.md"}); r.IsError {
					return false, "marker.md not seen yet"
				}
				if r := p.Call("view", map[string]any{"path": "current/settings.md"}); !r.IsError {
					return false, "current/settings.md still served: " + testkit.Text(t, r)
				}
				if r := p.Call("view", map[string]any{"path": "current/deep/notes.md"}); !r.IsError {
					return false, "current/deep/notes.md still served: " + testkit.Text(t, r)
				}
				return true, ""
			})
			requireNotServed(t, p)
			requireNoOutsideBytes(t, p)

			// A full rescan agrees: the link leaves the root, nothing below it is a document.
			p.Reconcile()
			requireNotServed(t, p)
			requireNoOutsideBytes(t, p)
			f := testkit.DecodeFailure(t, p.Call("view", map[string]any{"path": "current"}))
			testkit.Equal(t, f.ErrorType, "invalid_path", "view of the link")
		})
	}
}

// TestRecheckThroughLinkedFolder: the per-path recheck after a notification never reads
// through a parent folder that became a link, whatever paths it is handed.
func TestRecheckThroughLinkedFolder(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, "current/settings.md", "# Settings\n\ninside the root")
	testkit.WriteFile(t, root, "current/deep/notes.md", "# Notes\n\ninside the root")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()

	testkit.NoErr(t, os.RemoveAll(filepath.Join(root, "current")), "rm -rf current")
	testkit.NoErr(t, os.Symlink(outside(t), filepath.Join(root, "current")), "ln -s")
	sum, err := p.Indexer.ReconcilePaths(testkit.Context(t), []string{"current/settings.md", "current/deep/notes.md", "current/deep"})
	testkit.NoErr(t, err, "reconcile paths")
	p.WaitApplied(lastSeq(t, p))
	testkit.Equal(t, sum.Deleted, 2, "documents deleted below the link")
	requireNotServed(t, p)
	requireNoOutsideBytes(t, p)

	// Told only of the folder, it still deletes what was below it.
	testkit.NoErr(t, os.Remove(filepath.Join(root, "current")), "rm link")
	testkit.WriteFile(t, root, "current/again.md", "# Again\n\ninside the root")
	p.Reconcile()
	testkit.NoErr(t, os.RemoveAll(filepath.Join(root, "current")), "rm -rf current")
	testkit.NoErr(t, os.Symlink(outside(t), filepath.Join(root, "current")), "ln -s")
	sum, err = p.Indexer.ReconcilePaths(testkit.Context(t), []string{"current"})
	testkit.NoErr(t, err, "reconcile paths")
	p.WaitApplied(lastSeq(t, p))
	testkit.Equal(t, sum.Deleted, 1, "documents deleted below the link")
	requireNoOutsideBytes(t, p)
	var list json.RawMessage
	testkit.Decode(t, p.Call("view", map[string]any{"path": ""}), &list)
	if strings.Contains(string(list), "again.md") {
		t.Fatalf("current/again.md still listed: %s", list)
	}
}
