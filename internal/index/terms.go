package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/scorer"
	bindex "github.com/blevesearch/bleve_index_api"
)

// termClause is one term a word is looked for as: in a field, with a weight.
type termClause struct {
	field, term string
	boost       float64
}

// termsQuery is the sum of term queries (sumQuery of Bleve TermQuery), searched by reading
// each term's postings directly: a word's alternatives — its fields and its other forms —
// are a dozen terms, and through Bleve's term searchers every posting of each became a
// scored match of its own, handed through a pool and merged by comparing byte strings.
// Here a posting costs a read, a few float operations and a comparison of numbers, and a
// document one match. The scores are Bleve's, to the bit: the same BM25 (or TF-IDF) of
// the same statistics, computed in the same order.
type termsQuery struct {
	clauses []termClause
}

func newTermsQuery(cs []termClause) bq.Query { return &termsQuery{clauses: cs} }

// generic is the same query through Bleve's term searchers, for what the direct reader
// leaves out: explanations, term vectors and unscored searches.
func (q *termsQuery) generic() *sumQuery {
	qs := make([]bq.Query, len(q.clauses))
	for i, c := range q.clauses {
		qs[i] = term(c.field, c.term, c.boost)
	}
	return &sumQuery{qs: qs}
}

func (q *termsQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	if options.Explain || options.IncludeTermVectors || options.Score == "none" {
		return q.generic().Searcher(ctx, r, m, options)
	}
	bm25 := false
	if cb, ok := ctx.Value(search.GetScoringModelCallbackKey).(search.GetScoringModelCallbackFn); ok {
		bm25 = cb() == bindex.BM25Scoring
	}
	s := &termsSearcher{
		readers: make([]bindex.TermFieldReader, 0, len(q.clauses)),
		tfds:    make([]bindex.TermFieldDoc, len(q.clauses)),
		docs:    make([]uint64, len(q.clauses)),
		scores:  make([]termScore, len(q.clauses)),
	}
	for i, c := range q.clauses {
		if err := search.RecordTermSearcher(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
		tr, err := r.TermFieldReader(ctx, []byte(c.term), c.field, true, true, false)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.readers = append(s.readers, tr)
		var docs uint64
		var avg float64
		if bm25 {
			docs, avg, err = bm25Metrics(ctx, c.field, r)
		} else {
			docs, err = r.DocCount()
		}
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.scores[i] = newTermScore(c.boost, docs, tr.Count(), avg)
	}
	// Normalised as Bleve's disjunction is, until a query above it sets the norm.
	s.SetQueryNorm(queryNorm(s.Weight()))
	return s, nil
}

// bm25Metrics are the document count and mean field length a Bleve term searcher scores
// a term of field by.
func bm25Metrics(ctx context.Context, field string, r bindex.IndexReader) (uint64, float64, error) {
	var count uint64
	var cardinality int
	if st, ok := ctx.Value(search.BM25StatsKey).(*search.BM25Stats); ok {
		count = uint64(st.DocCount)
		c, ok := st.FieldCardinality[field]
		if !ok {
			return 0, 0, fmt.Errorf("field stat for bm25 not present %s", field)
		}
		cardinality = c
	} else {
		var err error
		if count, err = r.DocCount(); err != nil {
			return 0, 0, err
		}
		if br, ok := r.(bindex.BM25Reader); ok {
			if cardinality, err = br.FieldCardinality(field); err != nil {
				return 0, 0, err
			}
		}
	}
	if count == 0 && cardinality == 0 {
		return 0, 0, nil
	}
	return count, math.Ceil(float64(cardinality) / float64(count)), nil
}

// termScore scores one term's postings as Bleve's TermQueryScorer does.
type termScore struct {
	boost, idf, avg, weight float64
}

func newTermScore(boost float64, docs, withTerm uint64, avg float64) termScore {
	s := termScore{boost: boost, avg: avg, weight: 1}
	if avg > 0 {
		s.idf = math.Log(1 + (float64(docs)-float64(withTerm)+0.5)/(float64(withTerm)+0.5))
	} else {
		s.idf = 1.0 + math.Log(float64(docs)/float64(withTerm+1.0))
	}
	return s
}

func (s *termScore) score(freq uint64, norm float64) float64 {
	var tf float64
	if freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[int(freq)]
	} else {
		tf = math.Sqrt(float64(freq))
	}
	var score float64
	if s.avg > 0 {
		length := 1 / (norm * norm)
		score = s.idf * (tf * search.BM25_k1) / (tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*length/s.avg)))
	} else {
		score = tf * norm * s.idf
	}
	if s.weight != 1.0 {
		score = score * s.weight
	}
	return score
}

// termsSearcher walks the postings of its terms in document order: docs holds each term's
// current document (noDoc once it has no more), and a document's score is the sum of the
// scores of the terms whose current document it is, added in the order of the terms.
type termsSearcher struct {
	readers []bindex.TermFieldReader
	tfds    []bindex.TermFieldDoc
	docs    []uint64
	scores  []termScore
	id      bindex.IndexInternalID // the current document's
	started bool
}

