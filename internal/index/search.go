package index

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"

	"github.com/guide/guide/internal/index/search"
)

// Search runs a query over the index and returns one page of hits (search.Engine.Search).
// With Fanout set, the search is of every partition of the project (search.Fanout).
func (x *Index) Search(ctx context.Context, r search.Request) (search.Result, error) {
	if x.Fanout != nil {
		return x.Fanout.Search(ctx, r)
	}
	return x.searcher().Search(ctx, r)
}

// Stem returns the stemmed form of a folded word, as searches expand it.
func (x *Index) Stem(w string) string { return x.searcher().Stem(w) }

// searcher is the index's search engine, made on first use: its BM25 length tables are
// shared by every search of the index.
func (x *Index) searcher() *search.Engine {
	x.searchOnce.Do(func() { x.search = &search.Engine{Index: x} })
	return x.search
}

// Read calls fn with the open Bleve index, under the read lock that holds off Reset and
// Close until fn returns (search.Index); search.ErrNotOpen when the index is not open.
func (x *Index) Read(fn func(bleve.Index) error) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.idx == nil {
		return search.ErrNotOpen
	}
	if err := x.broken.Load(); err != nil {
		return fmt.Errorf("%w: the index is damaged and being rebuilt from the stream (%v)", search.ErrNotOpen, *err)
	}
	return x.guarded(x.idx, fn)
}

// BM25 returns the statistics BM25 scores docs documents of the index by: the mean length
// of each field over the documents applied (see lengths).
func (x *Index) BM25(docs uint64) *bsearch.BM25Stats { return x.lengths.Load().bm25Stats(docs) }

var _ search.Index = (*Index)(nil)

// Part answers one step of a search over several partitions, of which this index is one
// (search.Engine.Part).
func (x *Index) Part(ctx context.Context, req search.PartRequest) (search.PartReply, error) {
	before := x.seq.Load()
	rep, err := x.searcher().Part(ctx, req)
	if after := x.seq.Load(); after == before {
		// The index applied nothing meanwhile (the sequence is stored once a batch is in):
		// the step read the index as it stood at that sequence.
		rep.Seq = after
	}
	return rep, err
}
