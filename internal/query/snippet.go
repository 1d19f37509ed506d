package query

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet sizes, in bytes of the document (about as many characters for Latin text).
const (
	SnippetChars   = 200     // the length of a snippet
	snippetBefore  = 60      // context kept before the first match of the window
	snippetScanMax = 1 << 20 // how much of a document is searched for the best window
)

// Highlight markers around a matching word in a snippet.
const (
	MarkOpen  = "**"
	MarkClose = "**"
)

// Snippet returns about SnippetChars of content around the place where most of the query
// terms occur together, with each matching word marked **like this**, whitespace
// collapsed, and "…" where the text was cut. A word matches when it equals a term with
// case folded, starts with a term's stem (dragons for dragon), or, for CJK terms, holds
// the term. Without any match, it is the beginning of the document.
func Snippet(content []byte, terms, stems []string) string {
	content = clipScan(content)
	return snippetOf(content, terms, wordMatches(content, terms, stems, maxSnippetMatches, nil))
}

// maxSnippetMatches bounds the matches a snippet's window is chosen among.
const maxSnippetMatches = 2000

// clipScan cuts content to the part searched for a snippet's window.
func clipScan(content []byte) []byte {
	if len(content) > snippetScanMax {
		content = content[:snippetScanMax]
		// Drop a rune the cut split in two.
		for len(content) > 0 {
			if r, size := utf8.DecodeLastRune(content); r != utf8.RuneError || size > 1 {
				break
			}
			content = content[:len(content)-1]
		}
	}
	return content
}

// snippetOf is Snippet given the word matches of content.
func snippetOf(content []byte, terms []string, ms []termMatch) string {
	const maxMatches = maxSnippetMatches
	ms = slices.Clip(ms) // CJK matches are appended: never into the caller's array
	// CJK terms are found inside runs of characters, where no word boundary is.
	for i, t := range terms {
		if !hasCJKRune(t) {
			continue
		}
		for off := 0; len(ms) < maxMatches; {
			j := bytes.Index(content[off:], []byte(t))
			if j < 0 {
				break
			}
			ms = append(ms, termMatch{off + j, off + j + len(t), i, true})
			off += j + len(t)
		}
	}
	if len(ms) == 0 {
		return render(content, 0, nil)
	}
	sortMatches(ms)
	// The window with the most distinct terms, then the most matches, earliest first.
	best, bestDistinct, bestCount := 0, 0, 0
	seen := make([]int, len(terms))
	for i := range ms {
		for k := range seen {
			seen[k] = 0
		}
		distinct, count := 0, 0
		for j := i; j < len(ms) && ms[j].end-ms[i].start <= SnippetChars-snippetBefore; j++ {
			if seen[ms[j].term] == 0 {
				distinct++
			}
			seen[ms[j].term]++
			count++
		}
		if distinct > bestDistinct || distinct == bestDistinct && count > bestCount {
			best, bestDistinct, bestCount = i, distinct, count
		}
		if distinct == len(terms) && count > 3 {
			break
		}
	}
	start := max(0, ms[best].start-snippetBefore)
	return render(content, start, ms)
}

func stemMatch(tok []byte, stem string) bool {
	if len(stem) < 3 || len(tok) <= len(stem) || len(tok) > len(stem)+4 {
		return false
	}
	return bytes.EqualFold(tok[:len(stem)], []byte(stem))
}

func hasCJKRune(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

func sortMatches(ms []termMatch) {
	// Insertion sort: matches come almost sorted (CJK ones are appended after).
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].start < ms[j-1].start; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// render writes SnippetChars of content from start, moved to a word boundary, marking
// the matches and collapsing whitespace.
func render(content []byte, start int, ms []termMatch) string {
	// Start at a rune and, when one is near, a word boundary.
	for start > 0 && !utf8.RuneStart(content[start]) {
		start--
	}
	if start > 0 {
		for k := start; k < len(content) && k < start+20; k++ {
			if content[k] == ' ' || content[k] == '\n' || content[k] == '\t' {
				start = k + 1
				break
			}
		}
	}
	end := min(len(content), start+SnippetChars)
	for end < len(content) && !utf8.RuneStart(content[end]) {
		end++
	}
	if end < len(content) {
		for k := end; k > start+SnippetChars/2; k-- {
			if content[k] == ' ' || content[k] == '\n' {
				end = k
				break
			}
		}
	}
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	space := false
	mi := 0
	for mi < len(ms) && ms[mi].start < start {
		mi++
	}
	for i := start; i < end; {
		if mi < len(ms) && ms[mi].start == i && ms[mi].end <= end {
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString(MarkOpen)
			b.Write(content[ms[mi].start:ms[mi].end])
			b.WriteString(MarkClose)
			i = ms[mi].end
			mi++
			for mi < len(ms) && ms[mi].start < i {
				mi++
			}
			continue
		}
		r, size := utf8.DecodeRune(content[i:])
		i += size
		if unicode.IsSpace(r) || r == utf8.RuneError || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if end < len(content) {
		b.WriteString(" …")
	}
	return strings.TrimSpace(b.String())
}
