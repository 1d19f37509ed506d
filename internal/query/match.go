package query

import (
	"bytes"
	"slices"
	"unicode/utf8"

	"github.com/guide/guide/internal/index"
)

// termMatch is a word of a document that matches a term of the query: its byte range,
// the term's index, and whether the word is the term itself (not another form of it).
type termMatch struct {
	start, end, term int
	exact            bool
}

// wordMatches returns the words of content that match the query's terms — a word equal to
// a term with case folded, or one that starts with a term's stem (stemMatch) — each word
// once, for the first term it matches, in order of the text, at most max of them. Words
// are split as the index splits them (index.Words).
//
// Hit text reads every word of up to twenty documents a search: for ASCII terms the
// words are found by looking for the terms themselves in a lower-cased copy of the text,
// and only the places found are read as words, which is many times faster than splitting
// the whole text. Both ways give the same words (TestWordMatchesAgree).
//
// lower, when set, is memory for the lower-cased copy, used again by the next call.
func wordMatches(content []byte, terms, stems []string, max int, lower *[]byte) []termMatch {
	if ms, ok := asciiWordMatches(content, terms, stems, max, lower); ok {
		return ms
	}
	return splitWordMatches(content, terms, stems, max)
}

// splitWordMatches splits the whole text into words and compares each with the terms.
func splitWordMatches(content []byte, terms, stems []string, max int) []termMatch {
	var ms []termMatch
	index.Words(content, func(s index.Span) bool {
		tok := content[s.Start:s.End]
		for i, t := range terms {
			exact := bytes.EqualFold(tok, []byte(t))
			if exact || stemMatch(tok, stems[i]) {
				ms = append(ms, termMatch{s.Start, s.End, i, exact})
				break
			}
		}
		return len(ms) < max
	})
	return ms
}

// foldsToASCII are the two characters outside ASCII that case folding equates with ASCII
// letters: the Kelvin sign (k) and the long s (s). A text holding either is split word by
// word.
var foldsToASCII = [][]byte{[]byte("\u212a"), []byte("\u017f")}

// asciiWordMatches finds the matches of terms and stems that are all ASCII; ok is false
// when they are not, or when the text holds a character that folds to an ASCII letter.
func asciiWordMatches(content []byte, terms, stems []string, max int, scratch *[]byte) (ms []termMatch, ok bool) {
	needles := make([][]byte, len(terms))
	for i, t := range terms {
		if !isASCII(t) || !isASCII(stems[i]) || t == "" {
			return nil, false
		}
		// Every word a term matches starts with the term, or with its stem when the
		// stem is long enough to match (stemMatch): look for what both start with.
		n := []byte(lowerASCII(t))
		if s := lowerASCII(stems[i]); len(s) >= 3 {
			k := 0
			for k < len(n) && k < len(s) && n[k] == s[k] {
				k++
			}
			n = n[:k]
		}
		if len(n) == 0 || !allWord(n) {
			return nil, false // no word starts with it
		}
		needles[i] = n
	}
	for _, c := range foldsToASCII {
		if bytes.Contains(content, c) {
			return nil, false
		}
	}
	var lower []byte
	if scratch != nil && cap(*scratch) >= len(content) {
		lower = (*scratch)[:len(content)]
	} else {
		lower = make([]byte, len(content))
		if scratch != nil {
			*scratch = lower
		}
	}
	for i, c := range content {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for i, n := range needles {
		found := 0
		for off := 0; off < len(lower) && found < max; {
			j := bytes.Index(lower[off:], n)
			if j < 0 {
				break
			}
			p := off + j
			if p > 0 && wordBefore(content, p) {
				off = p + 1
				continue
			}
			e := wordEnd(content, p+len(n))
			off = e
			tok := content[p:e]
			exact := bytes.EqualFold(tok, []byte(terms[i]))
			if exact || stemMatch(tok, stems[i]) {
				ms = append(ms, termMatch{p, e, i, exact})
				found++
			}
		}
	}
	// In order of the text; a word two terms match is the first term's.
	slices.SortFunc(ms, func(a, b termMatch) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.term - b.term
	})
	ms = slices.CompactFunc(ms, func(a, b termMatch) bool { return a.start == b.start })
	if len(ms) > max {
		ms = ms[:max]
	}
	return ms, true
}

// wordBefore reports whether the character before byte p of b is a word character.
func wordBefore(b []byte, p int) bool {
	if c := b[p-1]; c < utf8.RuneSelf {
		return asciiWordByte[c]
	}
	r, _ := utf8.DecodeLastRune(b[:p])
	return r != utf8.RuneError && index.IsWordRune(r)
}

// wordEnd returns where the word that goes on at byte p of b ends.
func wordEnd(b []byte, p int) int {
	for p < len(b) {
		if c := b[p]; c < utf8.RuneSelf {
			if !asciiWordByte[c] {
				return p
			}
			p++
			continue
		}
		r, size := utf8.DecodeRune(b[p:])
		if r == utf8.RuneError || !index.IsWordRune(r) {
			return p
		}
		p += size
	}
	return p
}

var asciiWordByte = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = index.IsWordRune(rune(c))
	}
	return t
}()

func allWord(b []byte) bool {
	for _, c := range b {
		if !asciiWordByte[c] {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
