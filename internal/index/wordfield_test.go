package index

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/index/schema"
)

// analyzedAs describes what a field's analysis gives the segment: its length and each
// term's frequency and locations.
func analyzedAs(f bdoc.Field) string {
	f.Analyze()
	freqs := f.AnalyzedTokenFrequencies()
	terms := make([]string, 0, len(freqs))
	for k := range freqs {
		terms = append(terms, k)
	}
	slices.Sort(terms)
	var b strings.Builder
	fmt.Fprintf(&b, "length %d\n", f.AnalyzedLength())
	for _, k := range terms {
		tf := freqs[k]
		fmt.Fprintf(&b, "%q term %q ×%d:", k, tf.Term, tf.Frequency())
		for _, l := range tf.Locations {
			fmt.Fprintf(&b, " %s@%d[%d-%d]%d", l.Field, l.Position, l.Start, l.End, len(l.ArrayPositions))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkWordField compares a wordField with Bleve's text field of the word analyzer (the
// content field) and of the parts analyzer (the title field) on one text, with term
// vectors and without.
func checkWordField(t *testing.T, m *mapping.IndexMappingImpl, text []byte) {
	t.Helper()
	for _, field := range []struct{ name, analyzer string }{
		{schema.Content, schema.AnalyzerWord},
		{schema.Title, schema.AnalyzerParts},
	} {
		a := m.AnalyzerNamed(field.analyzer)
		for _, opts := range []bindex.FieldIndexingOptions{
			bindex.IndexField | bindex.IncludeTermVectors,
			bindex.IndexField,
		} {
			bleve := bdoc.NewTextFieldCustom(field.name, nil, text, opts, a)
			ours := asWordField(bdoc.NewTextFieldCustom(field.name, nil, text, opts, a))
			if _, ok := ours.(*wordField); !ok {
				t.Fatalf("the %s field is not a wordField: %T", field.name, ours)
			}
			if want, got := analyzedAs(bleve), analyzedAs(ours); got != want {
				t.Fatalf("%s: %q with %v:\nwordField\n%s\nBleve\n%s", field.name, text, opts, got, want)
			}
		}
	}
}

func testMapping(t testing.TB) *mapping.IndexMappingImpl {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWordFieldAnalyzesAsBleve: a wordField gives the segment what Bleve's text field
// with the word or the parts analyzer gives it: the same terms, frequencies, positions
// and length.
func TestWordFieldAnalyzesAsBleve(t *testing.T) {
	m := testMapping(t)
	for _, text := range []string{
		"",
		"   ,.; ",
		"word",
		"The dragon sleeps; the DRAGON wakes. the end",
		"Kelvin K k, Straße STRASSE straße ẞ, Σίσυφος σίσυφος",
		"snake_case camelCase parseHTTPHeader 2026-11-26 v1.2 InternMap IPv6Address",
		"running runs ran Runner cookies cookie-parser generously",
		"中华人民共和国 한국어를 日本語のテキスト mixed中文text",
		"bad \xff\xfe utf8 \xc3 bytes",
		"e\u0301t\u00e9 combining marks",
		strings.Repeat("again and again ", 300),
	} {
		checkWordField(t, m, []byte(text))
	}
	// A field of another analyzer stays Bleve's.
	ext := bdoc.NewTextFieldCustom(schema.Ext, nil, []byte("md"), bindex.IndexField, m.AnalyzerNamed("keyword"))
	if asWordField(ext) != bdoc.Field(ext) {
		t.Fatal("the ext field became a wordField")
	}
}

// FuzzWordField: on any bytes, a wordField analyzes as Bleve's text field with the word
// or the parts analyzer does.
func FuzzWordField(f *testing.F) {
	for _, s := range []string{"a b a", "Σσς ΣΣ", "x\xffy", "中华 人民", "K\u212a k", "parseHTTPHeader runs"} {
		f.Add([]byte(s))
	}
	m := testMapping(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkWordField(t, m, b)
	})
}

// TestWordFieldKeepsATermsLocationsTogether: a term's locations lie next to one another in
// memory, in the order they occur, where the segment's builder reads them one term at a
// time; and no term's list can grow into another's.
func TestWordFieldKeepsATermsLocationsTogether(t *testing.T) {
	m := testMapping(t)
	text := []byte(strings.Repeat("alpha beta gamma alpha delta beta alpha ", 30) + "parseHTTPHeader")
	for _, field := range []struct{ name, analyzer string }{{schema.Content, schema.AnalyzerWord}, {schema.Title, schema.AnalyzerParts}} {
		f := asWordField(bdoc.NewTextFieldCustom(field.name, nil, text, bindex.IndexField|bindex.IncludeTermVectors, m.AnalyzerNamed(field.analyzer)))
		f.Analyze()
		for term, tf := range f.AnalyzedTokenFrequencies() {
			if cap(tf.Locations) != len(tf.Locations) {
				t.Errorf("%s %q: %d locations with room for %d", field.name, term, len(tf.Locations), cap(tf.Locations))
			}
			for k := 1; k < len(tf.Locations); k++ {
				a, b := uintptr(unsafe.Pointer(tf.Locations[k-1])), uintptr(unsafe.Pointer(tf.Locations[k]))
				if b-a != unsafe.Sizeof(bindex.TokenLocation{}) || tf.Locations[k].Position <= tf.Locations[k-1].Position {
					t.Fatalf("%s %q: location %d (position %d) is not the one after location %d (position %d)",
						field.name, term, k, tf.Locations[k].Position, k-1, tf.Locations[k-1].Position)
				}
			}
		}
	}
}
