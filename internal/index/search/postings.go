package search

import (
	"context"
	"math"
	"reflect"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	gseg "github.com/guide/guide/internal/segment"
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
	sat     *saturations // nil: tables of its own
	counts  *counts      // nil: counted nowhere
	part    *part        // nil: a search of this index alone
}

func newTermsQuery(cs []termClause, sat *saturations, c *counts, p *part) bq.Query {
	return &termsQuery{clauses: cs, sat: sat, counts: c, part: p}
}

// generic is the same query through Bleve's term searchers, for what the direct reader
// leaves out: explanations, term vectors and unscored searches.
func (q *termsQuery) generic() *sumQuery {
	qs := make([]bq.Query, len(q.clauses))
	for i, c := range q.clauses {
		qs[i] = term(c.field, c.term, c.boost)
	}
	return &sumQuery{qs: qs}
}

func (q *termsQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, options bsearch.SearcherOptions) (bsearch.Searcher, error) {
	if only, ok := r.(*docsReader); ok {
		// A few documents of the index (rescore): its searcher moved to each of them.
		s, err := q.Searcher(ctx, only.IndexReader, m, options)
		if err != nil {
			return nil, err
		}
		return &docsSearcher{Searcher: s, docs: only.docs}, nil
	}
	snap, ok := snapshotOf(r)
	if !ok || options.Explain || options.IncludeTermVectors || options.Score == "none" {
		return q.generic().Searcher(ctx, r, m, options)
	}
	bm25 := false
	if cb, ok := ctx.Value(bsearch.GetScoringModelCallbackKey).(bsearch.GetScoringModelCallbackFn); ok {
		bm25 = cb() == bindex.BM25Scoring
	}
	s := &termsSearcher{
		clauses: q.clauses,
		segs:    snap.Segments(),
		seg:     -1,
		its:     make([]segment.PostingsIterator, len(q.clauses)),
		docs:    make([]uint64, len(q.clauses)),
		freqs:   make([]uint64, len(q.clauses)),
		lens:    make([]uint64, len(q.clauses)),
		scores:  make([]termScore, len(q.clauses)),
		bitmaps: make([]*roaring.Bitmap, len(q.clauses)),
		ends:    make([]uint64, len(q.clauses)),
		peaks:   make([]float64, len(q.clauses)),
		counts:  q.counts,
	}
	var at uint64
	for _, ss := range s.segs {
		s.offsets = append(s.offsets, at)
		at += ss.Segment().Count()
		s.lists = append(s.lists, make([]segment.PostingsList, len(q.clauses)))
	}
	s.end = at
	type segField struct {
		seg   int
		field string
	}
	dicts := map[segField]segment.TermDictionary{}
	lengths := map[string]*fieldLengths{}
	for i, c := range q.clauses {
		if err := bsearch.RecordTermSearcher(ctx); err != nil {
			return nil, err
		}
		// Documents holding the term, as Bleve's term searcher counts them for its idf;
		// the postings lists are kept for reading each segment.
		var with uint64
		for j, ss := range s.segs {
			d, ok := dicts[segField{j, c.field}]
			if !ok {
				var err error
				if d, err = ss.Segment().Dictionary(c.field); err != nil {
					return nil, err
				}
				dicts[segField{j, c.field}] = d
			}
			pl, err := d.PostingsList([]byte(c.term), ss.Deleted(), nil)
			if err != nil {
				return nil, err
			}
			s.lists[j][i] = pl
			with += pl.Count()
		}
		var docs uint64
		var avg float64
		var err error
		if bm25 {
			docs, avg, err = bm25Metrics(ctx, c.field, r)
		} else {
			docs, err = r.DocCount()
		}
		if err != nil {
			return nil, err
		}
		with = q.part.docs(c.field, c.term, with)
		s.scores[i] = newTermScore(c.boost, docs, with, avg)
		s.scores[i].with = with
		if avg > 0 {
			fl := lengths[c.field]
			if fl == nil {
				fl = q.sat.get(c.field, avg)
				lengths[c.field] = fl
			}
			s.scores[i].lengths = fl
		}
	}
	// Normalised as Bleve's disjunction is, until a query above it sets the norm.
	s.SetQueryNorm(queryNorm(s.Weight()))
	return s, nil
}

// termsSearcher walks the postings of its terms in document order, a segment of the
// index at a time: its[i] reads term i's postings in segment seg (lists, looked up once
// when the searcher is made, for the terms' idf), docs[i] is its current
// document there (noDoc once it has no more), and a document's score is the sum of the
// scores of the terms whose current document it is, added in the order of the terms.
type termsSearcher struct {
	clauses []termClause
	segs    []*scorch.SegmentSnapshot
	offsets []uint64                 // each segment's first document number in the index
	end     uint64                   // one past the last document number
	seg     int                      // the segment being read; -1 before the first
	lists   [][]segment.PostingsList // by segment, then term
	its     []segment.PostingsIterator
	docs    []uint64 // in the segment
	freqs   []uint64
	lens    []uint64 // field length, in words
	scores  []termScore
	id      bindex.IndexInternalID // the current document's
	// For counting the documents of a segment (top): each term's postings as a bitmap,
	// or its one document when it has one, and their union.
	bitmaps []*roaring.Bitmap
	ones    []oneHit
	union   docSet
	// groups, when set, are the words of a query of several (groups.go): which of them
	// a document must hold, and how Bleve would score it.
	groups *wordGroups
	// For passing over whole chunks of postings (top): term i's chunk holding its
	// current document ends before local document number ends[i] (0: not read yet) and
	// none of its postings scores above peaks[i]; impacts is a buffer.
	ends    []uint64
	peaks   []float64
	impacts []gseg.Impact
	counts  *counts // the Engine's, for the windows of chunks passed over; nil: none
}

