package mcpserver_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// TestStatusCountsTheSearchIndex: during a catch-up the catalog runs ahead of the search
// index. Polled as fast as it answers, the status never says caught up or lag 0, /healthz
// never says ready, and search never answers without a partial note, while search misses
// a document view already shows.
func TestStatusCountsTheSearchIndex(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	base := testkit.WaitCaughtUp(t, p.Client).Documents

	const n = 3000
	ctx := testkit.Context(t)
	pub := p.Stream.Publisher()
	for i := range n {
		c := fmt.Appendf(nil, "# Note %d\n\nThe heron waits at the edge of chapter %d.\n", i, i)
		e := &events.Event{Op: events.OpUpsert, Project: p.Project, Path: fmt.Sprintf("notes/%d/n%d.md", i%17, i),
			Size: int64(len(c)), Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c),
			Status: events.StatusOK, Content: c}
		testkit.NoErr(t, pub.Publish(ctx, e), "publish")
	}
	_, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")

	polls, behind, partial := 0, 0, 0
	testkit.Eventually(t, 60*time.Second, func() (bool, string) {
		polls++
		st := testkit.ReadStatus(t, p.Client)
		shown := st.Documents - base // documents view shows; the catalog only grows here
		h := p.Server.Freshness.Health(ctx, 0)
		var res query.SearchResult
		testkit.Decode(t, p.Call("search", map[string]any{"query": "heron", "scope": "all", "limit": 1}), &res)
		found := int(res.Total) // the index only grows too: a later search finds at least as much
		if found < shown {
			behind++
			if st.CaughtUp || st.Lag == 0 || h.Ready {
				t.Fatalf("status says caught_up %v, lag %d, /healthz ready %v while search finds %d of the %d documents view shows",
					st.CaughtUp, st.Lag, h.Ready, found, shown)
			}
		}
		if res.Partial != nil {
			partial++
		} else if found < shown {
			t.Fatalf("search finds %d of the %d documents view shows, and says nothing of it", found, shown)
		}
		return st.CaughtUp && shown == n && found == n && res.Partial == nil,
			fmt.Sprintf("caught_up %v, %d shown, %d found, partial %+v", st.CaughtUp, shown, found, res.Partial)
	})
	t.Logf("%d polls; search behind view in %d, partial in %d", polls, behind, partial)
}
