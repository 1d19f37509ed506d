package search

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	bsearch "github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
)

// defaultNearWindow is how many documents the nearness of a query's words ranks, unless
// Engine.NearWindow says otherwise. Finding where two words stand next to each other reads
// the positions of both in every document that holds both: for a sentence of common
// words, most of the tree, and most of the time of its search. So a query with
// neighbouring words is ranked in two steps. Its words alone rank every matching
// document; the best of those, as many as the window holds, are ranked again by the whole
// query, their words' nearness counted, exactly as one search of the whole query would
// score them. The documents after the window follow in the order of their words alone. A
// document outside the window that its words' nearness would have lifted into it is the
// one difference from ranking everything by the whole query; a page is twenty hits, the
// window five pages (on the known-item sets, windows of 50 documents and more rank as one
// search does; 20 already loses a little).
const defaultNearWindow = 100

// searchNear runs one page of a query with neighbouring words (Pairs): see
// defaultNearWindow. Hits after the window are marked past, and so is a cursor after one
// of them.
func (v view) searchNear(ctx context.Context, r Request, after *cursor, relaxed bool) (Result, error) {
	alone := r.Query
	alone.Pairs = nil
	words := v.build(alone, r.Folder, r.Scope, relaxed)
	if after != nil && after.Past {
		res, _, err := v.run(ctx, words, r.Limit+1, after, relaxed, true)
		return res.markPast().page(r.Limit), err
	}
	win, full, err := v.window(ctx, words, relaxed)
	if err != nil {
		return Result{}, err
	}
	ranked, err := v.rescore(ctx, v.build(r.Query, r.Folder, r.Scope, relaxed), win.Hits)
	if err != nil {
		return Result{}, err
	}
	start := 0
	if after != nil {
		score, _ := strconv.ParseFloat(after.Score, 64) // decodeCursor checked it
		start = len(ranked)
		for i, h := range ranked {
			if h.Score < score || h.Score == score && h.key().ID() > after.Path {
				start = i
				break
			}
		}
	}
	res := Result{Hits: ranked[start:], Total: win.Total, Relaxed: relaxed}
	if need := r.Limit + 1 - len(res.Hits); need > 0 && full {
		// The page goes on past the window, in the order of the words alone.
		last := win.Hits[len(win.Hits)-1]
		c := cursor{Score: strconv.FormatFloat(last.Score, 'g', -1, 64), Path: last.key().ID()}
		more, _, err := v.run(ctx, words, need, &c, relaxed, true)
		if err != nil {
			return Result{}, err
		}
		res.Hits = append(res.Hits, more.markPast().Hits...)
	}
	return res.page(r.Limit), nil
}

// window returns the best documents of q, as many as the window holds, in order of score
// and then path, and whether more match.
func (v view) window(ctx context.Context, q bq.Query, relaxed bool) (Result, bool, error) {
	res, exact, err := v.best(ctx, q, v.nearWindow(), relaxed)
	if err != nil {
		return Result{}, false, err
	}
	if !exact(v.nearWindow()) {
		// Ties at the window's edge run past the hits asked for: order them by path.
		if res, _, err = v.run(ctx, q, v.nearWindow()+1, nil, relaxed, true); err != nil {
			return Result{}, false, err
		}
	}
	full := len(res.Hits) > v.nearWindow()
	res.Hits = res.Hits[:min(len(res.Hits), v.nearWindow())]
	return res, full, nil
}

