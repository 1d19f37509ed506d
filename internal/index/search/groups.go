package search

import (
	"cmp"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bsearcher "github.com/blevesearch/bleve/v2/search/searcher"
)

// wordGroups are the terms of a query of several words (build) in one termsSearcher:
// each word's terms, the words first and the ranking words after, ends[g] one past the
// last term of group g. Bleve would search it as a Boolean query whose required part is
// the disjunction of the words (a sentence: at least one) or their conjunction (all), and
// whose optional part is the disjunction of the ranking words, each word a termsQuery;
// score gives a document the score that query gives it, the same floating-point
// operations in the same order, so that the pages of the direct collection and those of
// Bleve's are the same.
type wordGroups struct {
	ends  []int
	words int // how many groups are the query's words; the rest rank only
	// all is set when every word is required: the words are a conjunction (or one
	// word), scored as the sum of their scores.
	all bool
	// order is the groups in the order Bleve's disjunctions hold their searchers, which
	// is the order their scores and weights are summed in: the words, then the ranking
	// words, each by how many postings they have (sort.Sort of fewer than 12 searchers is
	// an insertion sort, which keeps ties in place).
	order []int
	word  docSet // count's, for a word's documents in a segment
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
	if m == 0 || g.all && m < g.words {
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
	if g.all && from == 0 {
		return sum, n // a conjunction's score: the sum alone
	}
	return sum * (float64(n) / float64(to-from)), n
}

// count returns how many documents of a segment match, from its terms' postings (bitmaps,
// or a term's one document in ones): those holding a term of some word, or of every word
// for a conjunction.
func (g *wordGroups) count(bitmaps []*roaring.Bitmap, ones []oneHit, union *docSet, docs uint64) uint64 {
	union.reset(docs)
	if !g.all {
		unionOf(union, bitmaps, ones, 0, g.matching())
		return union.count()
	}
	for gi := range g.words {
		start, end := g.terms(gi)
		if gi == 0 {
			unionOf(union, bitmaps, ones, start, end)
			continue
		}
		g.word.reset(docs)
		unionOf(&g.word, bitmaps, ones, start, end)
		union.and(&g.word)
	}
	return union.count()
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

// sortInPlace is how many searchers sort.Sort orders by insertion, keeping ties in place
// (a conjunction's children: Bleve's conjunction sorts them so).
const sortInPlace = 12

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
		var words []bq.Query
		switch d := part.(type) {
		case *bq.DisjunctionQuery:
			if d.Min != min || len(d.Disjuncts) == 0 || len(d.Disjuncts) > bsearcher.DisjunctionHeapTakeover {
				return false
			}
			words = d.Disjuncts
		case *bq.ConjunctionQuery: // every word required: min is 1 here, as a word's own
			if min != 1 || len(d.Conjuncts) == 0 || len(d.Conjuncts) > sortInPlace {
				return false
			}
			words, g.all = d.Conjuncts, true
		case *termsQuery: // one word, required
			if min != 1 {
				return false
			}
			words, g.all = []bq.Query{d}, true
		default:
			return false
		}
		for _, w := range words {
			tq, ok := w.(*termsQuery)
			if !ok {
				return false
			}
			all.clauses = append(all.clauses, tq.clauses...)
			all.sat, all.counts, all.part = tq.sat, tq.counts, tq.part
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
