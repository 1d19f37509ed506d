package projection_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// TestCloseRightAfterOpen: Open starts a garbage collection of unreferenced content in the
// background; a Close that comes before it ends must wait for it, not pull the file from
// under it (a query process stopped right after it started crashed on exit).
func TestCloseRightAfterOpen(t *testing.T) {
	dir := t.TempDir()
	c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, c.Open(), "open")
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
	var b events.Batch
	for i := range 2000 {
		body := []byte(fmt.Sprintf("# Doc %d\n\nSome words.\n", i))
		b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("d/%d.md", i),
			Size: int64(len(body)), Mtime: time.Unix(0, 0), Hash: events.HashContent(body), Status: events.StatusOK,
			Content: body, Seq: uint64(i + 1)})
	}
	testkit.NoErr(t, c.Apply(b), "apply")
	testkit.NoErr(t, c.Close(), "close")
	for range 20 {
		c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
		testkit.NoErr(t, c.Open(), "reopen")
		testkit.NoErr(t, c.Close(), "close right after open")
	}
}