const noDoc = math.MaxUint64

var termsSearcherSize = int(reflect.TypeFor[termsSearcher]().Size())

// open starts reading every term in segment seg, at its first posting at or after local
// document number from.
func (s *termsSearcher) open(seg int, from uint64) error {
	s.seg = seg
	s.ones = s.ones[:0]
	clear(s.ends)
	for i, pl := range s.lists[seg] {
		s.its[i] = pl.Iterator(true, true, false, s.its[i])
		if o, ok := s.its[i].(segment.OptimizablePostingsIterator); ok {
			s.bitmaps[i] = o.ActualBitmap()
			if d, ok := o.DocNum1Hit(); ok {
				s.ones = append(s.ones, oneHit{i, d})
			}
		} else {
			s.bitmaps[i] = nil
		}
		var p segment.Posting
		var err error
		if from == 0 {
			p, err = s.its[i].Next()
		} else {
			p, err = s.its[i].Advance(from)
		}
		if err != nil {
			return err
		}
		s.take(i, p)
	}
	return nil
}

// take makes p term i's current posting.
func (s *termsSearcher) take(i int, p segment.Posting) {
	if p == nil {
		s.docs[i] = noDoc
		return
	}
	s.docs[i] = p.Number()
	s.freqs[i] = p.Frequency()
	if raw, ok := p.(interface{ NormUint64() uint64 }); ok {
		s.lens[i] = raw.NormUint64()
	} else {
		nm := p.Norm()
		s.lens[i] = uint64(math.Round(1 / (nm * nm)))
	}
}

// next moves to the next document any term holds, and returns its number in the index
// (noDoc when none is left) and its score; s.id is its identifier until the next call.
func (s *termsSearcher) next() (uint64, float64, error) {
	if s.seg < 0 {
		if len(s.segs) == 0 {
			return noDoc, 0, nil
		}
		if err := s.open(0, 0); err != nil {
			return noDoc, 0, err
		}
	}
	for {
		doc := uint64(noDoc)
		for _, d := range s.docs {
			doc = min(doc, d)
		}
		if doc != noDoc {
			sum := 0.0
			for i, d := range s.docs {
				if d != doc {
					continue
				}
				sum += s.scores[i].score(s.freqs[i], s.lens[i])
				p, err := s.its[i].Next()
				if err != nil {
					return noDoc, 0, err
				}
				s.take(i, p)
			}
			global := s.offsets[s.seg] + doc
			s.id = bindex.NewIndexInternalID(s.id, global)
			return global, sum, nil
		}
		if s.seg+1 >= len(s.segs) {
			return noDoc, 0, nil
		}
		if err := s.open(s.seg+1, 0); err != nil {
			return noDoc, 0, err
		}
	}
}

func (s *termsSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	doc, score, err := s.next()
	if err != nil || doc == noDoc {
		return nil, err
	}
	m := ctx.DocumentMatchPool.Get()
	m.IndexInternalID = bindex.NewIndexInternalIDFrom(m.IndexInternalID, s.id)
	m.Score = score
	return m, nil
}

func (s *termsSearcher) Advance(ctx *bsearch.SearchContext, id bindex.IndexInternalID) (*bsearch.DocumentMatch, error) {
	target := id.Value()
	if target >= s.end || len(s.segs) == 0 {
		for i := range s.docs {
			s.docs[i] = noDoc
		}
		s.seg = max(s.seg, len(s.segs)-1)
		return nil, nil
	}
	// The segment holding target: the last whose first document is at or before it.
	seg := sort.Search(len(s.offsets), func(i int) bool { return s.offsets[i] > target }) - 1
	local := target - s.offsets[seg]
	if seg > s.seg {
		if err := s.open(seg, local); err != nil {
			return nil, err
		}
	} else {
		for i := range s.docs {
			if err := s.moveTo(i, local); err != nil {
				return nil, err
			}
		}
	}
	return s.Next(ctx)
}

// moveTo moves term i on to its first posting at or after local document number doc, in
// the segment being read (a term with none left stays so).
func (s *termsSearcher) moveTo(i int, doc uint64) error {
	if s.docs[i] >= doc { // noDoc included
		return nil
	}
	p, err := s.its[i].Advance(doc)
	if err != nil {
		return err
	}
	s.take(i, p)
	return nil
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
	for _, t := range s.scores {
		n += t.with
	}
	return n
}

func (s *termsSearcher) Min() int { return 0 }

func (s *termsSearcher) Size() int { return termsSearcherSize }

func (s *termsSearcher) DocumentMatchPoolSize() int { return 1 }

func (s *termsSearcher) Close() error { return nil }

var _ bsearch.Searcher = (*termsSearcher)(nil)
