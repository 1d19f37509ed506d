package search

import (
	"context"
	"fmt"
	"math"
	"sync"

	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/scorer"
	bindex "github.com/blevesearch/bleve_index_api"
)

// bm25Metrics are the document count and mean field length a Bleve term searcher scores
// a term of field by.
func bm25Metrics(ctx context.Context, field string, r bindex.IndexReader) (uint64, float64, error) {
	var count uint64
	var cardinality int
	if st, ok := ctx.Value(bsearch.BM25StatsKey).(*bsearch.BM25Stats); ok {
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
	with                    uint64 // documents holding the term
	lengths                 *fieldLengths
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

// bound is more than any posting of the term scores: BM25's saturation stays below k1,
// whatever the frequency and the length (a hair is added for rounding). Under TF-IDF
// there is none.
func (s *termScore) bound() float64 {
	if s.avg <= 0 {
		return math.Inf(1)
	}
	return s.idf * bsearch.BM25_k1 * s.weight * (1 + 1e-9)
}

// score is the score of a posting of freq occurrences in a field of n words.
func (s *termScore) score(freq, n uint64) float64 {
	var tf float64
	if freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[int(freq)]
	} else {
		tf = math.Sqrt(float64(freq))
	}
	var score float64
	if s.avg > 0 {
		score = s.idf * (tf * bsearch.BM25_k1) / (tf + s.lengths.saturation(n))
	} else {
		score = tf * norm(n) * s.idf
	}
	if s.weight != 1.0 {
		score = score * s.weight
	}
	return score
}

// norm is the norm a segment gives a field of n words (zap's Posting.Norm).
func norm(n uint64) float64 {
	return float64(float32(1.0 / math.Sqrt(float64(n))))
}

// fieldLengths holds, for one field and one mean length, the part of BM25's denominator
// that depends on a field's length alone, by length: a posting then costs a look-up
// rather than a square root and three divisions. Tables are shared by the searches of
// the same lengths (see saturations), and read-only once made.
type fieldLengths struct {
	avg  float64
	memo [4096]float64
}

func newFieldLengths(avg float64) *fieldLengths {
	f := &fieldLengths{avg: avg}
	for n := range f.memo {
		f.memo[n] = f.compute(uint64(n))
	}
	return f
}

func (f *fieldLengths) saturation(n uint64) float64 {
	if n < uint64(len(f.memo)) {
		return f.memo[n]
	}
	return f.compute(n)
}

func (f *fieldLengths) compute(n uint64) float64 {
	nm := norm(n)
	length := 1 / (nm * nm)
	return bsearch.BM25_k1 * (1 - bsearch.BM25_b + (bsearch.BM25_b * length / f.avg))
}

// saturations keeps the latest table of each field: the mean lengths change with every
// batch, and a table is made again when they have.
type saturations struct {
	mu sync.Mutex
	by map[string]*fieldLengths
}

func (s *saturations) get(field string, avg float64) *fieldLengths {
	if s == nil {
		return newFieldLengths(avg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.by[field]; f != nil && f.avg == avg {
		return f
	}
	if s.by == nil {
		s.by = map[string]*fieldLengths{}
	}
	f := newFieldLengths(avg)
	s.by[field] = f
	return f
}
