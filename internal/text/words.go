// Package text is the one definition of what the project reads in a document's bytes: a
// word (as a search matches it, and as a reader counts it), a folded word, the scripts
// written without spaces, and a Markdown document's title, lead paragraph, headings,
// sections and front matter. The catalog, the full-text index, the query language and the
// hit texts all read through it; it knows nothing of events, storage or Bleve.
package text

import (
	"unicode"
	"unicode/utf8"
)

// IsWordRune reports whether r is a word character as ripgrep's Unicode \w defines it:
// alphabetic, a mark, a decimal digit, connector punctuation (the underscore), or a
// joiner. Everything else separates words.
func IsWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) ||
		unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) ||
		r == 0x200C || r == 0x200D
}

// IsWordByte reports whether the byte c is an ASCII word character (IsWordRune), by a
// table: ASCII is most of most texts. A byte of a multi-byte character is not one.
func IsWordByte(c byte) bool { return c < utf8.RuneSelf && asciiWord[c] }

// asciiWord marks the ASCII word characters.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = IsWordRune(rune(c))
	}
	return t
}()

// Span is one word of a text: its byte range.
type Span struct{ Start, End int }

// Words splits b into words as a search matches them: runs of word characters
// (IsWordRune), which is where ripgrep's -w sees a word boundary. Invalid UTF-8
// separates words.
func Words(b []byte, fn func(Span) bool) {
	start := -1
	for i := 0; i < len(b); {
		// ASCII, most of most texts, by a table; other characters decoded.
		word, size := false, 1
		if c := b[i]; c < utf8.RuneSelf {
			word = asciiWord[c]
		} else {
			var r rune
			r, size = utf8.DecodeRune(b[i:])
			word = r != utf8.RuneError && IsWordRune(r)
		}
		if word {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			if !fn(Span{start, i}) {
				return
			}
			start = -1
		}
		i += size
	}
	if start >= 0 {
		fn(Span{start, len(b)})
	}
}

// CountWords counts the words Words splits s into, without a call per word.
func CountWords(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); {
		var w bool
		if c := s[i]; c < utf8.RuneSelf {
			w = asciiWord[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			w = r != utf8.RuneError && IsWordRune(r)
			i += size
		}
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// The classes of ASCII bytes for ReaderWords: a letter or digit, a character that may
// join two words into one, anything else.
const (
	readerOther = iota
	readerWord
	readerJoin
)

var readerClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			t[c] = readerWord
		case c == '\'' || c == '-':
			t[c] = readerJoin
		}
	}
	return t
}()

// ReaderWords counts the words of b as a reader would, for the length a listing shows:
// runs of letters and digits (with inner apostrophes and hyphens, so that "don't" and
// "well-known" are one word each), and each Han, Hiragana or Katakana character as a word
// of its own, since those scripts do not separate words by spaces. It is not how a search
// splits words (Words): that follows ripgrep, so that the index finds what `rg -w` finds.
func ReaderWords(b []byte) int {
	n := 0
	in := false
	for len(b) > 0 {
		// ASCII, most of most documents, a run at a time through a table, without the
		// Unicode table look-ups below: the same rules.
		if b[0] < utf8.RuneSelf {
			var w uint8 // in, as 0 or 1
			if in {
				w = 1
			}
			i := 0
			for ; i < len(b) && b[i] < utf8.RuneSelf; i++ {
				c := readerClass[b[i]]
				if c == readerJoin {
					// Keep "don't" and "well-known" one word when a letter follows.
					c = readerOther
					if w == 1 && i+1 < len(b) {
						if next, _ := utf8.DecodeRune(b[i+1:]); unicode.IsLetter(next) || unicode.IsDigit(next) {
							continue // still in the word
						}
					}
				}
				n += int(c &^ w) // a word starts
				w = c
			}
			in = w == 1
			b = b[i:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			n++
			in = false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if !in {
				n++
				in = true
			}
		case in && (r == '\'' || r == '’' || r == '-') && len(b) > 0:
			// Keep "don't" and "well-known" one word when a letter follows.
			next, _ := utf8.DecodeRune(b)
			in = unicode.IsLetter(next) || unicode.IsDigit(next)
		default:
			in = false
		}
	}
	return n
}
