package index

import (
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/text"
)

// The tokenizers and token filters of the analyzers the schema names (schema.AnalyzerWord
// and the others), registered with Bleve under these names.
const (
	filterParts   = "guide_camel_parts"
	tokenizerWord = "guide_word"
	tokenizerCJK  = "guide_cjk_bigram"
	filterFold    = "guide_fold"
)

func init() {
	registry.RegisterTokenizer(tokenizerWord, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return wordTokenizer{}, nil
	})
	registry.RegisterTokenizer(tokenizerCJK, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return cjkTokenizer{}, nil
	})
	registry.RegisterTokenFilter(filterFold, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return foldFilter{}, nil
	})
	registry.RegisterTokenFilter(filterParts, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return camelParts{}, nil
	})
}

func addAnalyzers(m *mapping.IndexMappingImpl) error {
	if err := m.AddCustomAnalyzer(schema.AnalyzerWord, map[string]any{
		"type":          custom.Name,
		"tokenizer":     tokenizerWord,
		"token_filters": []any{filterFold},
	}); err != nil {
		return err
	}
	if err := m.AddCustomAnalyzer(schema.AnalyzerCJK, map[string]any{
		"type":      custom.Name,
		"tokenizer": tokenizerCJK,
	}); err != nil {
		return err
	}
	if err := m.AddCustomAnalyzer(schema.AnalyzerParts, map[string]any{
		"type":          custom.Name,
		"tokenizer":     tokenizerWord,
		"token_filters": []any{filterParts, filterFold, porter.Name},
	}); err != nil {
		return err
	}
	return m.AddCustomAnalyzer(schema.AnalyzerStem, map[string]any{
		"type":          custom.Name,
		"tokenizer":     tokenizerWord,
		"token_filters": []any{filterFold, porter.Name},
	})
}

// The tokenizers give each token its position and no byte offsets, as wordField does: the
// fields with term vectors keep a location per occurrence, read for phrases and proximity
// by position only (a hit's matches and sections are found again in its text), and an
// offset pair would be two varints more in each of them on disk and in every merge. (The
// text fields are analyzed by wordField; the word tokenizer runs for a query's words and
// for the tests that hold wordField to Bleve's analysis.)

type wordTokenizer struct{}

func (wordTokenizer) Tokenize(b []byte) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, len(b)/6+1)
	text.Words(b, func(s text.Span) bool {
		out = append(out, &analysis.Token{Term: b[s.Start:s.End], Position: len(out) + 1, Type: analysis.AlphaNumeric})
		return true
	})
	return out
}

type foldFilter struct{}

func (foldFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, t := range in {
		t.Term = text.Fold(t.Term)
	}
	return in
}

// cjkTokenizer emits the overlapping bigrams of every run of CJK characters ("中华人民"
// → 中华 华人 人民), or the character itself for a run of one, and ignores all other
// text. Bleve's own cjk analyzer leaves Hangul whole, so that 한국어 would not be found in
// 한국어를; bigrams find a word inside a longer run, in every one of these scripts.
// Runs are two positions apart, so that a phrase never spans two of them.
type cjkTokenizer struct{}

func (cjkTokenizer) Tokenize(b []byte) analysis.TokenStream {
	var out analysis.TokenStream
	cjkTokens(b, func(term []byte, pos int) {
		out = append(out, &analysis.Token{Term: term, Position: pos, Type: analysis.Ideographic})
	})
	return out
}

// cjkTokens calls fn with each token cjkTokenizer makes of b, a slice of b, and its
// position, in order (wordField analyzes a CJK field with it, without the tokens).
func cjkTokens(b []byte, fn func(term []byte, pos int)) {
	pos := 0
	prev, prevStart := -1, 0 // the previous CJK rune's start, or -1 after a non-CJK rune
	runLen := 0
	flush := func() {
		if runLen == 1 { // a lone character: itself
			pos++
			fn(b[prevStart:prev], pos)
		}
		if runLen > 0 {
			pos++ // a gap between runs
		}
		runLen = 0
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf { // ASCII, most of most texts: not CJK
			if runLen > 0 {
				flush()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if text.IsCJK(r) {
			if runLen > 0 {
				pos++
				fn(b[prevStart:i+size], pos)
			}
			runLen++
			prevStart, prev = i, i+size
		} else if runLen > 0 {
			flush()
		}
		i += size
	}
	flush()
}

// camelParts adds the parts of a word written in camel case ("InternMap" → intern, map;
// "parseHTTPHeader" → parse, http, header) after the word itself, at its position: a
// title or a folder named so is found by the words it joins.
type camelParts struct{}

func (camelParts) Filter(in analysis.TokenStream) analysis.TokenStream {
	var out analysis.TokenStream
	for _, t := range in {
		out = append(out, t)
		parts := camelSplit(t.Term)
		if len(parts) < 2 {
			continue
		}
		for _, p := range parts {
			out = append(out, &analysis.Token{Term: p, Position: t.Position, Type: t.Type})
		}
	}
	return out
}

// camelSplit splits an ASCII word at its case changes and at its digits, or returns nil.
func camelSplit(w []byte) [][]byte { return appendCamelParts(nil, w) }

// appendCamelParts appends to parts the parts camelSplit splits w into, and returns parts
// as it was when camelSplit returns nil.
func appendCamelParts(parts [][]byte, w []byte) [][]byte {
	none := parts
	start := 0
	class := func(c byte) int {
		switch {
		case c >= 'a' && c <= 'z':
			return 1
		case c >= 'A' && c <= 'Z':
			return 2
		case c >= '0' && c <= '9':
			return 3
		}
		return 0
	}
	for i := 1; i < len(w); i++ {
		a, b := class(w[i-1]), class(w[i])
		if a == 0 || b == 0 {
			return none
		}
		split := a == 1 && b == 2 || a != 3 && b == 3 || a == 3 && b != 3 ||
			a == 2 && b == 2 && i+1 < len(w) && class(w[i+1]) == 1
		if split {
			parts = append(parts, w[start:i])
			start = i
		}
	}
	if len(parts) == len(none) {
		return none
	}
	return append(parts, w[start:])
}
