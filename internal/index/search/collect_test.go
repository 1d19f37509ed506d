package search_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/search"
)

// TestCollectRanksAsBleve holds the direct collection of a one-word search to Bleve's
// collector: every page of every word's results is the same, ties included.
func TestCollectRanksAsBleve(t *testing.T) {
	t.Parallel()
	x, vocab := randomIndex(t, 31)
	direct, viaBleve := &search.Engine{Index: x}, &search.Engine{Index: x, BleveCollector: true}
	for _, w := range vocab {
		q := parse(t, w)
		for _, limit := range []int{1, 3, 20} {
			got, want := allPages(t, direct, q, limit), allPages(t, viaBleve, q, limit)
			if len(got) != len(want) {
				t.Fatalf("%s, limit %d: %d pages direct, %d through Bleve", w, limit, len(got), len(want))
			}
			for i := range got {
				if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
					t.Fatalf("%s, limit %d, page %d:\ndirect  %+v\nthrough Bleve %+v", w, limit, i, got[i], want[i])
				}
			}
		}
	}
}

// TestTiesPastThePageCollectedDirectly: when more documents tie at the end of a page than
// the slack kept for ties, the page is still collected directly — every document of that
// score collected again and ordered by path — not by Bleve's collector, which loads the
// identifier of every match; every page is the one Bleve gives.
func TestTiesPastThePageCollectedDirectly(t *testing.T) {
	t.Parallel()
	x := emptyIndex(t, "ties", time.Hour)
	var b events.Batch
	add := func(p, text string) {
		b.Events = append(b.Events, upsert("ties", p, text, uint64(len(b.Events)+1)))
	}
	for i := range 90 { // the same name and text: the same score, in an order unlike the paths'
		add(fmt.Sprintf("d%02d/harbour.md", (i*37)%90), "a harbour here")
	}
	for i := range 200 {
		add(fmt.Sprintf("e/%03d.md", i), "the harbour and the long road past the harbour walls, the quay and more")
	}
	noErr(t, x.Apply(b), "apply")
	x.Flush()
	q := parse(t, "harbour")
	direct, viaBleve := &search.Engine{Index: x}, &search.Engine{Index: x, BleveCollector: true}
	for _, limit := range []int{3, 20, 50} {
		before := direct.BleveRuns()
		res, err := direct.Search(context.Background(), search.Request{Query: q, Limit: limit})
		noErr(t, err, "search")
		if n := direct.BleveRuns() - before; n != 0 {
			t.Errorf("limit %d: the first page ran %d searches through Bleve's collector", limit, n)
		}
		if len(res.Hits) != limit || res.Hits[0].Path != "d00/harbour.md" {
			t.Fatalf("limit %d: %d hits, first %+v", limit, len(res.Hits), res.Hits[0])
		}
		if got, want := allPages(t, direct, q, limit), allPages(t, viaBleve, q, limit); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("limit %d:\ndirect        %+v\nthrough Bleve %+v", limit, got, want)
		}
	}
}
