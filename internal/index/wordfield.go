package index

import (
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

	bdoc "github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
	porterstemmer "github.com/blevesearch/go-porterstemmer"

	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/segment"
	"github.com/guide/guide/internal/text"
)

// wordField is a text field of the word analyzer (a document's content and name), of
// the parts analyzer (its title, headings, front matter, first paragraph and folders) or
// of the CJK analyzer (the content of a document with CJK text, as bigrams),
// analyzed straight into what a segment is built from (segment.Terms): each term once,
// with its frequency and its positions. Bleve's text field makes a token of every word,
// then a map of terms from the tokens with a struct of every occurrence (some 72 bytes a
// token); a wordField keeps its terms' bytes in one slab and four bytes a position. The
// terms, frequencies and positions are the same (TestWordFieldAnalyzesAsBleve,
// FuzzWordField).
type wordField struct {
	name    string
	value   []byte
	options bindex.FieldIndexingOptions
	parts   bool // the parts analyzer: camel-case parts after each word, English stems
	cjk     bool // the CJK analyzer: CJK text's bigrams (cjkTokens), nothing else
	done    bool
	length  int
	terms   []byte   // every term's bytes, in the order the terms first occur
	ends    []uint32 // where each term ends in terms
	freqs   []uint32 // each term's occurrences
	pos     []uint32 // with term vectors: each term's positions in turn, freqs[i] of them
}

var (
	_ bdoc.Field    = (*wordField)(nil)
	_ segment.Terms = (*wordField)(nil)
)

// wordFieldParts names the fields a wordField analyzes, the ranked fields, and whether
// each is of the parts analyzer (stemmed) rather than the word analyzer, as newMapping
// maps them.
var wordFieldParts = func() map[string]bool {
	m := make(map[string]bool, len(schema.Ranked))
	for _, f := range schema.Ranked {
		m[f.Name] = f.Stemmed
	}
	return m
}()

func (f *wordField) Name() string                         { return f.name }
func (f *wordField) ArrayPositions() []uint64             { return nil }
func (f *wordField) Options() bindex.FieldIndexingOptions { return f.options }
func (f *wordField) Value() []byte                        { return f.value }
func (f *wordField) NumPlainTextBytes() uint64            { return uint64(len(f.value)) }
func (f *wordField) EncodedFieldType() byte               { return 't' }
func (f *wordField) AnalyzedLength() int                  { return f.length }

// Size is what the field holds.
func (f *wordField) Size() int {
	return int(unsafe.Sizeof(*f)) + len(f.name) + len(f.value) + cap(f.terms) + 4*(cap(f.ends)+cap(f.freqs)+cap(f.pos))
}

