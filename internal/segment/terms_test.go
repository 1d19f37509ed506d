package segment

import (
	"bytes"
	"slices"
	"testing"

	bdoc "github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"
)

// termsOnly is a field that gives its terms through Terms alone: Bleve's form of them
// fails the test.
type termsOnly struct {
	bdoc.Field
	t *testing.T
}

func (f termsOnly) AnalyzedTokenFrequencies() index.TokenFrequencies {
	f.t.Error("the builder read Bleve's form of a Terms field's terms")
	return f.Field.AnalyzedTokenFrequencies()
}

func (f termsOnly) VisitTerms(fn func(term []byte, freq int, positions []uint32) error) error {
	freqs := f.Field.AnalyzedTokenFrequencies()
	terms := make([]string, 0, len(freqs))
	for k := range freqs {
		terms = append(terms, k)
	}
	slices.Sort(terms)
	slices.Reverse(terms) // any order
	for _, k := range terms {
		tf := freqs[k]
		var pos []uint32
		if f.Options().IncludeTermVectors() {
			pos = []uint32{}
			for _, l := range tf.Locations {
				pos = append(pos, uint32(l.Position))
			}
			slices.Sort(pos)
		}
		if err := fn([]byte(k), tf.Frequency(), pos); err != nil {
			return err
		}
	}
	return nil
}

// TestTermsBuildAsTokenFrequencies: a segment of documents whose fields give their terms
// through Terms is byte for byte the segment of the same documents with Bleve's fields,
// fields given more than once in a document included.
func TestTermsBuildAsTokenFrequencies(t *testing.T) {
	docs := analyzedDocs(t, 7, 300)
	want, err := build(docs)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := make([]index.Document, len(docs))
	for i, d := range docs {
		doc := d.(*bdoc.Document)
		w := *doc
		w.Fields = make([]bdoc.Field, len(doc.Fields))
		for k, f := range doc.Fields {
			if f.Name() != idField {
				f = termsOnly{f, t}
			}
			w.Fields[k] = f
		}
		wrapped[i] = &w
	}
	got, err := build(wrapped)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.data, want.data) {
		t.Fatalf("the segments differ: %d bytes against %d", len(got.data), len(want.data))
	}
}
