package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/collector"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/events"
)

// run asks Bleve for the best n hits, by score and then path; byPath has Bleve order the
// ties itself (and is needed to continue after a cursor). exact(limit) reports whether
// the first limit+1 hits are those an ordering by path would give.
func (v view) run(ctx context.Context, q bq.Query, n int, after *cursor, relaxed, byPath bool) (Result, func(int) bool, error) {
	v.counts.bleveRuns.Add(1)
	if v.part != nil {
		return v.runPart(ctx, q, n, after, relaxed, byPath)
	}
	req := bleve.NewSearchRequestOptions(q, n, 0, false)
	// BM25 with the mean length of each field (Index.BM25).
	if docs, err := v.idx.DocCount(); err == nil {
		if st := v.Index.BM25(docs); st != nil {
			req.PreSearchData = map[string]any{bsearch.BM25PreSearchDataKey: st}
		}
	}
	if byPath {
		req.SortBy([]string{"-_score", "_id"})
	}
	if after != nil {
		// Bleve compares the score of a score-sorted SearchAfter as a number parsed
		// from the string, and the id as it is.
		req.SetSearchAfter([]string{after.Score, after.Path})
	}
	sr, err := v.idx.SearchInContext(ctx, req)
	if errors.Is(err, context.DeadlineExceeded) || err == nil && ctx.Err() != nil {
		return Result{}, nil, errTooBroad()
	}
	if err != nil {
		return Result{}, nil, fmt.Errorf("search: %w", err)
	}
	res := Result{Total: sr.Total, Relaxed: relaxed}
	for _, h := range sr.Hits {
		if res.Hits, err = appendHit(res.Hits, h.ID, h.Score); err != nil {
			return Result{}, nil, err
		}
	}
	return res.ranked(n)
}

// runPart is run for one partition of a search of several: Bleve's own collector, as its
// search runs it, over a reader that scores by the whole project's statistics (statsReader),
// which Bleve's search cannot be given.
func (v view) runPart(ctx context.Context, q bq.Query, n int, after *cursor, relaxed, byPath bool) (Result, func(int) bool, error) {
	r, ctx, err := v.reader(ctx)
	if err != nil {
		return Result{}, nil, err
	}
	defer r.Close()
	order := bsearch.SortOrder{&bsearch.SortScore{Desc: true}}
	if byPath {
		order = bsearch.ParseSortOrderStrings([]string{"-_score", "_id"})
	}
	var coll *collector.TopNCollector
	if after != nil {
		coll = collector.NewTopNCollectorAfter(n, order, []string{after.Score, after.Path})
	} else {
		coll = collector.NewTopNCollector(n, 0, order)
	}
	s, err := q.Searcher(ctx, r, v.idx.Mapping(), bsearch.SearcherOptions{})
	if err != nil {
		return Result{}, nil, fmt.Errorf("search: %w", err)
	}
	defer s.Close()
	err = coll.Collect(ctx, s, r)
	if ctx.Err() != nil {
		return Result{}, nil, errTooBroad()
	}
	if err != nil {
		return Result{}, nil, fmt.Errorf("search: %w", err)
	}
	res := Result{Total: coll.Total(), Relaxed: relaxed}
	for _, h := range coll.Results() {
		if res.Hits, err = appendHit(res.Hits, h.ID, h.Score); err != nil {
			return Result{}, nil, err
		}
	}
	return res.ranked(n)
}

func appendHit(hits []Hit, id string, score float64) ([]Hit, error) {
	k, err := events.ParseDocKey(id)
	if err != nil {
		return hits, fmt.Errorf("search: %w", err)
	}
	return append(hits, Hit{Path: k.Path, Session: k.Session, Score: score}), nil
}

// collect finds the best documents of a word's terms, or of a sentence's (groups), for a
// page of limit hits, as run does, without Bleve's collector: that one takes a match,
// scored and pooled, of every document, to keep the best few; here a document that does
// not make the best costs a comparison, and most of those that cannot are skipped
// (termsSearcher.top). When the documents kept tie at the page's end beyond the slack
// kept for ties, every document of that score or more is collected again, so that the
// page's end is ordered by path among all of them.
func (v view) collect(ctx context.Context, q *termsQuery, groups *wordGroups, limit int, relaxed bool) (Result, func(int) bool, error) {
	r, ctx, err := v.reader(ctx)
	if err != nil {
		return Result{}, nil, err
	}
	defer r.Close()
	n := limit + 1 + tieSlack
	res, err := v.collectAbove(ctx, r, q, groups, n, math.Inf(-1), relaxed)
	if err != nil {
		return Result{}, nil, err
	}
	res, exact, err := res.ranked(n)
	if err != nil || exact(limit) || groups != nil && groups.all {
		return res, exact, err
	}
	// Ties at the page's end run past the documents kept: collect every document that
	// scores as much as hit limit or more (a score above the next lower number).
	floor := math.Nextafter(res.Hits[limit].Score, math.Inf(-1))
	if res, err = v.collectAbove(ctx, r, q, groups, math.MaxInt, floor, relaxed); err != nil {
		return Result{}, nil, err
	}
	res, _, err = res.ranked(len(res.Hits))
	return res, func(l int) bool { return l <= limit }, err
}

// collectAbove collects the best n documents of q that score above floor, in any order.
func (v view) collectAbove(ctx context.Context, r bindex.IndexReader, q *termsQuery, groups *wordGroups, n int, floor float64, relaxed bool) (Result, error) {
	s, err := q.Searcher(ctx, r, v.idx.Mapping(), bsearch.SearcherOptions{})
	if err != nil {
		return Result{}, fmt.Errorf("search: %w", err)
	}
	defer s.Close()
	ts, ok := s.(*termsSearcher)
	if !ok {
		return Result{}, fmt.Errorf("search: the index reader is not scorch's (%T)", r)
	}
	if groups != nil {
		groups.sortGroups(ts.scores)
		ts.groups = groups
		ts.SetQueryNorm(groups.norm(ts.scores))
	}
	stop := func() error { return ctx.Err() }
	var best []scoredDoc
	var total uint64
	if groups != nil && groups.all {
		best, total, err = ts.topAll(n, stop)
	} else {
		best, total, err = ts.topAbove(n, floor, stop)
	}
	if ctx.Err() != nil {
		return Result{}, errTooBroad()
	}
	if err != nil {
		return Result{}, fmt.Errorf("search: %w", err)
	}
	res := Result{Total: total, Relaxed: relaxed}
	id := make(bindex.IndexInternalID, 8)
	for _, d := range best {
		binary.BigEndian.PutUint64(id, d.doc)
		ext, err := r.ExternalID(id)
		if err != nil {
			return Result{}, fmt.Errorf("search: %w", err)
		}
		if res.Hits, err = appendHit(res.Hits, ext, d.score); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}
