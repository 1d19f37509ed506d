package projection_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// BenchmarkCatalogOpen: how long a query process takes to reopen a catalog of 100k
// documents (about 1 kB each), the part of restart-to-first-answer that grows with the tree.
func BenchmarkCatalogOpen(b *testing.B) {
	dir := b.TempDir()
	c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(b, c.Open(), "open")
	testkit.NoErr(b, c.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
	body := strings.Repeat("Some words of a generated document. ", 28)
	var batch events.Batch
	seq := uint64(0)
	for i := range 100_000 {
		content := []byte(fmt.Sprintf("# Document %d\n\n%s\n", i, body))
		seq++
		batch.Events = append(batch.Events, events.Event{Op: events.OpUpsert, Project: "p",
			Path: fmt.Sprintf("part-%02d/chapter-%03d/doc-%05d.md", i%20, i%500, i), Size: int64(len(content)),
			Mtime: time.Unix(1, 0), Hash: events.HashContent(content), Status: events.StatusOK, Content: content, Seq: seq})
		if len(batch.Events) == 1000 {
			testkit.NoErr(b, c.Apply(batch), "apply")
			batch.Events = batch.Events[:0]
		}
	}
	testkit.NoErr(b, c.Close(), "close")
	for b.Loop() {
		c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
		testkit.NoErr(b, c.Open(), "reopen")
		testkit.NoErr(b, c.Close(), "close")
	}
}
