package search

import (
	"context"
	"math"
	"reflect"

	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
)

// sumQuery matches the documents any of its queries match, and scores each by the sum of
// the scores of those that match it. It is for the alternatives of one word (the fields
// it is looked for in, its other forms) and of one phrase: Bleve's disjunction multiplies
// that sum by the share of its alternatives that matched, which divided a word's score by
// how many forms of it the dictionary happens to hold — "convert", with six other forms
// indexed, weighed half as much as "array", with one.
type sumQuery struct {
	qs []bq.Query
}

func newSumQuery(qs []bq.Query) bq.Query {
	if len(qs) == 1 {
		return qs[0]
	}
	return &sumQuery{qs: qs}
}

func (q *sumQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, options bsearch.SearcherOptions) (bsearch.Searcher, error) {
	subs := make([]bsearch.Searcher, 0, len(q.qs))
	for _, sq := range q.qs {
		s, err := sq.Searcher(ctx, r, m, options)
		if err != nil {
			for _, s := range subs {
				_ = s.Close()
			}
			return nil, err
		}
		subs = append(subs, s)
	}
	s := &sumSearcher{subs: subs, currs: make([]*bsearch.DocumentMatch, len(subs)), explain: options.Explain}
	// Normalised as Bleve's disjunction is, until a query above it sets the norm.
	s.SetQueryNorm(queryNorm(s.Weight()))
	return s, nil
}

// sumSearcher is sumQuery's searcher: it walks its searchers' matches in document order,
// keeping the searchers that have a current match in a heap by that match's document.
type sumSearcher struct {
	subs    []bsearch.Searcher
	currs   []*bsearch.DocumentMatch // each searcher's current match; nil once it has no more
	heap    []int                    // the searchers with a current match, the first document on top
	started bool
	explain bool
}

var sumSearcherSize = int(reflect.TypeFor[sumSearcher]().Size())

func (s *sumSearcher) start(ctx *bsearch.SearchContext) error {
	s.started = true
	for i, sub := range s.subs {
		m, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		s.currs[i] = m
	}
	s.heapify()
	return nil
}

func (s *sumSearcher) less(a, b int) bool {
	return s.currs[s.heap[a]].IndexInternalID.Compare(s.currs[s.heap[b]].IndexInternalID) < 0
}

func (s *sumSearcher) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(s.heap) {
			return
		}
		m := l
		if r := l + 1; r < len(s.heap) && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			return
		}
		s.heap[i], s.heap[m] = s.heap[m], s.heap[i]
		i = m
	}
}

// heapify puts every searcher with a current match in the heap.
func (s *sumSearcher) heapify() {
	s.heap = s.heap[:0]
	for i, c := range s.currs {
		if c != nil {
			s.heap = append(s.heap, i)
		}
	}
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
}

func (s *sumSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	if !s.started {
		if err := s.start(ctx); err != nil {
			return nil, err
		}
	}
	if len(s.heap) == 0 {
		return nil, nil
	}
	// first is the match returned: its identifier stays valid while the others go back
	// to the pool and their searchers move on.
	first := s.currs[s.heap[0]]
	id := first.IndexInternalID
	sum := 0.0
	var expls []*bsearch.Explanation
	for len(s.heap) > 0 {
		i := s.heap[0]
		c := s.currs[i]
		if !c.IndexInternalID.Equals(id) {
			break
		}
		sum += c.Score
		if s.explain {
			expls = append(expls, c.Expl)
		}
		if c != first {
			first.FieldTermLocations = bsearch.MergeFieldTermLocations(first.FieldTermLocations, []*bsearch.DocumentMatch{c})
			ctx.DocumentMatchPool.Put(c)
		}
		next, err := s.subs[i].Next(ctx)
		if err != nil {
			return nil, err
		}
		s.currs[i] = next
		if next == nil {
			last := len(s.heap) - 1
			s.heap[0] = s.heap[last]
			s.heap = s.heap[:last]
		}
		s.down(0)
	}
	first.Score = sum
	if s.explain {
		first.Expl = &bsearch.Explanation{Value: sum, Message: "sum of:", Children: expls}
	}
	return first, nil
}

func (s *sumSearcher) Advance(ctx *bsearch.SearchContext, id bindex.IndexInternalID) (*bsearch.DocumentMatch, error) {
	if !s.started {
		if err := s.start(ctx); err != nil {
			return nil, err
		}
	}
	for i, c := range s.currs {
		if c == nil || c.IndexInternalID.Compare(id) >= 0 {
			continue
		}
		ctx.DocumentMatchPool.Put(c)
		next, err := s.subs[i].Advance(ctx, id)
		if err != nil {
			return nil, err
		}
		s.currs[i] = next
	}
	s.heapify()
	return s.Next(ctx)
}

func (s *sumSearcher) Weight() float64 {
	w := 0.0
	for _, sub := range s.subs {
		w += sub.Weight()
	}
	return w
}

func (s *sumSearcher) SetQueryNorm(n float64) {
	for _, sub := range s.subs {
		sub.SetQueryNorm(n)
	}
}

// Count is an upper bound, as Bleve's disjunction's.
func (s *sumSearcher) Count() uint64 {
	var n uint64
	for _, sub := range s.subs {
		n += sub.Count()
	}
	return n
}

func (s *sumSearcher) Min() int { return 0 }

func (s *sumSearcher) Size() int {
	n := sumSearcherSize
	for _, sub := range s.subs {
		n += sub.Size()
	}
	return n
}

func (s *sumSearcher) DocumentMatchPoolSize() int {
	n := len(s.currs)
	for _, sub := range s.subs {
		n += sub.DocumentMatchPoolSize()
	}
	return n
}

func (s *sumSearcher) Close() error {
	var first error
	for _, sub := range s.subs {
		if err := sub.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

var _ bsearch.Searcher = (*sumSearcher)(nil)

// queryNorm is 1/√w, as Bleve normalises a query's weights (w is their sum of squares).
func queryNorm(w float64) float64 {
	if w <= 0 {
		return 1
	}
	return 1 / math.Sqrt(w)
}
