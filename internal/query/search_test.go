package query_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// stalledIndex is a search index whose searches take as long as it takes the catalog to
// apply a batch, and give up after a while: a slow search.
type stalledIndex struct {
	apply func() error
}

func (x stalledIndex) Search(ctx context.Context, _ index.Request) (index.Result, error) {
	done := make(chan error, 1)
	go func() { done <- x.apply() }()
	select {
	case err := <-done:
		if err != nil {
			return index.Result{}, err
		}
		return index.Result{Hits: []index.Hit{{Path: "Characters/Elara.md"}}, Total: 1}, nil
	case <-time.After(20 * time.Second):
		return index.Result{}, errors.New("the catalog could not apply a batch while the index was searched")
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
