package projection

import (
	"log/slog"
	"runtime"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/events"
)

// TestCatalogReaderKeepsContentOrphanedBefore: content that lost its last reference, was
// referenced again, then loses it again, stays readable to a reader of the state before
// that batch, as any content does until the next batch.
func TestCatalogReaderKeepsContentOrphanedBefore(t *testing.T) {
	c := &Catalog{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
	noErr(t, c.Open(), "open")
	defer c.Close()
	put := upserts()
	noErr(t, c.Apply(put("a.md", "shared")), "apply")
	noErr(t, c.Apply(put("a.md", "other")), "apply")                                                        // "shared" loses its reference
	noErr(t, c.Apply(put("b.md", "shared")), "apply")                                                       // and is referenced again
	drop := events.Batch{Events: []events.Event{{Op: events.OpDelete, Project: "p", Path: "b.md", Seq: 4}}} // after the three upserts
	applied := make(chan error, 1)
	err := c.Read(func(s *Snapshot) error {
		d, ok := s.Document("b.md")
		if !ok {
			t.Fatal("b.md is not in the catalog")
		}
		go func() { applied <- c.Apply(drop) }()
		// The writer waits for this reader once its batch is committed.
		for c.mu.TryRLock() {
			c.mu.RUnlock()
			runtime.Gosched()
		}
		_, err := s.Content(d)
		return err
	})
	noErr(t, <-applied, "apply the delete")
	noErr(t, err, "read b.md's content while its delete is applied")
}

func noErr(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestCatalogOrphansOutliveARestart: content a batch left unreferenced is deleted by the
// next batch, even when the process stopped in between.
func TestCatalogOrphansOutliveARestart(t *testing.T) {
	dir := t.TempDir()
	c := &Catalog{Dir: dir, Logger: slog.New(slog.DiscardHandler)}
	noErr(t, c.Open(), "open")
	put := upserts()
	noErr(t, c.Apply(put("a.md", "first")), "apply")
	noErr(t, c.Apply(put("a.md", "second")), "apply") // "first" is an orphan now
	noErr(t, c.Close(), "close")
	c = &Catalog{Dir: dir, Logger: slog.New(slog.DiscardHandler)}
	noErr(t, c.Open(), "reopen")
	defer c.Close()
	stored := func() int {
		n := 0
		_ = c.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bucketContent).Stats().KeyN; return nil })
		return n
	}
	if n := stored(); n != 2 {
		t.Fatalf("%d bodies stored after the reopen, want 2 (one an orphan)", n)
	}
	noErr(t, c.Apply(put("b.md", "third")), "apply")
	if n := stored(); n != 2 {
		t.Fatalf("%d bodies stored after the next batch, want 2: the orphan deleted", n)
	}
	if live := bodyNow(c).live; live != int64(len(appendContent(nil, []byte("second")))+len(appendContent(nil, []byte("third")))) {
		t.Fatalf("%d live bytes in the body file, want those of the two bodies referenced", live)
	}
}

// upserts returns a function making a batch of one upsert of path with content, at the
// next sequence each time.
func upserts() func(path, content string) events.Batch {
	seq := uint64(0)
	return func(path, content string) events.Batch {
		seq++
		return events.Batch{Events: []events.Event{{Op: events.OpUpsert, Project: "p", Path: path,
			Size: int64(len(content)), Mtime: time.Unix(1, 0), Hash: events.HashContent([]byte(content)),
			Status: events.StatusOK, Content: []byte(content), Seq: seq}}}
	}
}
