package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/index/querylang"
)

// What the tests of package search_test reach inside the engine.

// RankedWords is how many words a query needs to be ranked as a sentence.
const RankedWords = rankedWords

// Term is a term query of one field.
var Term = term

// Clause is a term a word is looked for as (termClause).
type Clause struct {
	Field, Term string
	Boost       float64
}

// TermsQuery returns the query of clauses read straight from the postings (termsQuery),
// and the same query through Bleve's term searchers.
func TermsQuery(cs []Clause) (direct, generic bq.Query) {
	var tcs []termClause
	for _, c := range cs {
		tcs = append(tcs, termClause{c.Field, c.Term, c.Boost})
	}
	q := newTermsQuery(tcs, nil, nil, nil).(*termsQuery)
	return q, q.generic()
}

// SumQuery is the sum of the scores of qs (sumQuery).
func SumQuery(qs []bq.Query) bq.Query { return &sumQuery{qs: qs} }

// Reader opens a reader of idx's snapshot with the context a search gives its searchers.
func (e *Engine) Reader(ctx context.Context, idx bleve.Index) (bindex.IndexReader, context.Context, error) {
	return view{Engine: e, idx: idx}.reader(ctx)
}

// BleveRuns is how many collections e's searches ran through Bleve's collector.
func (e *Engine) BleveRuns() int64 { return e.counts.bleveRuns.Load() }

// ChunksPassed is how many windows of postings chunks e's searches passed over.
func (e *Engine) ChunksPassed() int64 { return e.counts.chunksPassed.Load() }

// CollectsDirectly reports whether the query of q's words (its pairs left out) is a
// sentence collected directly rather than by Bleve (plainSentence).
func (e *Engine) CollectsDirectly(idx bleve.Index, q querylang.Query, partial bool) bool {
	tq, _ := plainSentence(view{Engine: e, idx: idx}.build(q, "", nil, partial))
	return tq != nil
}

// BestAndRun collects the best n documents of q's words (its pairs left out) as a first
// page does (best), and the first n+1 through Bleve's collector ordered by path (run);
// exact is best's.
func (e *Engine) BestAndRun(ctx context.Context, idx bleve.Index, q querylang.Query, partial bool, n int) (best Result, exact bool, run Result, err error) {
	v := view{Engine: e, idx: idx}
	bq := v.build(q, "", nil, partial)
	best, ex, err := v.best(ctx, bq, n, false)
	if err != nil {
		return best, false, run, err
	}
	if !ex(n) {
		return best, false, run, nil
	}
	run, _, err = v.run(ctx, bq, n+1, nil, false, true)
	return best, true, run, err
}

// ScoredDoc is a document of the index, by its number, and its score.
type ScoredDoc = scoredDoc

// WordSearcher is the direct searcher of one word's terms (wordQuery).
type WordSearcher struct{ s *termsSearcher }

// NewWordSearcher makes w's direct searcher over reader, opened with e.Reader.
func (e *Engine) NewWordSearcher(ctx context.Context, idx bleve.Index, reader bindex.IndexReader, w string) (*WordSearcher, error) {
	q, ok := view{Engine: e, idx: idx}.wordQuery(w, 1).(*termsQuery)
	if !ok {
		return nil, fmt.Errorf("%s: not a terms query", w)
	}
	s, err := q.Searcher(ctx, reader, idx.Mapping(), bsearch.SearcherOptions{})
	if err != nil {
		return nil, err
	}
	return &WordSearcher{s.(*termsSearcher)}, nil
}

// Top returns the n best documents, pruned (termsSearcher.top), and how many match.
func (w *WordSearcher) Top(n int) ([]ScoredDoc, uint64, error) {
	return w.s.top(n, func() error { return nil })
}

// All reads every document the searcher matches, best first, ties in index order: what
// Top must find without reading them all.
func (w *WordSearcher) All() ([]ScoredDoc, error) {
	var all []ScoredDoc
	for {
		d, score, err := w.s.next()
		if err != nil {
			return nil, err
		}
		if d == noDoc {
			break
		}
		all = append(all, scoredDoc{d, score})
	}
	slices.SortStableFunc(all, func(a, b scoredDoc) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return all, nil
}

// Past reports whether the hit was ranked after the nearness window.
func (h Hit) Past() bool { return h.past }

// Comparable is r without what differs between two searches that give the same page: its
// cursor, and whether hits were ranked after the nearness window.
func Comparable(r Result) Result {
	r.Next, r.more = "", false
	r.Hits = slices.Clone(r.Hits)
	for i := range r.Hits {
		r.Hits[i].past = false
	}
	return r
}

// Page is r without its cursor.
func Page(r Result) Result {
	r.Next, r.more = "", false
	return r
}

// Open opens segment seg, as a collection does before counting it.
func (w *WordSearcher) Open(seg int) error { return w.s.open(seg, 0) }

// Count returns how many documents of the open segment seg the searcher's terms hold, as
// its collection counts them.
func (w *WordSearcher) Count(seg int) uint64 { return w.s.count(seg) }
