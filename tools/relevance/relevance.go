// Package relevance measures how well search ranks on known-item sets built from public
// text: each query is a piece of text written about one document (an npm package's
// description for its README, a Go function's doc sentence for its package's page), and
// that document is the answer. guide is scored through the query layer's search, as the
// MCP search tool answers; SQLite FTS5's BM25 is scored on the same documents and queries.
package relevance

import (
	"math"
	"slices"
)

// Set is one known-item set: documents by path, and queries each with its one answer.
type Set struct {
	Name    string            `json:"name"`
	About   string            `json:"about"`
	Docs    map[string]string `json:"-"`
	Queries []Query           `json:"queries"`
}

// Query is one known-item query: the text searched and the path of the document it is
// about. Section, when known, is the heading of the part of the document it is about.
type Query struct {
	Text    string `json:"query"`
	Answer  string `json:"answer"`
	Section string `json:"section,omitempty"`
}

// Depth is how many hits are ranked per query: MRR and recall are "at 10".
const Depth = 10

// Scores are the figures of one engine on one set. Recall@k is the share of queries whose
// answer ranks in the first k; MRR@10 the mean of 1/rank of the answer (0 past rank 10).
type Scores struct {
	RecallAt1  float64 `json:"recall@1"`
	RecallAt10 float64 `json:"recall@10"`
	MRR        float64 `json:"mrr@10"`
}

// Score computes the figures from the ranked paths of every query, in query order.
func Score(qs []Query, ranked [][]string) Scores {
	var s Scores
	for i, q := range qs {
		r := slices.Index(ranked[i], q.Answer) + 1
		if r == 1 {
			s.RecallAt1++
		}
		if r >= 1 && r <= Depth {
			s.RecallAt10++
			s.MRR += 1 / float64(r)
		}
	}
	n := float64(max(1, len(qs)))
	return Scores{RecallAt1: round(s.RecallAt1 / n), RecallAt10: round(s.RecallAt10 / n), MRR: round(s.MRR / n)}
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }

// Figures are the committed result of one run: per set, guide beside FTS5.
type Figures struct {
	Sets []SetFigures `json:"sets"`
}

// SetFigures are one set's figures.
type SetFigures struct {
	Name    string  `json:"name"`
	About   string  `json:"about"`
	Docs    int     `json:"docs"`
	Queries int     `json:"queries"`
	Guide   Scores  `json:"guide"`
	FTS5    *Scores `json:"fts5,omitempty"` // absent when python3's sqlite3 has no FTS5
	// Sections is the share of queries with a known section whose answer's hit named it.
	Sections *float64 `json:"sections,omitempty"`
}
