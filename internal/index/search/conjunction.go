package search

import (
	"slices"
	"sort"
)

// topAll is top for a query whose words are all required (groups.all). A document is
// scored only if every word holds it and, once n are kept, it holds one of the terms
// whose ceilings could lift it above the worst of them (MaxScore, as top): those terms'
// postings and the words' are moved on in step to the next document that meets both
// (the rarest word first, as Bleve's conjunction does). The other terms are looked up at
// such a document, highest ceiling first, while it could still enter.
func (s *termsSearcher) topAll(n int, stop func() error) ([]scoredDoc, uint64, error) {
	g := s.groups
	k := len(s.clauses)
	// Every term by ceiling: a document holding only the terms of a prefix whose ceilings
	// add up to at most the worst score kept cannot enter.
	c := newCeilings(s.scores)
	bound, order := c.bound, c.order
	h := make(scoredHeap, 0, n)
	part := make([]float64, k)
	held := make([]bool, k)
	var total uint64
	// first moves terms on to doc, and returns the first document one of them holds: doc
	// itself as soon as one holds it (the others may stay behind).
	first := func(terms []int, doc uint64) (uint64, error) {
		f := uint64(noDoc)
		for _, i := range terms {
			if err := s.moveTo(i, doc); err != nil {
				return noDoc, err
			}
			d := s.docs[i]
			if d == doc {
				return doc, nil
			}
			f = min(f, d)
		}
		return f, nil
	}
	words := make([][]int, g.words) // each word's terms, highest ceiling first; the rarest word first
	for w, gi := range g.order[:g.words] {
		start, end := g.terms(gi)
		for i := start; i < end; i++ {
			words[w] = append(words[w], i)
		}
		sort.SliceStable(words[w], func(a, b int) bool { return bound[words[w][a]] > bound[words[w][b]] })
	}
	byCeiling := slices.Clone(order) // highest ceiling first
	slices.Reverse(byCeiling)
	var behind []int
	p := pace{stop: stop}
	for seg := range s.segs {
		count, err := s.openCounting(seg)
		if err != nil {
			return nil, total, err
		}
		total += count
		target := uint64(0)
	segment:
		for {
			if err := p.step(); err != nil {
				return nil, total, err
			}
			if !c.raise(h, n) {
				break // nothing left can enter
			}
			e, theta := c.e, c.theta
			// The first document at or after target that every word holds, and, past the
			// first n, one of the terms that could make it enter.
			doc := target
			for agreed := false; !agreed; {
				agreed = true
				if e > 0 {
					f, err := first(order[e:], doc)
					if err != nil {
						return nil, total, err
					}
					if f == noDoc {
						break segment
					}
					doc = f
				}
				for _, terms := range words {
					f, err := first(terms, doc)
					if err != nil {
						return nil, total, err
					}
					if f == noDoc {
						break segment
					}
					if f > doc {
						doc, agreed = f, false
					}
				}
			}
			target = doc + 1
			clear(part)
			clear(held)
			sum, rest := 0.0, 0.0
			behind = behind[:0] // terms not moved on to doc yet
			for _, i := range byCeiling {
				switch {
				case s.docs[i] == doc:
					part[i], held[i] = s.scores[i].score(s.freqs[i], s.lens[i]), true
					sum += part[i]
				case s.docs[i] < doc:
					behind = append(behind, i)
					rest += bound[i]
				}
			}
			// The other terms, highest ceiling first, while the document can still enter.
			enters := true
			for _, i := range behind {
				if len(h) == n && (sum+rest)*(1+1e-9) <= theta {
					enters = false
					break
				}
				rest -= bound[i]
				if err := s.moveTo(i, doc); err != nil {
					return nil, total, err
				}
				if s.docs[i] == doc {
					part[i], held[i] = s.scores[i].score(s.freqs[i], s.lens[i]), true
					sum += part[i]
				}
			}
			if !enters || len(h) == n && sum*(1+1e-9) <= theta {
				continue
			}
			score, _ := g.score(part, held)
			h.offer(scoredDoc{s.offsets[seg] + doc, score}, n)
		}
	}
	return h.best(), total, nil
}
