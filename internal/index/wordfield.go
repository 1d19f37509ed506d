package index

import (
	"bytes"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	bdoc "github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
	porterstemmer "github.com/blevesearch/go-porterstemmer"

	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/text"
)

// wordField is a text field of the word analyzer (a document's content and name) or of
// the parts analyzer (its title, headings, front matter, first paragraph and folders),
// analyzed straight into the term frequencies a segment is built from: Bleve's text field
// makes a token of every word, then a map of terms from the tokens, and then walks every
// term and location again to report its size. The terms, frequencies and positions are
// the same (TestWordFieldAnalyzesAsBleve, FuzzWordField).
type wordField struct {
	name    string
	value   []byte
	options bindex.FieldIndexingOptions
	parts   bool // the parts analyzer: camel-case parts after each word, English stems
	length  int
	freqs   bindex.TokenFrequencies
	size    int
}

var _ bdoc.Field = (*wordField)(nil)

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

// asWordField returns f analyzed as a wordField, or f itself when it is not one of the
// fields the word or the parts analyzer indexes.
func asWordField(f bdoc.Field) bdoc.Field {
	parts, ok := wordFieldParts[f.Name()]
	if !ok {
		return f
	}
	if _, ok := f.(*bdoc.TextField); !ok || len(f.ArrayPositions()) > 0 {
		return f
	}
	return &wordField{name: f.Name(), value: f.Value(), options: f.Options(), parts: parts}
}

func (f *wordField) Name() string                         { return f.name }
func (f *wordField) ArrayPositions() []uint64             { return nil }
func (f *wordField) Options() bindex.FieldIndexingOptions { return f.options }
func (f *wordField) Value() []byte                        { return f.value }
func (f *wordField) NumPlainTextBytes() uint64            { return uint64(len(f.value)) }
func (f *wordField) EncodedFieldType() byte               { return 't' }
func (f *wordField) AnalyzedLength() int                  { return f.length }

func (f *wordField) AnalyzedTokenFrequencies() bindex.TokenFrequencies { return f.freqs }

// Size is what Bleve's text field would report, counted as the field is analyzed.
func (f *wordField) Size() int { return int(unsafe.Sizeof(*f)) + len(f.name) + len(f.value) + f.size }

// tokenAt is a token of the field: its term and its position (a field's text is at most
// a stream message: megabytes).
type tokenAt struct {
	tf  *bindex.TokenFreq
	pos int32
}

// Analyze splits the value into words as wordTokenizer does, adds their camel-case parts
// as camelParts does (the parts analyzer), folds them as foldFilter does and stems them as
// Bleve's porter filter does (the parts analyzer), counting each term's occurrences in a
// first pass. A second places the locations in one slab, each term's together in the
// order of its occurrences, which is the order the segment's builder reads them in.
// A field is analyzed once: the index analyzes it ahead of its batch (Index.Prepare), and
// scorch's call when it builds the batch finds it done.
func (f *wordField) Analyze() {
	if f.freqs != nil {
		return
	}
	b := f.value
	est := len(b)/6 + 1
	freqs := make(bindex.TokenFrequencies, est/3+1)
	tokens := make([]tokenAt, 0, est)
	terms := make([]*bindex.TokenFreq, 0, est/3+1) // in the order they first occur
	var slab []bindex.TokenFreq
	termBytes := 0
	add := func(t []byte, pos int) {
		t = text.Fold(t)
		if f.parts {
			t = analysis.BuildTermFromRunes(porterstemmer.StemWithoutLowerCasing(bytes.Runes(t)))
		}
		tf := freqs[string(t)]
		if tf == nil {
			if len(slab) == cap(slab) {
				slab = make([]bindex.TokenFreq, 0, max(est/4, 16))
			}
			slab = append(slab, bindex.TokenFreq{Term: t})
			tf = &slab[len(slab)-1]
			freqs[string(t)] = tf
			terms = append(terms, tf)
			termBytes += len(t)
		}
		tf.SetFrequency(tf.Frequency() + 1)
		tokens = append(tokens, tokenAt{tf, int32(pos)})
	}
	words := 0
	text.Words(b, func(s text.Span) bool {
		words++
		w := b[s.Start:s.End]
		add(w, words)
		if f.parts {
			if parts := camelSplit(w); len(parts) >= 2 {
				for _, p := range parts {
					add(p, words)
				}
			}
		}
		return true
	})
	f.length, f.freqs = len(tokens), freqs
	f.size = len(freqs)*(int(unsafe.Sizeof(bindex.TokenFreq{}))+int(unsafe.Sizeof(""))+int(unsafe.Sizeof(&bindex.TokenFreq{}))) +
		2*termBytes
	if !f.options.IncludeTermVectors() {
		return
	}
	// Each term's locations take the next share of the slab, as many as its frequency:
	// its Locations start there empty, with the rest of the slab as capacity, so that
	// its next location's place is the slab's length less that capacity plus its length.
	locs := make([]bindex.TokenLocation, len(tokens))
	ptrs := make([]*bindex.TokenLocation, len(tokens))
	start := 0
	for _, tf := range terms {
		tf.Locations = ptrs[start:start]
		start += tf.Frequency()
	}
	for _, t := range tokens {
		tf := t.tf
		slot := len(ptrs) - cap(tf.Locations) + len(tf.Locations)
		locs[slot].Position = int(t.pos)
		tf.Locations = append(tf.Locations, &locs[slot])
	}
	for _, tf := range terms {
		tf.Locations = tf.Locations[:len(tf.Locations):len(tf.Locations)]
	}
	f.size += len(locs) * int(unsafe.Sizeof(bindex.TokenLocation{}))
}
