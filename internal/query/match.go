package query

import (
	"bytes"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/guide/guide/internal/text"
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
// are split as the index splits them (text.Words).
//
// Hit text reads every word of up to twenty documents a search: the words are found by
// looking for the terms themselves in a case-folded copy of the text, and only the places
// found are read as words, which is several times faster than splitting the whole text,
// whatever its script. Both ways give the same words (TestWordMatchesAgree).
//
// lower, when set, is memory for the folded copy, used again by the next call.
func wordMatches(content []byte, terms, stems []string, max int, lower *[]byte) []termMatch {
	if ms, ok := foldedWordMatches(content, terms, stems, max, lower); ok {
		return ms
	}
	return splitWordMatches(content, terms, stems, max)
}

// splitWordMatches splits the whole text into words and compares each with the terms.
func splitWordMatches(content []byte, terms, stems []string, max int) []termMatch {
	var ms []termMatch
	text.Words(content, func(s text.Span) bool {
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

// foldedWordMatches finds the matches of terms and stems by looking for what each match
// starts with in a case-folded copy of the text, of the same length: when every term is
// ASCII, with its ASCII letters lower-cased; otherwise with every character folded as the
// index folds it (text.FoldRune). ok is false when no word can start with a term (it
// holds other characters), or when the text holds a character whose folded form is of
// another length (the Kelvin sign, the long s): such a text is split into words.
func foldedWordMatches(content []byte, terms, stems []string, max int, scratch *[]byte) (ms []termMatch, ok bool) {
	needles := make([][]byte, len(terms))
	ascii := true
	for i, t := range terms {
		if t == "" {
			return nil, false
		}
		// Every word a term matches starts with the term, or with its stem when the
		// stem is long enough to match (stemMatch): look for what both start with.
		n := text.Fold([]byte(t))
		if len(stems[i]) >= 3 {
			s := text.Fold([]byte(stems[i]))
			if len(s) != len(stems[i]) {
				return nil, false // stemMatch compares a word's first len(stem) bytes
			}
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
		ascii = ascii && isASCII(string(n))
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
	if ascii {
		for _, c := range foldsToASCII {
			if bytes.Contains(content, c) {
				return nil, false
			}
		}
		for i, c := range content {
			lower[i] = lowerByte(c)
		}
	} else if !foldInto(lower, content) {
		return nil, false
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
		return text.IsWordByte(c)
	}
	r, _ := utf8.DecodeLastRune(b[:p])
	return r != utf8.RuneError && text.IsWordRune(r)
}

// wordEnd returns where the word that goes on at byte p of b ends.
func wordEnd(b []byte, p int) int {
	for p < len(b) {
		if c := b[p]; c < utf8.RuneSelf {
			if !text.IsWordByte(c) {
				return p
			}
			p++
			continue
		}
		r, size := utf8.DecodeRune(b[p:])
		if r == utf8.RuneError || !text.IsWordRune(r) {
			return p
		}
		p += size
	}
	return p
}

func allWord(b []byte) bool {
	for len(b) > 0 {
		if c := b[0]; c < utf8.RuneSelf {
			if !text.IsWordByte(c) {
				return false
			}
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError || !text.IsWordRune(r) {
			return false
		}
		b = b[size:]
	}
	return true
}

// foldInto writes content into dst, of the same length, with every character folded as
// the index folds it; bytes that are not UTF-8 are copied as they are. It reports false
// when a character's folded form is of another length.
func foldInto(dst, content []byte) bool {
	table := foldTable()
	for i := 0; i < len(content); {
		c := content[i]
		if c < utf8.RuneSelf {
			dst[i] = lowerByte(c)
			i++
			continue
		}
		var r rune
		var size int
		if c >= 0xc2 && c < 0xe0 && i+1 < len(content) && content[i+1]&0xc0 == 0x80 {
			r, size = rune(c&0x1f)<<6|rune(content[i+1]&0x3f), 2 // two bytes: Latin, Greek, Cyrillic
		} else if r, size = utf8.DecodeRune(content[i:]); r == utf8.RuneError && size == 1 {
			dst[i] = c
			i++
			continue
		}
		f := r
		if r < foldTableSize {
			f = table[r]
		} else {
			f = text.FoldRune(r)
		}
		switch {
		case f == r:
			copy(dst[i:i+size], content[i:i+size])
		case utf8.RuneLen(f) != size:
			return false
		default:
			utf8.EncodeRune(dst[i:], f)
		}
		i += size
	}
	return true
}

// lowerByte is an ASCII byte lower-cased; every other byte as it is.
func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldTable holds text.FoldRune of the characters below U+3000 (Latin, Greek, Cyrillic
// and the others of two-byte UTF-8, and most of three-byte): folding searches Unicode's
// tables, several times the cost of the rest of the copy.
const foldTableSize = 0x3000

var foldTable = sync.OnceValue(func() *[foldTableSize]rune {
	var t [foldTableSize]rune
	for r := range t {
		t[r] = text.FoldRune(rune(r))
	}
	return &t
})

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
