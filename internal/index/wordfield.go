package index

import (
	"unsafe"

	bdoc "github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
)

// wordField is a text field of the word analyzer (a document's content and name),
// analyzed straight into the term frequencies a segment is built from: Bleve's text field
// makes a token of every word, then a map of terms from the tokens, and then walks every
// term and location again to report its size. The terms, frequencies and positions are
// the same (TestWordFieldAnalyzesAsBleve, FuzzWordField).
type wordField struct {
	name    string
	value   []byte
	options bindex.FieldIndexingOptions
	length  int
	freqs   bindex.TokenFrequencies
	size    int
}

var _ bdoc.Field = (*wordField)(nil)

// asWordField returns f analyzed as a wordField, or f itself when it is not one of the
// fields the word analyzer indexes.
func asWordField(f bdoc.Field) bdoc.Field {
	switch f.Name() {
	case fieldContent, fieldName:
	default:
		return f
	}
	if _, ok := f.(*bdoc.TextField); !ok || len(f.ArrayPositions()) > 0 {
		return f
	}
	return &wordField{name: f.Name(), value: f.Value(), options: f.Options()}
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

// Analyze splits the value into words as wordTokenizer does and folds them as foldFilter
// does, counting each term's occurrences in a first pass and placing its locations, one
// slab for all of them, in a second.
func (f *wordField) Analyze() {
	b := f.value
	est := len(b)/6 + 1
	freqs := make(bindex.TokenFrequencies, est/3+1)
	order := make([]*bindex.TokenFreq, 0, est) // each token's term
	var slab []bindex.TokenFreq
	terms := 0
	Words(b, func(s Span) bool {
		t := Fold(b[s.Start:s.End])
		tf := freqs[string(t)]
		if tf == nil {
			if len(slab) == cap(slab) {
				slab = make([]bindex.TokenFreq, 0, max(est/4, 16))
			}
			slab = append(slab, bindex.TokenFreq{Term: t})
			tf = &slab[len(slab)-1]
			freqs[string(t)] = tf
			terms += len(t)
		}
		tf.SetFrequency(tf.Frequency() + 1)
		order = append(order, tf)
		return true
	})
	f.length, f.freqs = len(order), freqs
	f.size = len(freqs)*(int(unsafe.Sizeof(bindex.TokenFreq{}))+int(unsafe.Sizeof(""))+int(unsafe.Sizeof(&bindex.TokenFreq{}))) +
		2*terms
	if !f.options.IncludeTermVectors() {
		return
	}
	locs := make([]bindex.TokenLocation, len(order))
	ptrs := make([]*bindex.TokenLocation, len(order))
	next := 0
	for i, tf := range order {
		if tf.Locations == nil { // the term's first occurrence: its share of the slab
			n := tf.Frequency()
			tf.Locations = ptrs[next : next : next+n]
			next += n
		}
		locs[i].Position = i + 1
		tf.Locations = append(tf.Locations, &locs[i])
	}
	f.size += len(locs) * int(unsafe.Sizeof(bindex.TokenLocation{}))
}
