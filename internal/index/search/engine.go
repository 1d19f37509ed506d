// Package search is the search engine of the full-text index: it plans a parsed query
// (querylang) into queries over the index's fields (schema), collects and scores the best
// documents — a word's postings read directly, MaxScore and block-max skipping what cannot
// enter a page, a heap of the best — ranks the best again by the nearness of their words,
// pages them with cursors, and corrects words no document holds. It reads the index
// through a small interface (Index), which the full-text projection (package index)
// provides, and knows nothing of events or of how the index is built.
package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bsearch "github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/index/querylang"
)

// Index is the full-text index a search reads (index.Index): the open Bleve index, with
// the mapping and analyzers it was built with, and the statistics BM25 weighs its fields
// by.
type Index interface {
	// Read calls fn with the open Bleve index, which is not closed or reset before fn
	// returns, and returns what fn returns; it returns ErrNotOpen, without calling fn,
	// when the index is not open.
	Read(fn func(bleve.Index) error) error
	// BM25 returns the statistics BM25 scores docs documents by — the mean length of each
	// field — or nil to leave them to Bleve.
	BM25(docs uint64) *bsearch.BM25Stats
}

// Engine searches one full-text index. The zero value of its options is how a server
// searches; the others are slower ways that tests hold the faster ones to.
type Engine struct {
	Index Index
	// NearWindow is how many of the best documents by their words alone are ranked again
	// by the nearness of their words (rerank.go); 0 means defaultNearWindow.
	NearWindow int
	// NearInOneSearch ranks a query with neighbouring words in one search of the whole
	// query rather than in two steps (rerank.go).
	NearInOneSearch bool
	// BleveCollector collects every search with Bleve's collector rather than directly
	// from the postings (collect.go).
	BleveCollector bool

	saturations saturations // the BM25 length tables searches share
	counts      counts
}

// counts are what an Engine's searches did, for tests: how many collections went through
// Bleve's collector, and how many windows of postings chunks block-max passed over.
type counts struct {
	bleveRuns    atomic.Int64
	chunksPassed atomic.Int64
}

// view is an Engine reading the open index, for one search.
type view struct {
	*Engine
	idx bleve.Index
	// part, when set, makes the search one partition's of a search of several (stats.go).
	part *part
}

func (e *Engine) nearWindow() int { return cmp.Or(e.NearWindow, defaultNearWindow) }

// Search runs a query and returns one page of hits, best first, ties by path. When no
// document holds every word, the words no document holds are taken for typing errors:
// the query is searched again with the closest words the index holds, if that finds more
// (Result.Corrections).
func (e *Engine) Search(ctx context.Context, r Request) (Result, error) {
	return searchWith(ctx, r, e.searchPage, func(_ context.Context, q querylang.Query) (querylang.Query, []Correction) {
		var fixed querylang.Query
		var subs []Correction
		_ = e.Index.Read(func(idx bleve.Index) error {
			fixed, subs = view{Engine: e, idx: idx}.correct(q)
			return nil
		})
		return fixed, subs
	})
}

// searchWith is Search with its pages run by page, and words corrected by correct.
func searchWith(ctx context.Context, r Request, page func(context.Context, Request) (Result, error),
	correct func(context.Context, querylang.Query) (querylang.Query, []Correction)) (Result, error) {
	res, err := page(ctx, r)
	switch {
	case err == nil && res.Total > 0 && !res.Relaxed:
		return res, nil
	case err != nil && !(errors.Is(err, ErrInvalidCursor) && r.Cursor != ""):
		return res, err
	}
	// Nothing, or only some of the words, found (or a cursor of a corrected search):
	// words the index does not hold may be typing errors.
	fixed, subs := correct(ctx, r.Query)
	if len(subs) == 0 {
		return res, err
	}
	fr := r
	fr.Query = fixed
	fres, ferr := page(ctx, fr)
	if ferr != nil || fres.Total == 0 || err == nil && res.Total > 0 && fres.Relaxed {
		return res, err
	}
	fres.Corrections = subs
	return fres, nil
}

// Stem returns the stemmed form of a folded word, as searches expand it; "" when the index
// is not open.
func (e *Engine) Stem(w string) string {
	var s string
	_ = e.Index.Read(func(idx bleve.Index) error {
		s = view{Engine: e, idx: idx}.stem(w)
		return nil
	})
	return s
}

// reader opens a reader of the index's current snapshot, with the context Bleve's search
// gives its searchers over it: the index's scoring model and the field lengths it ranks
// by (see run).
func (v view) reader(ctx context.Context) (bindex.IndexReader, context.Context, error) {
	adv, err := v.idx.Advanced()
	if err != nil {
		return nil, ctx, fmt.Errorf("search: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, ctx, fmt.Errorf("search: %w", err)
	}
	docs, err := r.DocCount()
	if err != nil {
		_ = r.Close()
		return nil, ctx, fmt.Errorf("search: %w", err)
	}
	ctx = context.WithValue(ctx, bsearch.GetScoringModelCallbackKey, bsearch.GetScoringModelCallbackFn(func() string { return bindex.BM25Scoring }))
	if v.part != nil {
		if snap, ok := r.(*scorch.IndexSnapshot); ok {
			r = &statsReader{IndexSnapshot: snap, p: v.part}
		}
		if v.part.st != nil && v.part.st.BM25 != nil {
			return r, context.WithValue(ctx, bsearch.BM25StatsKey, v.part.st.BM25), nil
		}
	}
	if st := v.Index.BM25(docs); st != nil {
		ctx = context.WithValue(ctx, bsearch.BM25StatsKey, st)
	}
	return r, ctx, nil
}
