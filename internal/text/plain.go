package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isProse reports a paragraph of at least three words (of its plain text, PlainText):
// READMEs open with badges and logos, not with what they are.
func isProse(p string) bool {
	n := 0
	Words([]byte(p), func(Span) bool { n++; return n < 3 })
	return n >= 3
}

// PlainText is the text a reader sees of a line of Markdown: HTML tags, images and
// badges left out, a link's text kept and its target left out. A title such as
// "YAML <a href=…><img src=…/></a>" ranks as "YAML", and a paragraph of badges has no
// words at all.
func PlainText(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '<':
			// an HTML tag or comment: skip to its end
			j := strings.IndexByte(p[i:], '>')
			if j < 0 {
				i = len(p)
				break
			}
			i += j
			b.WriteByte(' ')
		case c == '!' && i+1 < len(p) && p[i+1] == '[':
			// an image, or a badge (an image inside a link): no text of the reader's
			i = skipLinkTail(p, closeBracket(p, i+1))
			b.WriteByte(' ')
		case c == ']':
			// the end of a link's text: skip its target, "(url)" or "[ref]"
			i = skipLinkTail(p, i)
			b.WriteByte(' ')
		case c == '[':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return oneLine(b.String())
}

// closeBracket returns the index of the "]" that closes the "[" at i, counting nested
// brackets, or len(p)-1 when there is none.
func closeBracket(p string, i int) int {
	depth := 0
	for j := i; j < len(p); j++ {
		switch p[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(p) - 1
}

// skipLinkTail returns the index of the last byte of a link's target that follows the
// "]" at i: "(…)" or "[…]", or i when none follows.
func skipLinkTail(p string, i int) int {
	if i+1 >= len(p) {
		return i
	}
	var end byte
	switch p[i+1] {
	case '(':
		end = ')'
	case '[':
		end = ']'
	default:
		return i
	}
	if j := strings.IndexByte(p[i+2:], end); j >= 0 {
		return i + 2 + j
	}
	return i
}

// clipBytes shortens s to at most n bytes on a character boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return strings.TrimSpace(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}

// oneLine is s with its white space, line breaks included, made single spaces between
// words, as strings.Fields joined by spaces is; s itself when that changes nothing.
func oneLine(s string) string {
	if isOneLine(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending := false // white space since the last word
	for i := 0; i < len(s); {
		size, space := spaceAt(s, i)
		switch {
		case space:
			pending = b.Len() > 0
		default:
			if pending {
				b.WriteByte(' ')
				pending = false
			}
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isOneLine reports whether s holds no white space but single spaces between words.
func isOneLine(s string) bool {
	prev := true // white space before, or the start
	for i := 0; i < len(s); {
		size, space := spaceAt(s, i)
		if space && (prev || s[i] != ' ') {
			return false
		}
		prev = space
		i += size
	}
	return !prev || s == ""
}

// spaceAt returns the size of the character at byte i of s, and whether it is white space
// (unicode.IsSpace; a byte that is not UTF-8 is not).
func spaceAt(s string, i int) (int, bool) {
	if c := s[i]; c < utf8.RuneSelf {
		return 1, c == ' ' || c >= '\t' && c <= '\r'
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return size, unicode.IsSpace(r)
}
