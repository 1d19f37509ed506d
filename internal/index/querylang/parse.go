package querylang

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/guide/guide/internal/text"
)

// Limits of a query: they bound the work one search can ask for.
const (
	MaxChars = 1000 // characters of query text
	MaxTerms = 32   // different uncommon words, and every word inside phrases
	// MaxOptional is how many different common words outside quotes rank a query; those
	// after them are left out, and common words never count against MaxTerms, so
	// that a pasted paragraph is searched rather than refused for its "the" and "of".
	MaxOptional = 8
)

// Errors of Parse. They are the user's to correct.
var (
	ErrEmpty         = errors.New("the query is empty")
	ErrTooLong       = errors.New("the query is too long")
	ErrTooManyTerms  = errors.New("the query has too many words")
	ErrInvalidUTF8   = errors.New("the query is not valid UTF-8")
	ErrNothingToFind = errors.New("nothing to search for")
)

// isQuote reports the characters that open or close a phrase: the ASCII double quote and
// the typographic ones a phone or word processor puts in its place.
func isQuote(r rune) bool {
	switch r {
	case '"', '“', '”', '„', '«', '»':
		return true
	}
	return false
}

// Parse reads the plain-text query language: words separated by anything that is not
// a letter, digit or mark, and "quoted phrases". Nothing else is syntax: + - : ^ ~ * ? ( )
// and the like separate words like spaces do, so no text can fail to parse except by its
// size or encoding. An unclosed quote runs to the end. Common words (the, und, и, …) are
// optional unless quoted; a query of nothing else is refused.
func Parse(s string) (Query, error) {
	var q Query
	if !utf8.ValidString(s) {
		return q, ErrInvalidUTF8
	}
	// JSON transports replace invalid bytes with U+FFFD before the query gets here: it
	// means the client's text was broken, and searching for it would find nothing useful.
	if strings.ContainsRune(s, utf8.RuneError) {
		return q, fmt.Errorf("%w: it holds U+FFFD, the mark of bytes that were not text", ErrInvalidUTF8)
	}
	if n := utf8.RuneCountInString(s); n > MaxChars {
		return q, fmt.Errorf("%w: %d characters, the limit is %d", ErrTooLong, n, MaxChars)
	}
	if strings.TrimSpace(s) == "" {
		return q, ErrEmpty
	}
	// Split into alternating unquoted and quoted segments.
	var segs []string
	var quoted []bool
	in := false
	start := 0
	for i, r := range s {
		if isQuote(r) {
			segs, quoted = append(segs, s[start:i]), append(quoted, in)
			in = !in
			start = i + utf8.RuneLen(r)
		}
	}
	segs, quoted = append(segs, s[start:]), append(quoted, in)

	seen := map[string]bool{}
	seenPhrase := map[string]bool{}
	var stops []string
	n := 0
	counted := map[string]bool{}
	for i, seg := range segs {
		var words []string
		text.Words([]byte(seg), func(sp text.Span) bool {
			words = append(words, text.FoldString(seg[sp.Start:sp.End]))
			return true
		})
		// Every word of a phrase counts; outside quotes, each different word once, so
		// that a pasted sentence that repeats its words is not refused for them.
		if quoted[i] {
			n += len(words)
		} else {
			for _, w := range words {
				if !counted[w] && !stopWords[w] {
					counted[w] = true
					n++
				}
			}
		}
		if n > MaxTerms {
			return Query{}, fmt.Errorf("%w: more than %d different words", ErrTooManyTerms, MaxTerms)
		}
		if !quoted[i] && len(q.Pairs) < maxPairs {
			q.Pairs = append(q.Pairs, pairs(words)...)
			q.Pairs = q.Pairs[:min(len(q.Pairs), maxPairs)]
		}
		if quoted[i] && len(words) > 1 {
			if k := strings.Join(words, " "); !seenPhrase[k] {
				seenPhrase[k] = true
				q.Phrases = append(q.Phrases, words)
			}
			continue
		}
		for _, w := range words {
			if seen[w] {
				continue
			}
			seen[w] = true
			if !quoted[i] && stopWords[w] {
				stops = append(stops, w)
				continue
			}
			q.Words = append(q.Words, w)
		}
	}
	if len(q.Words) == 0 && len(q.Phrases) == 0 {
		if len(stops) > 0 {
			return Query{}, fmt.Errorf("%w: %q has only common words; quote them to search for them anyway, as in \"%s\"",
				ErrNothingToFind, s, strings.Join(stops, " "))
		}
		return Query{}, fmt.Errorf("%w: %q has no letters or digits", ErrNothingToFind, s)
	}
	q.Optional = stops[:min(len(stops), MaxOptional)]
	return q, nil
}
