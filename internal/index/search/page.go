package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"

	"github.com/guide/guide/internal/index/querylang"
)

// rankedWords is how many words (and phrases) a query needs to be ranked as a sentence:
// every document holding some of them matches, those holding more of them first.
const rankedWords = 3

// searchPage runs one page of a search, as it is asked: the words as they are.
func (e *Engine) searchPage(ctx context.Context, r Request) (Result, error) {
	r, key, after, err := pageArgs(r)
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = e.Index.Read(func(idx bleve.Index) error {
		var err error
		res, err = pageOn(ctx, view{Engine: e, idx: idx}, r, key, after)
		return err
	})
	return res, err
}

// pageArgs checks a request of a page, and returns it with its limit, the fingerprint of
// its search, and the cursor it continues after (nil for the first page).
func pageArgs(r Request) (Request, string, *cursor, error) {
	if r.Limit == 0 {
		r.Limit = DefaultLimit
	}
	if r.Limit < 1 || r.Limit > MaxLimit {
		return r, "", nil, fmt.Errorf("%w: limit %d is outside 1..%d", ErrInvalidRequest, r.Limit, MaxLimit)
	}
	if len(r.Query.Words) == 0 && len(r.Query.Phrases) == 0 {
		return r, "", nil, querylang.ErrNothingToFind
	}
	key := fingerprint(r.Query, r.Folder+scopeKey(r.Scope))
	if r.Cursor == "" {
		return r, key, nil, nil
	}
	c, err := decodeCursor(r.Cursor, key)
	if err != nil {
		return r, "", nil, err
	}
	return r, key, &c, nil
}

// pager runs the pages of a search: over one index (view), or over the partitions of a
// project (fanPager).
type pager interface {
	// search runs one page; partial matches documents holding any of the words.
	search(ctx context.Context, r Request, after *cursor, partial bool) (Result, error)
	// holdsAll reports whether some document in the request's scope holds every word.
	holdsAll(ctx context.Context, r Request) (bool, error)
	// budget bounds the time of a page.
	budget() time.Duration
}

func (v view) budget() time.Duration { return Timeout }

// pageOn is searchPage on p: the page after the cursor after (nil for the first) of the
// search whose fingerprint is key.
func pageOn(ctx context.Context, v pager, r Request, key string, after *cursor) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, v.budget())
	defer cancel()
	n := len(r.Query.Words) + len(r.Query.Phrases)
	sentence := n >= rankedWords
	relaxed := after != nil && after.Relaxed
	res, err := v.search(ctx, r, after, sentence || relaxed)
	switch {
	case err != nil:
	case sentence && after != nil:
		res.Relaxed = after.Relaxed
	case sentence:
		// Ranked as a sentence, every document holding some of the words matches: say
		// whether any holds them all.
		var all bool
		all, err = v.holdsAll(ctx, r)
		res.Relaxed = !all && res.Total > 0
	case res.Total == 0 && after == nil && n > 1:
		// No document holds every word: say so, and show those holding some.
		res, err = v.search(ctx, r, nil, true)
	}
	if err != nil {
		return res, err
	}
	if res.more {
		last := res.Hits[len(res.Hits)-1]
		res.Next = cursor{Key: key, Score: strconv.FormatFloat(last.Score, 'g', -1, 64),
			Path: last.key().ID(), Relaxed: res.Relaxed, Past: last.past}.encode()
	}
	return res, nil
}

// tieSlack is how many hits beyond a page a first page asks for, so that ties of score
// at its end can be ordered by path without asking Bleve to sort by path.
const tieSlack = 16

// holdsAll reports whether some document in the request's scope holds every word. It
// asks for the first such document and no more: counting them all, with the ranking's
// phrases of neighbouring words beside, took as long as the search itself.
func (v view) holdsAll(ctx context.Context, r Request) (bool, error) {
	q := v.build(querylang.Query{Words: r.Query.Words, Phrases: r.Query.Phrases}, r.Folder, r.Scope, false)
	reader, ctx, err := v.reader(ctx)
	if err != nil {
		return false, err
	}
	defer reader.Close()
	s, err := q.Searcher(ctx, reader, v.idx.Mapping(), bsearch.SearcherOptions{Score: "none"})
	if err != nil {
		return false, fmt.Errorf("search: %w", err)
	}
	defer s.Close()
	m, err := s.Next(&bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0)})
	if err != nil || ctx.Err() != nil {
		return false, errTooBroad()
	}
	return m != nil, nil
}

// search runs one page; partial matches documents holding any of the words, ranked by
// how many they hold.
func (v view) search(ctx context.Context, r Request, after *cursor, partial bool) (Result, error) {
	if len(r.Query.Pairs) > 0 && !v.NearInOneSearch {
		return v.searchNear(ctx, r, after, partial)
	}
	relaxed := partial
	q := v.build(r.Query, r.Folder, r.Scope, partial)
	if after == nil {
		// Sorting by score alone lets Bleve skip loading the path of every matching
		// document (for a word in every document, most of the time of a search); ties
		// are ordered by path here, which is exact unless they run past the hits asked for.
		var res Result
		var exact func(int) bool
		var err error
		res, exact, err = v.best(ctx, q, r.Limit, relaxed)
		if err != nil || exact(r.Limit) {
			return res.page(r.Limit), err
		}
	}
	res, _, err := v.run(ctx, q, r.Limit+1, after, relaxed, true)
	return res.page(r.Limit), err
}

// ranked orders the best n hits by score and then path, and says, for a page of limit
// hits, whether those are the first limit+1 an ordering by path of every match would give.
func (res Result) ranked(n int) (Result, func(int) bool, error) {
	slices.SortStableFunc(res.Hits, func(a, b Hit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		// As Bleve's "_id" orders them, so that the cursor continues where this left off.
		return strings.Compare(a.key().ID(), b.key().ID())
	})
	exact := func(limit int) bool {
		// Every hit left out scores at most the last one returned: if that is below
		// the score of hit limit+1, none of them can be among the first limit+1.
		return len(res.Hits) < n || limit >= len(res.Hits) || res.Hits[len(res.Hits)-1].Score < res.Hits[limit].Score
	}
	return res, exact, nil
}

// page cuts the hits to limit, noting whether more follow.
func (res Result) page(limit int) Result {
	if len(res.Hits) > limit {
		res.Hits = res.Hits[:limit]
		res.more = true
	}
	return res
}
