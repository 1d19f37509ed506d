package query

import (
	"bytes"
	"unicode/utf8"

	"github.com/guide/guide/internal/index"
)

// HitSection is the part of a document a search hit matches best: the heading it starts
// at, and the character offset of that heading, so that view(path, offset) opens there.
type HitSection struct {
	Heading string `json:"heading"`
	Level   int    `json:"level"`
	Offset  int    `json:"offset"`
}

// bestSection finds the section of a Markdown document that matches the query's terms
// best — most distinct terms, in its heading or its text, then most neighbouring terms
// as the query has them, then most matches — and returns it with its byte range. A
// document without headings has no sections: ok is false.
func bestSection(content []byte, terms, stems []string, pairs map[[2]string]bool) (sec HitSection, start, end int, ok bool) {
	_, secs := index.ParseMarkdown(content)
	if len(secs) < 2 && (len(secs) == 0 || secs[0].Level == 0) {
		return sec, 0, len(content), false
	}
	best, bestScore := -1, -1
	for i, s := range secs {
		e := len(content)
		if i+1 < len(secs) {
			e = secs[i+1].Start
		}
		if sc := sectionScore(content[s.Start:e], terms, stems, pairs); sc > bestScore {
			best, bestScore = i, sc
		}
	}
	s := secs[best]
	end = len(content)
	if best+1 < len(secs) {
		end = secs[best+1].Start
	}
	return HitSection{Heading: s.Heading, Level: s.Level, Offset: utf8.RuneCount(content[:s.Start])}, s.Start, end, true
}

// sectionScore weighs one section's matches of the query terms.
func sectionScore(text []byte, terms, stems []string, pairs map[[2]string]bool) int {
	seen := make([]bool, len(terms))
	distinct, count, near := 0, 0, 0
	prevTok := ""
	index.Words(text, func(s index.Span) bool {
		tok := text[s.Start:s.End]
		// Folding every word of the text is most of the cost; a query of one word has no
		// pairs to look for.
		if len(pairs) > 0 {
			folded := index.FoldString(string(tok))
			if pairs[[2]string{prevTok, folded}] {
				near++
			}
			prevTok = folded
		}
		hit := -1
		for i, t := range terms {
			if bytes.EqualFold(tok, []byte(t)) || stemMatch(tok, stems[i]) {
				hit = i
				break
			}
		}
		if hit >= 0 {
			count++
			if !seen[hit] {
				seen[hit] = true
				distinct++
			}
		}
		return true
	})
	return distinct*1000 + min(near, 50)*10 + min(count, 9)
}

// queryPairs are the neighbouring words of a query's text, folded.
func queryPairs(q string) map[[2]string]bool {
	out := map[[2]string]bool{}
	prev := ""
	index.Words([]byte(q), func(s index.Span) bool {
		w := index.FoldString(q[s.Start:s.End])
		if prev != "" {
			out[[2]string{prev, w}] = true
		}
		prev = w
		return true
	})
	return out
}
