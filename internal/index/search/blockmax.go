package search

import (
	"math"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/guide/guide/internal/segment"
)

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
// headed by its impacts (package segment's impact.go), the pairs of frequency and length that bound
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
					if s.counts != nil {
						s.counts.chunksPassed.Add(1)
					}
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

// impactReader is a postings iterator that reads the impacts of its chunks (guide's
// segment format): those of the chunk holding docNum, and one past its last document.
type impactReader interface {
	Impacts(docNum uint64, dst []segment.Impact) ([]segment.Impact, uint64, bool)
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
	return s.count(seg), nil
}

// count returns how many documents of segment seg, open, match.
func (s *termsSearcher) count(seg int) uint64 {
	docs := s.segs[seg].Segment().Count()
	if s.groups != nil {
		return s.groups.count(s.bitmaps, s.ones, &s.union, docs)
	}
	s.union.reset(docs)
	unionOf(&s.union, s.bitmaps, s.ones, 0, len(s.bitmaps))
	return s.union.count()
}

// unionOf adds to dst the documents terms start to end hold in a segment: their postings'
// bitmaps, or a term's one document in ones.
func unionOf(dst *docSet, bitmaps []*roaring.Bitmap, ones []oneHit, start, end int) {
	for _, bm := range bitmaps[start:end] {
		if bm != nil {
			dst.or(bm)
		}
	}
	for _, d := range ones {
		if start <= d.term && d.term < end {
			dst.add(d.doc)
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
