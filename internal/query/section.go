package query

import (
	"unicode/utf8"

	"github.com/guide/guide/internal/text"
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
// as the query has them, then most matches — and returns it with its byte range. ms are
// the document's word matches (wordMatches). A document without headings has no
// sections: ok is false.
func bestSection(content []byte, ms []termMatch, nterms int, pairs map[[2]string]bool) (sec HitSection, start, end int, ok bool) {
	secs := text.Sections(content)
	if len(secs) < 2 && (len(secs) == 0 || secs[0].Level == 0) {
		return sec, 0, len(content), false
	}
	best, bestScore := -1, -1
	seen := make([]bool, nterms)
	m := 0
	for i, s := range secs {
		e := len(content)
		if i+1 < len(secs) {
			e = secs[i+1].Start
		}
		for m < len(ms) && ms[m].start < s.Start {
			m++
		}
		k := m
		for k < len(ms) && ms[k].start < e {
			k++
		}
		if sc := sectionScore(content, ms[m:k], seen, pairs); sc > bestScore {
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

// sectionScore weighs one section's matches of the query terms: seen is scratch space,
// one flag a term.
func sectionScore(content []byte, ms []termMatch, seen []bool, pairs map[[2]string]bool) int {
	clear(seen)
	distinct, near := 0, 0
	for i, m := range ms {
		if !seen[m.term] {
			seen[m.term] = true
			distinct++
		}
		// Two words of the query next to each other, as the query has them: only matched
		// words can be, and only when nothing but spaces and punctuation parts them.
		if i > 0 && len(pairs) > 0 && near < 50 {
			p := ms[i-1]
			if p.end <= m.start && !hasWord(content[p.end:m.start]) &&
				pairs[[2]string{text.FoldString(string(content[p.start:p.end])), text.FoldString(string(content[m.start:m.end]))}] {
				near++
			}
		}
	}
	return distinct*1000 + min(near, 50)*10 + min(len(ms), 9)
}

// hasWord reports whether b holds a word character.
func hasWord(b []byte) bool {
	found := false
	text.Words(b, func(text.Span) bool { found = true; return false })
	return found
}

// queryPairs are the neighbouring words of a query's text, folded.
func queryPairs(q string) map[[2]string]bool {
	out := map[[2]string]bool{}
	prev := ""
	text.Words([]byte(q), func(s text.Span) bool {
		w := text.FoldString(q[s.Start:s.End])
		if prev != "" {
			out[[2]string{prev, w}] = true
		}
		prev = w
		return true
	})
	return out
}