const noDoc = math.MaxUint64

var termsSearcherSize = int(reflect.TypeFor[termsSearcher]().Size())

// read moves term i to its next posting, or to the first at or after id.
func (s *termsSearcher) read(i int, id bindex.IndexInternalID) error {
	var d *bindex.TermFieldDoc
	var err error
	if id == nil {
		d, err = s.readers[i].Next(&s.tfds[i])
	} else {
		d, err = s.readers[i].Advance(id, &s.tfds[i])
	}
	if err != nil {
		return err
	}
	if d == nil {
		s.docs[i] = noDoc
		return nil
	}
	if d != &s.tfds[i] {
		s.tfds[i] = *d
	}
	s.docs[i] = binary.BigEndian.Uint64(s.tfds[i].ID)
	return nil
}

func (s *termsSearcher) start() error {
	s.started = true
	for i := range s.readers {
		if err := s.read(i, nil); err != nil {
			return err
		}
	}
	return nil
}

// next moves to the next document any term holds, and returns it (noDoc when none is
// left) and its score; s.id is its identifier until the following call.
func (s *termsSearcher) next() (uint64, float64, error) {
	if !s.started {
		if err := s.start(); err != nil {
			return noDoc, 0, err
		}
	}
	doc := uint64(noDoc)
	for _, d := range s.docs {
		doc = min(doc, d)
	}
	if doc == noDoc {
		return noDoc, 0, nil
	}
	sum := 0.0
	first := true
	for i, d := range s.docs {
		if d != doc {
			continue
		}
		if first {
			s.id = append(s.id[:0], s.tfds[i].ID...)
			first = false
		}
		sum += s.scores[i].score(s.tfds[i].Freq, s.tfds[i].Norm)
		if err := s.read(i, nil); err != nil {
			return noDoc, 0, err
		}
	}
	return doc, sum, nil
}

func (s *termsSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	doc, score, err := s.next()
	if err != nil || doc == noDoc {
		return nil, err
	}
	m := ctx.DocumentMatchPool.Get()
	m.IndexInternalID = bindex.NewIndexInternalIDFrom(m.IndexInternalID, s.id)
	m.Score = score
	return m, nil
}

func (s *termsSearcher) Advance(ctx *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	if !s.started {
		if err := s.start(); err != nil {
			return nil, err
		}
	}
	target := binary.BigEndian.Uint64(id)
	for i, d := range s.docs {
		if d != noDoc && d < target {
			if err := s.read(i, id); err != nil {
				return nil, err
			}
		}
	}
	return s.Next(ctx)
}

// top returns the n best documents, by score and then in index order (as Bleve's
// collector keeps them), best first, and how many documents matched; stop is asked
// every thousand documents whether to give up.
func (s *termsSearcher) top(n int, stop func() error) ([]scoredDoc, uint64, error) {
	h := make(scoredHeap, 0, n)
	var total uint64
	for {
		doc, score, err := s.next()
		if err != nil {
			return nil, total, err
		}
		if doc == noDoc {
			break
		}
		total++
		if total%1024 == 0 {
			if err := stop(); err != nil {
				return nil, total, err
			}
		}
		switch {
		case len(h) < n:
			h.push(scoredDoc{doc, score})
		case score > h[0].score:
			// Documents come in index order: one that ties the worst kept comes after it.
			h[0] = scoredDoc{doc, score}
			h.down(0)
		}
	}
	out := make([]scoredDoc, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = h.pop()
	}
	return out, total, nil
}

// scoredDoc is a document of the index, by its number, and its score.
type scoredDoc struct {
	doc   uint64
	score float64
}

// scoredHeap keeps the worst of the best documents on top: the lowest score, and of
// equal scores the latest in index order.
type scoredHeap []scoredDoc

func (h scoredHeap) worse(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].doc > h[j].doc
}

func (h *scoredHeap) push(d scoredDoc) {
	*h = append(*h, d)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.worse(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *scoredHeap) pop() scoredDoc {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h scoredHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.worse(r, l) {
			m = r
		}
		if !h.worse(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (s *termsSearcher) Weight() float64 {
	w := 0.0
	for _, t := range s.scores {
		x := t.boost * t.idf
		w += x * x
	}
	return w
}

func (s *termsSearcher) SetQueryNorm(n float64) {
	for i := range s.scores {
		s.scores[i].weight = s.scores[i].boost * s.scores[i].idf * n
	}
}

// Count is an upper bound, as Bleve's disjunction's.
func (s *termsSearcher) Count() uint64 {
	var n uint64
	for _, r := range s.readers {
		n += r.Count()
	}
	return n
}

func (s *termsSearcher) Min() int { return 0 }

func (s *termsSearcher) Size() int {
	n := termsSearcherSize
	for _, r := range s.readers {
		n += r.Size()
	}
	return n
}

func (s *termsSearcher) DocumentMatchPoolSize() int { return 1 }

func (s *termsSearcher) Close() error {
	var first error
	for _, r := range s.readers {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

var _ search.Searcher = (*termsSearcher)(nil)
