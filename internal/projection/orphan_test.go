package projection

import (
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
)

// TestCatalogReaderKeepsContentOrphanedBefore: content that lost its last reference, was
// referenced again, then loses it again, stays readable to a reader of the state before
// that batch, as any content does until the next batch.
func TestCatalogReaderKeepsContentOrphanedBefore(t *testing.T) {
	c := &Catalog{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
	noErr(t, c.Open(), "open")
	defer c.Close()
	seq := uint64(0)
	put := func(path, content string) events.Batch {
		seq++
		return events.Batch{Events: []events.Event{{Op: events.OpUpsert, Project: "p", Path: path,
			Size: int64(len(content)), Mtime: time.Unix(1, 0), Hash: events.HashContent([]byte(content)),
			Status: events.StatusOK, Content: []byte(content), Seq: seq}}}
	}
	noErr(t, c.Apply(put("a.md", "shared")), "apply")
	noErr(t, c.Apply(put("a.md", "other")), "apply")  // "shared" loses its reference
	noErr(t, c.Apply(put("b.md", "shared")), "apply") // and is referenced again
	seq++
	drop := events.Batch{Events: []events.Event{{Op: events.OpDelete, Project: "p", Path: "b.md", Seq: seq}}}
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
