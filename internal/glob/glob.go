// Package glob matches slash-separated relative paths against the glob patterns of the
// content tools: `*` (any run within one path segment), `**` (any run across segments;
// as a whole segment, zero or more folders), `?` (one character of a segment), `[abc]`,
// `[a-z]` and `[!abc]` (one character of a set), and `\` to escape the next character.
package glob

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxLen bounds a pattern, so that matching stays cheap.
const MaxLen = 1024

// ErrSyntax is wrapped by every error of Compile.
var ErrSyntax = errors.New("invalid pattern")

type kind uint8

const (
	lit     kind = iota // one literal rune
	any1                // ?
	star                // *
	star2               // ** within a segment: crosses '/'
	class               // [...]
	globdir             // "**/" as a whole segment: matches nothing itself, and either skips the star2 and '/' that follow it, or enters them
)

type token struct {
	kind   kind
	r      rune
	ranges []rune // class: lo, hi pairs
	negate bool
}

// Matcher matches a path, or one path segment, against a compiled pattern.
type Matcher struct {
	src    string
	tokens []token
	meta   bool   // any wildcard at all
	lit    string // the unescaped text, when there is no wildcard
}

// String returns the source of the pattern.
func (m *Matcher) String() string { return m.src }

// Literal reports whether the pattern has no wildcard, and its unescaped text.
func (m *Matcher) Literal() (string, bool) {
	return m.lit, !m.meta
}

// Compile parses a pattern.
func Compile(pattern string) (*Matcher, error) {
	if len(pattern) > MaxLen {
		return nil, fmt.Errorf("%w: %d bytes long; the limit is %d", ErrSyntax, len(pattern), MaxLen)
	}
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrSyntax)
	}
	m := &Matcher{src: pattern}
	for i := 0; i < len(pattern); {
		r, size := utf8.DecodeRuneInString(pattern[i:])
		switch r {
		case 0:
			return nil, fmt.Errorf("%w: NUL byte at offset %d", ErrSyntax, i)
		case '\\':
			if i+1 >= len(pattern) {
				return nil, fmt.Errorf("%w: trailing backslash", ErrSyntax)
			}
			r2, s2 := utf8.DecodeRuneInString(pattern[i+1:])
			m.tokens = append(m.tokens, token{kind: lit, r: r2})
			i += 1 + s2
			continue
		case '?':
			m.tokens = append(m.tokens, token{kind: any1})
			m.meta = true
		case '*':
			m.meta = true
			if i+1 < len(pattern) && pattern[i+1] == '*' {
				j := i + 2
				for j < len(pattern) && pattern[j] == '*' {
					j++ // "***" is "**"
				}
				atStart := i == 0 || pattern[i-1] == '/'
				if atStart && j < len(pattern) && pattern[j] == '/' {
					// "" or any run of whole folders: globdir, star2, '/'.
					m.tokens = append(m.tokens, token{kind: globdir}, token{kind: star2}, token{kind: lit, r: '/'})
					i = j + 1
					continue
				}
				m.tokens = append(m.tokens, token{kind: star2})
				i = j
				continue
			}
			m.tokens = append(m.tokens, token{kind: star})
		case '[':
			t, n, err := parseClass(pattern[i:])
			if err != nil {
				return nil, fmt.Errorf("%w: %v at offset %d", ErrSyntax, err, i)
			}
			m.tokens = append(m.tokens, t)
			m.meta = true
			i += n
			continue
		case ']':
			return nil, fmt.Errorf("%w: ']' without '[' at offset %d", ErrSyntax, i)
		default:
			m.tokens = append(m.tokens, token{kind: lit, r: r})
		}
		i += size
	}
	if !m.meta {
		var b strings.Builder
		for _, t := range m.tokens {
			b.WriteRune(t.r)
		}
		m.lit = b.String()
	}
	return m, nil
}

// parseClass reads "[...]" at the start of s and returns its length.
func parseClass(s string) (token, int, error) {
	t := token{kind: class}
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		t.negate = true
		i++
	}
	first := true
	for {
		if i >= len(s) {
			return t, 0, errors.New("'[' without ']'")
		}
		if s[i] == ']' && !first {
			i++
			break
		}
		first = false
		lo, n, err := classRune(s[i:])
		if err != nil {
			return t, 0, err
		}
		i += n
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			var m int
			if hi, m, err = classRune(s[i+1:]); err != nil {
				return t, 0, err
			}
			if hi < lo {
				return t, 0, fmt.Errorf("range %c-%c is backwards", lo, hi)
			}
			i += 1 + m
		}
		if lo == '/' || hi >= '/' && lo <= '/' {
			return t, 0, errors.New("'/' cannot be in a character class")
		}
		t.ranges = append(t.ranges, lo, hi)
	}
	return t, i, nil
}

func classRune(s string) (rune, int, error) {
	if s[0] == '\\' {
		if len(s) < 2 {
			return 0, 0, errors.New("'[' without ']'")
		}
		r, n := utf8.DecodeRuneInString(s[1:])
		return r, 1 + n, nil
	}
	r, n := utf8.DecodeRuneInString(s)
	return r, n, nil
}

func (t *token) inClass(r rune) bool {
	in := false
	for i := 0; i < len(t.ranges); i += 2 {
		if r >= t.ranges[i] && r <= t.ranges[i+1] {
			in = true
			break
		}
	}
	return in != t.negate
}

// Match reports whether the whole of name matches. It runs in time proportional to the
// pattern's length times the name's, whatever the pattern.
func (m *Matcher) Match(name string) bool {
	if !m.meta {
		return m.lit == name
	}
	// cur[i]: the first i tokens can match the name up to the current position.
	n := len(m.tokens)
	cur := make([]bool, n+1)
	next := make([]bool, n+1)
	cur[0] = true
	// closure adds the states reachable without consuming a rune; every such edge goes
	// forward, so one pass in order suffices.
	closure := func(st []bool) {
		for i := 0; i < n; i++ {
			if !st[i] {
				continue
			}
			switch m.tokens[i].kind {
			case star, star2:
				st[i+1] = true
			case globdir:
				st[i+1] = true
				st[i+3] = true
			}
		}
	}
	closure(cur)
	for pos := 0; pos < len(name); {
		r, size := utf8.DecodeRuneInString(name[pos:])
		clear(next)
		alive := false
		for i := 0; i < n; i++ {
			if !cur[i] {
				continue
			}
			t := &m.tokens[i]
			ok := false
			switch t.kind {
			case lit:
				ok = t.r == r
			case any1:
				ok = r != '/'
			case class:
				ok = r != '/' && t.inClass(r)
			case star:
				if r != '/' {
					next[i], alive = true, true
				}
			case star2:
				next[i], alive = true, true
			}
			if ok {
				next[i+1], alive = true, true
			}
		}
		if !alive {
			return false
		}
		closure(next)
		cur, next = next, cur
		pos += size
	}
	return cur[n]
}
