package index

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	bdoc "github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
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

// checkWordField compares a wordField with Bleve's text field of the word analyzer on
// one text, with term vectors and without.
func checkWordField(t *testing.T, a analysis.Analyzer, text []byte) {
	t.Helper()
	for _, opts := range []bindex.FieldIndexingOptions{
		bindex.IndexField | bindex.IncludeTermVectors,
		bindex.IndexField,
	} {
		bleve := bdoc.NewTextFieldCustom(fieldContent, nil, text, opts, a)
		ours := asWordField(bdoc.NewTextFieldCustom(fieldContent, nil, text, opts, a))
		if _, ok := ours.(*wordField); !ok {
			t.Fatalf("the content field is not a wordField: %T", ours)
		}
		if want, got := analyzedAs(bleve), analyzedAs(ours); got != want {
			t.Fatalf("%q with %v:\nwordField\n%s\nBleve\n%s", text, opts, got, want)
		}
	}
}

func wordAnalyzer(t testing.TB) analysis.Analyzer {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	return m.AnalyzerNamed(analyzerWord)
}

// TestWordFieldAnalyzesAsBleve: a wordField gives the segment what Bleve's text field
// with the word analyzer gives it: the same terms, frequencies, positions and length.
func TestWordFieldAnalyzesAsBleve(t *testing.T) {
	a := wordAnalyzer(t)
	for _, text := range []string{
		"",
		"   ,.; ",
		"word",
		"The dragon sleeps; the DRAGON wakes. the end",
		"Kelvin K k, Straße STRASSE straße ẞ, Σίσυφος σίσυφος",
		"snake_case camelCase parseHTTPHeader 2026-11-26 v1.2",
		"中华人民共和国 한국어를 日本語のテキスト mixed中文text",
		"bad \xff\xfe utf8 \xc3 bytes",
		"e\u0301t\u00e9 combining marks",
		strings.Repeat("again and again ", 300),
	} {
		checkWordField(t, a, []byte(text))
	}
	// A field the word analyzer does not index stays Bleve's.
	title := bdoc.NewTextFieldCustom(fieldTitle, nil, []byte("x"), bindex.IndexField, a)
	if asWordField(title) != bdoc.Field(title) {
		t.Fatal("the title became a wordField")
	}
}

// FuzzWordField: on any bytes, a wordField analyzes as Bleve's text field with the word
// analyzer does.
func FuzzWordField(f *testing.F) {
	for _, s := range []string{"a b a", "Σσς ΣΣ", "x\xffy", "中华 人民", "K\u212a k"} {
		f.Add([]byte(s))
	}
	a := wordAnalyzer(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkWordField(t, a, b)
	})
}
