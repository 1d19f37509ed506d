package index

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sort"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/scorer"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"
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
}

func newTermsQuery(cs []termClause, sat *saturations) bq.Query {
	return &termsQuery{clauses: cs, sat: sat}
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

func (q *termsQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	if only, ok := r.(*docsReader); ok {
		// A few documents of the index (rescore): its searcher moved to each of them.
		s, err := q.Searcher(ctx, only.IndexReader, m, options)
		if err != nil {
			return nil, err
		}
		return &docsSearcher{Searcher: s, docs: only.docs}, nil
	}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok || options.Explain || options.IncludeTermVectors || options.Score == "none" {
		return q.generic().Searcher(ctx, r, m, options)
	}
	bm25 := false
	if cb, ok := ctx.Value(search.GetScoringModelCallbackKey).(search.GetScoringModelCallbackFn); ok {
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
		union:   roaring.New(),
		ends:    make([]uint64, len(q.clauses)),
		peaks:   make([]float64, len(q.clauses)),
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
		if err := search.RecordTermSearcher(ctx); err != nil {
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
	return s.idf * search.BM25_k1 * s.weight * (1 + 1e-9)
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
		score = s.idf * (tf * search.BM25_k1) / (tf + s.lengths.saturation(n))
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
	return search.BM25_k1 * (1 - search.BM25_b + (search.BM25_b * length / f.avg))
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
	union   *roaring.Bitmap
	// groups, when set, are the words of a query of several (sentence.go): which of them
	// a document must hold, and how Bleve would score it.
	groups *wordGroups
	// For passing over whole chunks of postings (top): term i's chunk holding its
	// current document ends before local document number ends[i] (0: not read yet) and
	// none of its postings scores above peaks[i]; impacts is a buffer.
	ends    []uint64
	peaks   []float64
	impacts []zap.Impact
	passed  int // windows of chunks passed over, for tests
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

// ceilings are the terms of a searcher by the ceiling of their scores, for MaxScore
// (top, topAll): once n documents are kept, a document holding only terms of a prefix of
// order whose ceilings add up to at most the worst score kept (theta) cannot enter.
type ceilings struct {
	bound []float64
	order []int   // the terms by bound, lowest first
	theta float64 // the score to beat: the worst kept, once n are kept
	e     int     // order[:e] cannot make a document enter alone
	low   float64 // their bounds added up
}

func newCeilings(scores []termScore) *ceilings {
	c := &ceilings{bound: make([]float64, len(scores)), order: make([]int, len(scores)), theta: math.Inf(-1)}
	for i := range scores {
		c.bound[i] = scores[i].bound()
		c.order[i] = i
	}
	sort.SliceStable(c.order, func(a, b int) bool { return c.bound[c.order[a]] < c.bound[c.order[b]] })
	return c
}

// raise takes the worst score of h once it holds n, grows the prefix of terms that cannot
// make a document enter alone, and reports whether any other term is left.
func (c *ceilings) raise(h scoredHeap, n int) bool {
	if len(h) == n && h[0].score > c.theta {
		c.lift(h[0].score)
	}
	return c.e < len(c.order)
}

// lift makes theta the score to beat.
func (c *ceilings) lift(theta float64) {
	c.theta = theta
	for c.e < len(c.order) && c.low+c.bound[c.order[c.e]] <= c.theta {
		c.low += c.bound[c.order[c.e]]
		c.e++
	}
}

// top returns the n best documents, by score and then in index order (as Bleve's
// collector keeps them), best first, and how many documents matched; stop is asked now
// and then whether to give up.
//
// It skips the documents that cannot be among the best (MaxScore, as Lucene and other
// engines do): no posting of a term scores above its bound, so once the n kept are all
// above the sum of the bounds of the terms of lowest bound, a document those terms alone
// hold cannot enter, and their postings are only looked up at the documents the other
// terms hold. A common word's content postings are then mostly skipped when the best
// documents also hold it in their titles or names. The terms left are read a chunk at a
// time (block-max, as Lucene's block-max MaxScore): each chunk of a postings list is
// headed by its impacts (zapx's impact.go), the pairs of frequency and length that bound
// what its postings score, and while no document before the first of the terms' chunk
// ends can beat the worst kept, the terms pass over it without reading a posting. A word
// found only in the content, where MaxScore has no term to leave out, is then mostly
// passed over. How many documents match is counted from the postings' bitmaps, not by
// reading them.
func (s *termsSearcher) top(n int, stop func() error) ([]scoredDoc, uint64, error) {
	return s.topAbove(n, math.Inf(-1), stop)
}

// topAbove is top of the documents that score above floor alone.
func (s *termsSearcher) topAbove(n int, floor float64, stop func() error) ([]scoredDoc, uint64, error) {
	h := make(scoredHeap, 0, min(n, 1024))
	var total uint64
	k := len(s.clauses)
	c := newCeilings(s.scores)
	c.lift(floor)
	bound, order := c.bound, c.order
	part := make([]float64, k)
	held := make([]bool, k)
	p := pace{stop: stop}
	for seg := range s.segs {
		union, err := s.openCounting(seg)
		if err != nil {
			return nil, total, err
		}
		total += union
		// Documents before window were found able to enter against windowTheta.
		window, windowTheta := uint64(0), math.Inf(-1)
		segDocs := s.segs[seg].Segment().Count()
		for {
			if err := p.step(); err != nil {
				return nil, total, err
			}
			if !c.raise(h, n) {
				break // nothing left in this segment can enter
			}
			e, theta := c.e, c.theta
			doc := uint64(noDoc)
			for _, i := range order[e:] {
				doc = min(doc, s.docs[i])
			}
			if doc == noDoc {
				break
			}
			if !math.IsInf(theta, -1) && (doc >= window || theta != windowTheta) {
				// What the terms that can enter alone score at most, up to the first
				// end of their chunks: if no document before it can enter, they all
				// move on to it without reading a posting.
				end, most := s.chunkPeaks(order[e:])
				if most+c.low <= theta {
					for _, i := range order[e:] {
						if end >= segDocs {
							s.docs[i] = noDoc
						} else if err := s.moveTo(i, end); err != nil {
							return nil, total, err
						}
					}
					s.passed++
					continue
				}
				window, windowTheta = end, theta
			}
			clear(part)
			if s.groups != nil {
				clear(held)
			}
			sum := 0.0
			for _, i := range order[e:] {
				if s.docs[i] != doc {
					continue
				}
				part[i], held[i] = s.scores[i].score(s.freqs[i], s.lens[i]), true
				sum += part[i]
				p, err := s.its[i].Next()
				if err != nil {
					return nil, total, err
				}
				s.take(i, p)
			}
			// The other terms, highest bound first, while the document can still enter.
			rest := c.low
			enters := true
			for j := e - 1; j >= 0; j-- {
				if sum+rest <= theta {
					enters = false
					break
				}
				i := order[j]
				rest -= bound[i]
				if err := s.moveTo(i, doc); err != nil {
					return nil, total, err
				}
				if s.docs[i] == doc {
					part[i], held[i] = s.scores[i].score(s.freqs[i], s.lens[i]), true
					sum += part[i]
				}
			}
			if !enters {
				continue
			}
			score := 0.0
			if s.groups != nil {
				var matches bool
				if score, matches = s.groups.score(part, held); !matches {
					continue // it holds ranking words alone
				}
			} else {
				for _, v := range part { // in the order of the terms, as Next adds them
					score += v
				}
			}
			if score > floor {
				h.offer(scoredDoc{s.offsets[seg] + doc, score}, n)
			}
		}
	}
	return h.best(), total, nil
}

// impactReader is a postings iterator that reads the impacts of its chunks (zapx's).
type impactReader interface {
	Impacts(docNum uint64, dst []zap.Impact) ([]zap.Impact, uint64, bool)
}

// chunkPeaks returns where the first of the chunks of terms' current documents ends (a
// local document number), and the most a document before it can score by those terms:
// each term's chunk is bounded by its impacts (a term whose current document is past the
// end adds nothing). Without impacts, a term's chunk is its whole list, bounded as MaxScore
// bounds it.
func (s *termsSearcher) chunkPeaks(terms []int) (end uint64, most float64) {
	end = noDoc
	for _, i := range terms {
		doc := s.docs[i]
		if doc == noDoc {
			continue
		}
		if doc >= s.ends[i] {
			s.ends[i], s.peaks[i] = noDoc, s.scores[i].bound()
			if r, ok := s.its[i].(impactReader); ok {
				var chunkEnd uint64
				var known bool
				s.impacts, chunkEnd, known = r.Impacts(doc, s.impacts)
				if known && len(s.impacts) > 0 {
					peak := 0.0
					for _, p := range s.impacts {
						peak = max(peak, s.scores[i].score(p.Freq, p.Norm))
					}
					// A hair for rounding, as bound adds: the score of a posting
					// the pair dominates is no more than the pair's in exact arithmetic.
					s.ends[i], s.peaks[i] = chunkEnd, peak*(1+1e-9)
				}
			}
		}
		end = min(end, s.ends[i])
	}
	for _, i := range terms {
		if s.docs[i] < end {
			most += s.peaks[i]
		}
	}
	return end, most
}

// openCounting opens segment seg, and returns how many of its documents match: hold any
// term, or as groups say.
func (s *termsSearcher) openCounting(seg int) (uint64, error) {
	if err := s.open(seg, 0); err != nil {
		return 0, err
	}
	s.union.Clear()
	if s.groups != nil {
		return s.groups.count(s.bitmaps, s.ones, s.union), nil
	}
	unionOf(s.union, s.bitmaps, s.ones, 0, len(s.bitmaps))
	return s.union.GetCardinality(), nil
}

// unionOf adds to dst the documents terms start to end hold in a segment: their postings'
// bitmaps, or a term's one document in ones.
func unionOf(dst *roaring.Bitmap, bitmaps []*roaring.Bitmap, ones []oneHit, start, end int) {
	var some []*roaring.Bitmap
	for _, bm := range bitmaps[start:end] {
		if bm != nil && !bm.IsEmpty() {
			some = append(some, bm)
		}
	}
	switch {
	case len(some) == 1:
		dst.Or(some[0])
	case len(some) > 1:
		// Unions of lazily counted containers, counted once at the end: a dozen
		// lists of a common word are joined in a third of the time of one Or each.
		dst.Or(roaring.FastOr(some...))
	}
	for _, d := range ones {
		if start <= d.term && d.term < end {
			dst.Add(uint32(d.doc))
		}
	}
}

// pace asks stop every 1024 steps of a collection whether to give up.
type pace struct {
	stop  func() error
	steps int
}

func (p *pace) step() error {
	if p.steps++; p.steps%1024 == 0 {
		return p.stop()
	}
	return nil
}

// oneHit is a term's one document in a segment, held as a number rather than a bitmap.
type oneHit struct {
	term int
	doc  uint64
}

// scoredDoc is a document of the index, by its number, and its score.
type scoredDoc struct {
	doc   uint64
	score float64
}

// scoredHeap keeps the worst of the best documents on top: the lowest score, and of
// equal scores the latest in index order.
type scoredHeap []scoredDoc

// offer keeps d if it is among the best n offered so far. Documents are offered in index
// order: one that ties the worst kept comes after it, and does not enter.
func (h *scoredHeap) offer(d scoredDoc, n int) {
	switch {
	case len(*h) < n:
		h.push(d)
	case d.score > (*h)[0].score:
		(*h)[0] = d
		h.down(0)
	}
}

// best empties the heap, best first.
func (h *scoredHeap) best() []scoredDoc {
	out := make([]scoredDoc, len(*h))
	for i := len(*h) - 1; i >= 0; i-- {
		out[i] = h.pop()
	}
	return out
}

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
	for _, t := range s.scores {
		n += t.with
	}
	return n
}

func (s *termsSearcher) Min() int { return 0 }

func (s *termsSearcher) Size() int { return termsSearcherSize }

func (s *termsSearcher) DocumentMatchPoolSize() int { return 1 }

func (s *termsSearcher) Close() error { return nil }

var _ search.Searcher = (*termsSearcher)(nil)