// rescore scores hits by q, which must match each of them, and orders them by that score
// and then path. A hit q no longer matches (its document changed since) is left out. q's
// searchers read the index through a reader that shows them the hits' documents alone,
// so that the positions of a phrase's words are read in those documents only (Bleve's
// phrase searcher moved on with Advance reads on to its next match); terms are counted,
// and scored, as in the whole index.
func (v view) rescore(ctx context.Context, q bq.Query, hits []Hit) ([]Hit, error) {
	r, ctx, err := v.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	type doc struct {
		id  bindex.IndexInternalID
		hit int
	}
	docs := make([]doc, 0, len(hits))
	for i, h := range hits {
		id, err := r.InternalID(h.key().ID())
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if id != nil {
			docs = append(docs, doc{id, i})
		}
	}
	slices.SortFunc(docs, func(a, b doc) int { return bytes.Compare(a.id, b.id) })
	only := &docsReader{IndexReader: r}
	for _, d := range docs {
		only.docs = append(only.docs, d.id)
	}
	s, err := q.Searcher(ctx, only, v.idx.Mapping(), bsearch.SearcherOptions{})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer s.Close()
	sctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0)}
	out := make([]Hit, 0, len(docs))
	i := 0
	for {
		if ctx.Err() != nil {
			return nil, errTooBroad()
		}
		m, err := s.Next(sctx)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if m == nil {
			break
		}
		for i < len(docs) && bytes.Compare(docs[i].id, m.IndexInternalID) < 0 {
			i++
		}
		if i < len(docs) && docs[i].id.Equals(m.IndexInternalID) {
			h := hits[docs[i].hit]
			h.Score = m.Score
			out = append(out, h)
		}
		sctx.DocumentMatchPool.Put(m)
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return strings.Compare(a.key().ID(), b.key().ID())
	})
	return out, nil
}

// docsReader is an index reader whose terms' postings hold the documents docs (sorted)
// alone; how many documents hold a term is the index's count.
type docsReader struct {
	bindex.IndexReader
	docs []bindex.IndexInternalID
}

func (r *docsReader) TermFieldReader(ctx context.Context, term []byte, field string, freq, norm, vectors bool) (bindex.TermFieldReader, error) {
	tfr, err := r.IndexReader.TermFieldReader(ctx, term, field, freq, norm, vectors)
	if err != nil {
		return nil, err
	}
	return &docsTermReader{TermFieldReader: tfr, docs: r.docs}, nil
}

// docsSearcher finds the matches of its searcher among the documents docs (sorted)
// alone, moving it to each with Advance.
type docsSearcher struct {
	bsearch.Searcher
	docs []bindex.IndexInternalID
	next int // the first of docs not searched yet
}

func (s *docsSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	for s.next < len(s.docs) {
		m, err := s.Searcher.Advance(ctx, s.docs[s.next])
		if err != nil || m == nil {
			s.next = len(s.docs)
			return nil, err
		}
		s.next = seek(s.docs, s.next, m.IndexInternalID)
		if s.next < len(s.docs) && s.docs[s.next].Equals(m.IndexInternalID) {
			s.next++
			return m, nil
		}
		ctx.DocumentMatchPool.Put(m)
	}
	return nil, nil
}

func (s *docsSearcher) Advance(ctx *bsearch.SearchContext, id bindex.IndexInternalID) (*bsearch.DocumentMatch, error) {
	s.next = seek(s.docs, 0, id)
	return s.Next(ctx)
}

// seek returns the place of the first of docs[from:] (sorted) at or after id.
func seek(docs []bindex.IndexInternalID, from int, id bindex.IndexInternalID) int {
	return from + sort.Search(len(docs)-from, func(i int) bool { return bytes.Compare(docs[from+i], id) >= 0 })
}

// docsTermReader reads a term's postings in the documents docs alone.
type docsTermReader struct {
	bindex.TermFieldReader
	docs []bindex.IndexInternalID
	next int // the first of docs not read yet
}

func (t *docsTermReader) Next(pre *bindex.TermFieldDoc) (*bindex.TermFieldDoc, error) {
	for t.next < len(t.docs) {
		d, err := t.TermFieldReader.Advance(t.docs[t.next], pre)
		if err != nil || d == nil {
			t.next = len(t.docs)
			return nil, err
		}
		// The term's first document at or after docs[next]: one of docs, or skip to
		// the first of docs after it.
		t.next = seek(t.docs, t.next, d.ID)
		if t.next < len(t.docs) && t.docs[t.next].Equals(d.ID) {
			t.next++
			return d, nil
		}
		pre = d
	}
	return nil, nil
}

func (t *docsTermReader) Advance(id bindex.IndexInternalID, pre *bindex.TermFieldDoc) (*bindex.TermFieldDoc, error) {
	t.next = seek(t.docs, 0, id)
	return t.Next(pre)
}

// markPast marks the hits as ranked after the nearness window.
func (res Result) markPast() Result {
	for i := range res.Hits {
		res.Hits[i].past = true
	}
	return res
}