// VisitTerms gives the segment's builder each term, its frequency and its positions.
func (f *wordField) VisitTerms(fn func(term []byte, freq int, positions []uint32) error) error {
	start, at := uint32(0), 0
	for i, end := range f.ends {
		n := int(f.freqs[i])
		var pos []uint32
		if f.pos != nil {
			pos = f.pos[at : at+n : at+n]
			at += n
		}
		if err := fn(f.terms[start:end:end], n, pos); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// AnalyzedTokenFrequencies makes Bleve's form of the terms, which only the tests read
// (scorch reads it for a composite field, and an index's documents have none: see
// mapDocument); the segment's builder reads VisitTerms.
func (f *wordField) AnalyzedTokenFrequencies() bindex.TokenFrequencies {
	return segment.TokenFrequencies(f)
}

// scratch is what one field's analysis works in, kept for the next: a term's index by
// its bytes, and every token's term and position.
type scratch struct {
	index  map[string]uint32
	tokens []token
	fold   []byte
	runes  []rune   // a folded word's runes, stemmed in place
	stem   []byte   // the stem's bytes
	parts  [][]byte // a word's camel-case parts
}

type token struct{ term, pos uint32 }

var analyses = sync.Pool{New: func() any { return &scratch{index: map[string]uint32{}} }}

// Analyze splits the value into words as wordTokenizer does (CJK bigrams as cjkTokenizer
// does, for a field of the CJK analyzer, and no more), adds their camel-case parts
// as camelParts does (the parts analyzer), folds them as foldFilter does and stems them as
// Bleve's porter filter does (the parts analyzer), giving each term an index as it first
// occurs and counting its occurrences. A second pass puts each term's positions together,
// in the order they occur, which is the order the segment's builder reads them in.
// A field is analyzed once: the index analyzes it ahead of its batch (Index.Prepare), and
// scorch's call when it builds the batch finds it done.
func (f *wordField) Analyze() {
	if f.done {
		return
	}
	f.done = true
	a := analyses.Get().(*scratch)
	defer func() {
		clear(a.index)
		clear(a.parts) // slices of the field's text: kept, they would keep it
		a.tokens, a.parts = a.tokens[:0], a.parts[:0]
		if cap(a.tokens) > 1<<20 { // one huge field keeps no huge scratch
			a.tokens = nil
		}
		analyses.Put(a)
	}()
	b := f.value
	f.terms = make([]byte, 0, len(b)/4+8)
	if f.cjk {
		cjkTokens(b, func(t []byte, pos int) { a.add(f, t, pos) })
		f.finish(a)
		return
	}
	add := func(t []byte, pos int) {
		a.fold = text.AppendFold(a.fold[:0], t)
		t = a.fold
		if f.parts {
			// As bleveanalysis.BuildTermFromRunes(porterstemmer.StemWithoutLowerCasing(
			// bytes.Runes(t))) does, in the scratch's buffers rather than two new ones a word.
			a.runes = a.runes[:0]
			for i := 0; i < len(t); {
				r, n := utf8.DecodeRune(t[i:])
				a.runes = append(a.runes, r)
				i += n
			}
			a.stem = a.stem[:0]
			for _, r := range porterstemmer.StemWithoutLowerCasing(a.runes) {
				a.stem = utf8.AppendRune(a.stem, r)
			}
			t = a.stem
		}
		a.add(f, t, pos)
	}
	words := 0
	text.Words(b, func(s text.Span) bool {
		words++
		w := b[s.Start:s.End]
		add(w, words)
		if f.parts {
			if a.parts = appendCamelParts(a.parts[:0], w); len(a.parts) >= 2 {
				for _, p := range a.parts {
					add(p, words)
				}
			}
		}
		return true
	})
	f.finish(a)
}

// add counts term t at position pos in f, giving it an index if it is its first.
func (a *scratch) add(f *wordField, t []byte, pos int) {
	i, ok := a.index[string(t)]
	if !ok {
		i = uint32(len(f.ends))
		// The key is the term's bytes where the field keeps them: a slab that moves
		// when it grows leaves the old one as it was, kept until the map is cleared.
		f.terms = append(f.terms, t...)
		f.ends = append(f.ends, uint32(len(f.terms)))
		f.freqs = append(f.freqs, 0)
		key := f.terms[len(f.terms)-len(t):]
		a.index[unsafe.String(unsafe.SliceData(key), len(key))] = i
	}
	f.freqs[i]++
	a.tokens = append(a.tokens, token{i, uint32(pos)})
}

// finish ends f's analysis from its tokens: its length, and with term vectors, each
// term's positions together.
func (f *wordField) finish(a *scratch) {
	f.length = len(a.tokens)
	f.terms = slices.Clip(f.terms)
	if !f.options.IncludeTermVectors() {
		return
	}
	// Each term's positions take the next share of pos, as many as its frequency.
	next := make([]uint32, len(f.ends))
	at := uint32(0)
	for i, n := range f.freqs {
		next[i] = at
		at += n
	}
	f.pos = make([]uint32, len(a.tokens))
	for _, t := range a.tokens {
		f.pos[next[t.term]] = t.pos
		next[t.term]++
	}
}
