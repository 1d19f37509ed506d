package query_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// stalledIndex is a search index whose searches take as long as it takes the catalog to
// apply a batch, and give up after a while: a slow search.
type stalledIndex struct {
	apply func() error
}

func (x stalledIndex) Search(ctx context.Context, _ search.Request) (search.Result, error) {
	done := make(chan error, 1)
	go func() { done <- x.apply() }()
	select {
	case err := <-done:
		if err != nil {
			return search.Result{}, err
		}
		return search.Result{Hits: []search.Hit{{Path: "Characters/Elara.md"}}, Total: 1}, nil
	case <-time.After(20 * time.Second):
		return search.Result{}, errors.New("the catalog could not apply a batch while the index was searched")
	}
}
func (stalledIndex) Stem(w string) string { return w }
func (stalledIndex) Checkpoint() uint64   { return 1 << 40 }
func (stalledIndex) State() index.State   { return index.State{} }

// TestSearchHoldsNoCatalogLockWhileSearching: the catalog's writer, and every reader
// after it, wait for a lock a reader holds; a search holds none while the index works.
func TestSearchHoldsNoCatalogLockWhileSearching(t *testing.T) {
	cat := testkit.Catalog(t, files)
	next := cat.Checkpoint() + 1
	x := stalledIndex{apply: func() error {
		c := []byte("# Elara\n\nA cartographer who maps the sea.")
		return cat.Apply(events.Batch{Events: []events.Event{{Op: events.OpUpsert, Project: "test", Path: "Characters/Elara.md",
			Size: int64(len(c)), Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c),
			Status: events.StatusOK, Content: c, Seq: next}}})
	}}
	res, qerr := query.Search(testkit.Context(t), cat, x, query.SearchArgs{Query: "sea"}, query.Limits{})
	if qerr != nil {
		t.Fatal(qerr)
	}
	if len(res.Hits) != 1 || res.Hits[0].Snippet == "" {
		t.Fatalf("hits %+v; want Elara's, with a snippet from the batch applied during the search", res.Hits)
	}
}

// listedIndex finds every document of the catalog it was given, in that order.
type listedIndex struct{ paths []string }

func (x listedIndex) Search(context.Context, search.Request) (search.Result, error) {
	var r search.Result
	for i, p := range x.paths {
		r.Hits = append(r.Hits, search.Hit{Path: p, Score: float64(len(x.paths) - i)})
	}
	r.Total = uint64(len(r.Hits))
	return r, nil
}
func (listedIndex) Stem(w string) string { return w }
func (listedIndex) Checkpoint() uint64   { return 1 << 40 }
func (listedIndex) State() index.State   { return index.State{} }

// TestSearchPageSizeBound: a page holds as many hits as fit the response size bound,
// counted from their encoding, and the cursor goes on from the first one left out.
func TestSearchPageSizeBound(t *testing.T) {
	docs := map[string]string{}
	var paths []string
	for i := range 30 {
		p := fmt.Sprintf("notes/%02d-tide.md", i)
		// Text that JSON escapes (quotes, control characters) next to the word, so that
		// the snippets' encodings are longer than their text.
		docs[p] = fmt.Sprintf("# Tide %d\n\n%s tide \"tables\" \x01 and <tags> %s", i,
			strings.Repeat("quiet words ", i*3), strings.Repeat("\"q\" ", i))
		paths = append(paths, p)
	}
	cat := testkit.Catalog(t, docs)
	x := listedIndex{paths}
	page := func(bound int) *query.SearchResult {
		res, qerr := query.Search(testkit.Context(t), cat, x, query.SearchArgs{Query: "tide"}, query.Limits{MaxChars: bound})
		if qerr != nil {
			t.Fatal(qerr)
		}
		return res
	}
	all := page(10_000_000)
	if len(all.Hits) != 30 || all.Truncated {
		t.Fatalf("unbounded: %d hits, truncated %v; want 30", len(all.Hits), all.Truncated)
	}
	sizes := make([]int, len(all.Hits))
	for i, h := range all.Hits {
		enc, _ := query.EncodeJSON(h) // as the answer encodes it
		sizes[i] = len(enc)
	}
	for _, keep := range []int{1, 2, 7, 18, 29} {
		used := 200 // the envelope
		for _, n := range sizes[:keep] {
			used += n + 1
		}
		// The smallest bound that holds keep hits, and one byte less.
		for _, bound := range []int{used - 1, used - 2} {
			want := keep
			if bound < used-1 {
				want = keep - 1
			}
			want = max(want, 1) // a page holds at least one hit
			res := page(bound)
			if len(res.Hits) != want || !res.Truncated {
				t.Fatalf("bound %d: %d hits (truncated %v); want %d, truncated", bound, len(res.Hits), res.Truncated, want)
			}
			next, err := x.Search(context.Background(), search.Request{})
			testkit.NoErr(t, err, "search")
			wantCursor := search.Request{Query: mustParse(t, "tide")}.CursorAfter(next.Hits[want-1], false)
			testkit.Equal(t, res.NextCursor, wantCursor, "the cursor after the last hit kept")
		}
	}
}

func mustParse(t *testing.T, q string) querylang.Query {
	t.Helper()
	p, err := querylang.Parse(q)
	testkit.NoErr(t, err, "parse")
	return p
}

// TestSlowSnippetsHoldNoCatalogLock: a search reads its hits' bodies for their snippets
// once the catalog's snapshot has ended: while one read is slow, the catalog's writer
// applies a batch, and a view (which would queue behind a waiting writer) answers.
func TestSlowSnippetsHoldNoCatalogLock(t *testing.T) {
	cat := testkit.Catalog(t, files)
	reading, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	cat.BodyRead = func() {
		if first.CompareAndSwap(false, true) { // the search's first body: slow until released
			close(reading)
			<-release
		}
	}
	searched := make(chan *query.SearchResult, 1)
	go func() {
		res, qerr := query.Search(testkit.Context(t), cat, listedIndex{paths: []string{"Characters/Elara.md"}},
			query.SearchArgs{Query: "elara"}, query.Limits{})
		if qerr != nil {
			t.Error(qerr)
		}
		searched <- res
	}()
	<-reading

	applied := make(chan error, 1)
	go func() {
		c := []byte("# Bram\n\nA smith.")
		applied <- cat.Apply(events.Batch{Events: []events.Event{{Op: events.OpUpsert, Project: "test", Path: "Characters/Bram.md",
			Size: int64(len(c)), Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c),
			Status: events.StatusOK, Content: c, Seq: cat.Checkpoint() + 1}}})
	}()
	select {
	case err := <-applied:
		testkit.NoErr(t, err, "apply")
	case <-time.After(20 * time.Second):
		close(release)
		t.Fatal("the catalog's writer waited for a search's snippets")
	}
	var view string
	testkit.NoErr(t, cat.Read(func(s *projection.Snapshot) error {
		v, qerr := query.View(s, "Characters/Bram.md", 0, query.Limits{})
		if qerr != nil {
			return qerr
		}
		view = fmt.Sprint(v)
		return nil
	}), "view while the search reads")
	if !strings.Contains(view, "A smith.") {
		t.Errorf("view of the document applied meanwhile: %s", view)
	}
	close(release)
	res := <-searched
	if res == nil || len(res.Hits) != 1 || res.Hits[0].Snippet == "" {
		t.Fatalf("the search's hits %+v: want Elara's, with its snippet", res)
	}
}
