// Package querylang is the search query language: plain words and "quoted phrases",
// nothing else is syntax (Parse), read into a Query with a canonical one-line form
// (Query.String). It knows words and folding (package text), and nothing of the index.
package querylang

import (
	"strconv"
	"strings"

	"github.com/guide/guide/internal/text"
)

// Query is a parsed search: plain words, every one required, and quoted phrases, each
// required as a whole. Words are folded as the index folds them.
type Query struct {
	Words    []string   // required words
	Phrases  [][]string // required phrases of two words or more
	Optional []string   // common words next to others: they rank, but do not filter
	// Pairs are neighbouring words of the text outside quotes, with "" for each common
	// word between them ("data", "", "", "writer" for "data to the writer"): a document
	// where they stand so ranks higher. Derived from the text, so String leaves them out.
	Pairs [][]string
}

// String is the canonical one-line form of the query, for logs, tests and cursors:
// +word for a required word, +"a b" for a phrase, ?word for an optional word.
func (q Query) String() string {
	var parts []string
	for _, w := range q.Words {
		parts = append(parts, "+"+w)
	}
	for _, p := range q.Phrases {
		parts = append(parts, "+"+strconv.Quote(strings.Join(p, " ")))
	}
	for _, w := range q.Optional {
		parts = append(parts, "?"+w)
	}
	return strings.Join(parts, " ")
}

// Terms returns every word of the query, required or not, once each.
func (q Query) Terms() []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, w := range q.Words {
		add(w)
	}
	for _, p := range q.Phrases {
		for _, w := range p {
			add(w)
		}
	}
	for _, w := range q.Optional {
		add(w)
	}
	return out
}

// Bounds of the pairs of a query, so that proximity costs a few phrase look-ups at most.
const (
	maxPairs   = 8
	maxPairGap = 2 // common words between the two of a pair
)

// pairs returns the neighbouring uncommon words of words, with the common words between
// them as "" gaps.
func pairs(words []string) [][]string {
	var out [][]string
	for i := 0; i < len(words) && len(out) < maxPairs; i++ {
		if stopWords[words[i]] || text.HasCJK(words[i]) {
			continue
		}
		for j := i + 1; j < len(words) && j-i-1 <= maxPairGap; j++ {
			if stopWords[words[j]] {
				continue
			}
			if !text.HasCJK(words[j]) && words[j] != words[i] {
				p := make([]string, j-i+1)
				p[0], p[len(p)-1] = words[i], words[j]
				out = append(out, p)
			}
			break
		}
	}
	return out
}
