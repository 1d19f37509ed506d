package text

import (
	"strings"
	"unicode/utf8"
)

// isProse reports a paragraph of at least three words (of its plain text): READMEs open
// with badges and logos, not with what they are.
func isProse(p string) bool {
	n := 0
	Words([]byte(p), func(Span) bool { n++; return n < 3 })
	return n >= 3
}

// plainText is the text a reader sees of a line of Markdown: HTML tags, images and
// badges left out, a link's text kept and its target left out. A title such as
// "YAML <a href=…><img src=…/></a>" ranks as "YAML", and a paragraph of badges has no
// words at all.
func plainText(p string) string {
	var b strings.Builder
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
	return strings.Join(strings.Fields(b.String()), " ")
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
