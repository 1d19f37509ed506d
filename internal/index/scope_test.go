package index_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/testkit"
)

// TestSessionDocumentsOnlyInTheirSession: a session's document is found by a search whose
// scope names that session, and by no other: not without a scope, not by another session,
// not by a folder's search; once it is removed, by none; with no session document held, a
// search of the whole tree finds every tree document.
func TestSessionDocumentsOnlyInTheirSession(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	f := &feeder{x: x}
	f.batch(t, map[string]*string{"tree.md": str("lantern in the tree"), "a/deep.md": str("a lantern below")})
	find := func(sc *search.Scope) []string {
		t.Helper()
		q, _ := querylang.Parse("lantern")
		res, err := x.Search(context.Background(), search.Request{Query: q, Scope: sc, Limit: search.MaxLimit})
		testkit.NoErr(t, err, "search")
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.Session+":"+h.Path)
		}
		slices.Sort(out)
		return out
	}
	tree := []string{":a/deep.md", ":tree.md"}
	testkit.Equal(t, find(nil), tree, "no session document held, no scope")
	testkit.Equal(t, find(&search.Scope{Session: "s1"}), tree, "no session document held, a session's scope")
	session := func(op events.Op, seq uint64) {
		e := events.Event{Op: op, Session: "s1", Path: "notes.md", Seq: seq, Project: "test"}
		if op == events.OpUpsert {
			c := []byte("the session's lantern")
			e.Status, e.Content, e.Hash, e.Size, e.Mtime = events.StatusOK, c, events.HashContent(c), int64(len(c)), time.Now()
		}
		testkit.NoErr(t, x.Apply(events.Batch{Events: []events.Event{e}}), "apply")
	}
	session(events.OpUpsert, f.seq+1)
	testkit.Equal(t, find(nil), tree, "no scope")
	testkit.Equal(t, find(&search.Scope{Session: "s2"}), tree, "another session")
	testkit.Equal(t, find(&search.Scope{Session: "s1"}), []string{":a/deep.md", ":tree.md", "s1:notes.md"}, "its session")
	testkit.Equal(t, find(&search.Scope{Session: "s1", Subtree: "a"}), []string{":a/deep.md", "s1:notes.md"}, "its session, focused on a")
	testkit.Equal(t, find(&search.Scope{Subtree: "a"}), []string{":a/deep.md"}, "a folder")
	session(events.OpDelete, f.seq+2)
	testkit.Equal(t, find(&search.Scope{Session: "s1"}), tree, "its session, removed")
	testkit.Equal(t, find(nil), tree, "no scope, removed")
}
