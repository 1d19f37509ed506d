package index

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guide/guide/internal/text"
)

// Limits of a query: they bound the work one search can ask for.
const (
	MaxQueryChars = 1000 // characters of query text
	MaxQueryTerms = 32   // different uncommon words, and every word inside phrases
	// MaxOptional is how many different common words outside quotes rank a query; those
	// after them are left out, and common words never count against MaxQueryTerms, so
	// that a pasted paragraph is searched rather than refused for its "the" and "of".
	MaxOptional = 8
)

// Errors of ParseQuery. They are the user's to correct.
var (
	ErrEmptyQuery     = errors.New("the query is empty")
	ErrQueryTooLong   = errors.New("the query is too long")
	ErrTooManyTerms   = errors.New("the query has too many words")
	ErrInvalidUTF8    = errors.New("the query is not valid UTF-8")
	ErrNothingToFind  = errors.New("nothing to search for")
	ErrInvalidCursor  = errors.New("the cursor is not valid for this query")
	ErrInvalidRequest = errors.New("invalid search request")
	ErrTooBroad       = errors.New("the query is too broad")
)

// Query is a parsed search: plain words, every one required, and quoted phrases, each
// required as a whole. Words are folded as the index folds them.
type Query struct {
	Words    []string   // required words
	Phrases  [][]string // required phrases of two words or more
	Optional []string   // common words next to others: they rank, but do not filter
	// Pairs are neighbouring words of the text outside quotes, with "" for each common
	// word between them ("data", "", "", "writer" for "data to the writer"): a document
	// where they stand so ranks higher. Derived from the text, so String leaves them out.
	Pairs [][]string
}

// Bounds of the pairs of a query, so that proximity costs a few phrase look-ups at most.
const (
	maxPairs   = 8
	maxPairGap = 2 // common words between the two of a pair
)

// pairs returns the neighbouring uncommon words of words, with the common words between
// them as "" gaps.
func pairs(words []string) [][]string {
	var out [][]string
	for i := 0; i < len(words) && len(out) < maxPairs; i++ {
		if stopWords[words[i]] || text.HasCJK(words[i]) {
			continue
		}
		for j := i + 1; j < len(words) && j-i-1 <= maxPairGap; j++ {
			if stopWords[words[j]] {
				continue
			}
			if !text.HasCJK(words[j]) && words[j] != words[i] {
				p := make([]string, j-i+1)
				p[0], p[len(p)-1] = words[i], words[j]
				out = append(out, p)
			}
			break
		}
	}
	return out
}

// String is the canonical one-line form of the query, for logs, tests and cursors:
// +word for a required word, +"a b" for a phrase, ?word for an optional word.
func (q Query) String() string {
	var parts []string
	for _, w := range q.Words {
		parts = append(parts, "+"+w)
	}
	for _, p := range q.Phrases {
		parts = append(parts, "+"+strconv.Quote(strings.Join(p, " ")))
	}
	for _, w := range q.Optional {
		parts = append(parts, "?"+w)
	}
	return strings.Join(parts, " ")
}

// Terms returns every word of the query, required or not, once each.
func (q Query) Terms() []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, w := range q.Words {
		add(w)
	}
	for _, p := range q.Phrases {
		for _, w := range p {
			add(w)
		}
	}
	for _, w := range q.Optional {
		add(w)
	}
	return out
}

// isQuote reports the characters that open or close a phrase: the ASCII double quote and
// the typographic ones a phone or word processor puts in its place.
func isQuote(r rune) bool {
	switch r {
	case '"', '“', '”', '„', '«', '»':
		return true
	}
	return false
}

// ParseQuery reads the plain-text query language: words separated by anything that is not
// a letter, digit or mark, and "quoted phrases". Nothing else is syntax: + - : ^ ~ * ? ( )
// and the like separate words like spaces do, so no text can fail to parse except by its
// size or encoding. An unclosed quote runs to the end. Common words (the, und, и, …) are
// optional unless quoted; a query of nothing else is refused.
func ParseQuery(s string) (Query, error) {
	var q Query
	if !utf8.ValidString(s) {
		return q, ErrInvalidUTF8
	}
	// JSON transports replace invalid bytes with U+FFFD before the query gets here: it
	// means the client's text was broken, and searching for it would find nothing useful.
	if strings.ContainsRune(s, utf8.RuneError) {
		return q, fmt.Errorf("%w: it holds U+FFFD, the mark of bytes that were not text", ErrInvalidUTF8)
	}
	if n := utf8.RuneCountInString(s); n > MaxQueryChars {
		return q, fmt.Errorf("%w: %d characters, the limit is %d", ErrQueryTooLong, n, MaxQueryChars)
	}
	if strings.TrimSpace(s) == "" {
		return q, ErrEmptyQuery
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
		if n > MaxQueryTerms {
			return Query{}, fmt.Errorf("%w: more than %d different words", ErrTooManyTerms, MaxQueryTerms)
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

// stopWords are words so common in English, German and Russian that, unquoted, they
// would match most of a tree: they rank results, but do not filter them.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, list := range []string{
		// English
		"a an and are as at be but by for from has have i if in into is it its of on or " +
			"that the their there these they this to was were will with " +
			// question words: agents ask in sentences
			"who what where when why how which do does did about",
		// German
		"der die das den dem des ein eine einer eines einem einen und oder ist sind zu im " +
			"in von mit auf für nicht es",
		// Russian
		"и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по " +
			"от из о это",
	} {
		for _, w := range strings.Fields(list) {
			m[w] = true
		}
	}
	return m
}()
