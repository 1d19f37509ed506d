package index

import (
	"cmp"
	"math"
	"slices"

	bq "github.com/blevesearch/bleve/v2/search/query"
	bsearcher "github.com/blevesearch/bleve/v2/search/searcher"
)

// wordGroups are the terms of a sentence's query (build, relaxed) in one termsSearcher:
// each word's terms, the words first and the ranking words after, ends[g] one past the
// last term of group g. Bleve would search it as a Boolean query whose required part is
// the disjunction of the words (at least one) and whose optional part is that of the
// ranking words, each word a termsQuery; score gives a document the score that query
// gives it, the same floating-point operations in the same order, so that the pages of
// the direct collection and those of Bleve's are the same.
type wordGroups struct {
	ends  []int
	words int // how many groups are the query's words; the rest rank only
	// order is the groups in the order Bleve's disjunctions hold their searchers, which
	// is the order their scores and weights are summed in: the words, then the ranking
	// words, each by how many postings they have (sort.Sort of fewer than 12 searchers is
	// an insertion sort, which keeps ties in place).
	order []int
}

// sortGroups orders the groups of each disjunction as Bleve does (order).
func (g *wordGroups) sortGroups(scores []termScore) {
	count := make([]uint64, len(g.ends))
	start := 0
	for gi, end := range g.ends {
		for _, t := range scores[start:end] {
			count[gi] += t.with
		}
		start = end
	}
	g.order = make([]int, len(g.ends))
	for i := range g.order {
		g.order[i] = i
	}
	byCount := func(a, b int) int { return cmp.Compare(count[a], count[b]) }
	slices.SortStableFunc(g.order[:g.words], byCount)
	slices.SortStableFunc(g.order[g.words:], byCount)
}

// terms returns the terms of group gi.
func (g *wordGroups) terms(gi int) (int, int) {
	if gi == 0 {
		return 0, g.ends[0]
	}
	return g.ends[gi-1], g.ends[gi]
}

// matching is how many terms, from the first, can make a document match: the words'.
func (g *wordGroups) matching() int { return g.ends[g.words-1] }

// score is a document's score from the scores of the terms it holds (part, held), and
// whether it matches.
func (g *wordGroups) score(part []float64, held []bool) (float64, bool) {
	must, m := g.disjunction(part, held, 0, g.words)
	if m == 0 {
		return 0, false
	}
	// Bleve's Boolean searcher adds its parts' scores to 0 (ConjunctionQueryScorer).
	score := 0.0
	score += must
	if g.words < len(g.ends) {
		if should, k := g.disjunction(part, held, g.words, len(g.ends)); k > 0 {
			score += should
		}
	}
	return score, true
}

// disjunction scores groups order[from:to] as Bleve's disjunction of their searchers
// does: the sum of the scores of the groups held, times the share of groups held; and
// returns how many are held. A group's score is the sum of its terms' scores, in their
// order, as termsSearcher's.
func (g *wordGroups) disjunction(part []float64, held []bool, from, to int) (float64, int) {
	sum, n := 0.0, 0
	for _, gi := range g.order[from:to] {
		one, any := 0.0, false
		start, end := g.terms(gi)
		for i := start; i < end; i++ {
			if held[i] {
				one += part[i]
				any = true
			}
		}
		if any {
			sum += one
			n++
		}
	}
	return sum * (float64(n) / float64(to-from)), n
}

// norm is the query norm Bleve's Boolean searcher sets on every term of the query: one
// over the root of the sum of the squared weights, summed by searcher as each sums its
// children's.
func (g *wordGroups) norm(scores []termScore) float64 {
	weight := func(from, to int) float64 {
		w := 0.0
		for _, gi := range g.order[from:to] {
			start, end := g.terms(gi)
			one := 0.0
			for _, t := range scores[start:end] {
				x := t.boost * t.idf
				one += x * x
			}
			w += one
		}
		return w
	}
	sum := 0.0
	sum += weight(0, g.words)
	if g.words < len(g.ends) {
		sum += weight(g.words, len(g.ends))
	}
	return 1.0 / math.Sqrt(sum)
}

// plainSentence returns the terms of a sentence's query, as one termsQuery, when Bleve
// would search it as wordGroups describe: a Boolean query with no filter and nothing
// excluded, whose required part is a disjunction of at least one of words alone and
// whose optional part, if any, one of ranking words alone, each with few enough words
// that Bleve sums them in their order (its slice searcher, not its heap).
func plainSentence(q bq.Query) (*termsQuery, *wordGroups) {
	b, ok := q.(*bq.BooleanQuery)
	if !ok || b.MustNot != nil || b.Filter != nil {
		return nil, nil
	}
	var all termsQuery
	g := &wordGroups{}
	add := func(part bq.Query, min float64) bool {
		d, ok := part.(*bq.DisjunctionQuery)
		if !ok || d.Min != min || len(d.Disjuncts) == 0 || len(d.Disjuncts) > bsearcher.DisjunctionHeapTakeover {
			return false
		}
		for _, w := range d.Disjuncts {
			tq, ok := w.(*termsQuery)
			if !ok {
				return false
			}
			all.clauses = append(all.clauses, tq.clauses...)
			all.sat = tq.sat
			g.ends = append(g.ends, len(all.clauses))
		}
		return true
	}
	if !add(b.Must, 1) {
		return nil, nil
	}
	g.words = len(g.ends)
	if b.Should != nil && !add(b.Should, 0) {
		return nil, nil
	}
	return &all, g
}
