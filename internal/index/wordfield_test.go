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

	"github.com/guide/guide/internal/events"
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
// content field), of the parts analyzer (the title field) and of the CJK analyzer (the
// content_cjk field) on one text, with term vectors and without.
func checkWordField(t *testing.T, m *mapping.IndexMappingImpl, text []byte) {
	t.Helper()
	for _, field := range []struct{ name, analyzer string }{
		{schema.Content, schema.AnalyzerWord},
		{schema.Title, schema.AnalyzerParts},
		{schema.ContentCJK, schema.AnalyzerCJK},
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
// with the word, the parts or the CJK analyzer gives it: the same terms, frequencies, positions
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

// FuzzWordField: on any bytes, a wordField analyzes as Bleve's text field with the word,
// the parts or the CJK analyzer does.
func FuzzWordField(f *testing.F) {
	for _, s := range []string{"a b a", "Σσς ΣΣ", "x\xffy", "中华 人民", "K\u212a k", "parseHTTPHeader runs"} {
		f.Add([]byte(s))
	}
	m := testMapping(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkWordField(t, m, b)
	})
}

// TestWordFieldIsCompact: an analyzed field holds its text and about four bytes an
// occurrence (its position), with the terms once each; Bleve's form of the same terms
// takes some seventy bytes an occurrence, which made the analysis of the batches in flight
// the most of a first index's memory.
func TestWordFieldIsCompact(t *testing.T) {
	m := testMapping(t)
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "word%d again and again ", i%500)
	}
	text := []byte(b.String())
	tokens := 20000 * 4
	for _, field := range []struct{ name, analyzer string }{{schema.Content, schema.AnalyzerWord}, {schema.Title, schema.AnalyzerParts}} {
		f := asWordField(bdoc.NewTextFieldCustom(field.name, nil, text, bindex.IndexField|bindex.IncludeTermVectors, m.AnalyzerNamed(field.analyzer)))
		f.Analyze()
		if f.AnalyzedLength() < tokens {
			t.Fatalf("%s: %d tokens, want at least %d", field.name, f.AnalyzedLength(), tokens)
		}
		if held := f.Size() - len(text); held > 5*f.AnalyzedLength()+16<<10 {
			t.Errorf("%s: %d bytes besides the text for %d tokens (%.1f a token)", field.name, held, f.AnalyzedLength(), float64(held)/float64(f.AnalyzedLength()))
		}
	}
}

// TestWordFieldStemsInPlace: the parts analyzer's stemming and camel-case split allocate
// nothing a word: the allocations of a field's analysis do not grow with its words.
func TestWordFieldStemsInPlace(t *testing.T) {
	m := testMapping(t)
	allocs := func(words int) float64 {
		var b strings.Builder
		for i := range words {
			fmt.Fprintf(&b, "running generously%d ", i%7)
		}
		text := []byte(b.String())
		return testing.AllocsPerRun(20, func() {
			asWordField(bdoc.NewTextFieldCustom(schema.Title, nil, text, bindex.IndexField|bindex.IncludeTermVectors, m.AnalyzerNamed(schema.AnalyzerParts))).Analyze()
		})
	}
	few, many := allocs(100), allocs(2000)
	if many > few+40 {
		t.Errorf("analysis of 100 words: %.0f allocations; of 2000: %.0f", few, many)
	}
}

// TestNoFieldIsInAll: the mapping puts no field in Bleve's _all, so that mapDocument can
// leave its composite out: composed from Bleve's analysis of a document with every field
// filled, it holds nothing.
func TestNoFieldIsInAll(t *testing.T) {
	m := testMapping(t)
	d := &document{Name: "readme", Path: "docs/guide", Title: "The Title", Headings: "One\nTwo", Meta: "tags: x",
		Lead: "A lead.", Content: "Some content, 中文 too.", ContentCJK: "中文", Folders: []string{"docs", "docs/guide"},
		Dir: "docs/guide", Session: schema.TreeSession, Ext: "md"}
	doc := bdoc.NewDocument("id")
	if err := m.MapDocument(doc, d); err != nil {
		t.Fatal(err)
	}
	if !doc.HasComposite() {
		t.Fatal("Bleve's mapping made no _all: nothing to leave out")
	}
	fields := 0
	doc.VisitFields(func(f bindex.Field) {
		fields++
		f.Analyze()
		doc.VisitComposite(func(cf bindex.CompositeField) {
			cf.Compose(f.Name(), f.AnalyzedLength(), f.AnalyzedTokenFrequencies())
		})
	})
	if fields < 10 {
		t.Fatalf("only %d fields mapped", fields)
	}
	doc.VisitComposite(func(cf bindex.CompositeField) {
		cf.Analyze()
		if n, terms := cf.AnalyzedLength(), len(cf.AnalyzedTokenFrequencies()); n != 0 || terms != 0 {
			t.Errorf("%s holds %d tokens, %d terms", cf.Name(), n, terms)
		}
	})
}

// TestLengthsAsAnalyzed: the field lengths BM25 is given, taken from a document's
// analysis, are the words and parts counted again in its text.
func TestLengthsAsAnalyzed(t *testing.T) {
	m := testMapping(t)
	for i, content := range []string{
		"",
		"# The parseHTTPHeader Title\n\nA lead paragraph, with InternMap and IPv6Address.\n\n## Heading two\n\nBody text; body TEXT.",
		"---\ntitle: Front Matter\ntags: [a, b]\n---\n# 中华人民共和国 한국어\n\nmixed中文text and \xff bad bytes",
		strings.Repeat("again and again ", 300),
	} {
		e := &events.Event{Op: events.OpUpsert, Path: fmt.Sprintf("docs/someFolder/file%d.md", i), Content: []byte(content), Status: events.StatusOK}
		e.Hash = events.HashContent(e.Content)
		d := newDocument(nil, e)
		doc, err := mapByReflection(m, "id", d)
		if err != nil {
			t.Fatal(err)
		}
		want, got := lengths{}, lengths{}
		want.add(d, nil)
		got.add(d, analyzedLengths(doc))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: analyzed %v, counted %v", content, got, want)
		}
	}
}

// TestDocumentContentIsTheEvents: a document's content is its event's bytes, not a copy.
func TestDocumentContentIsTheEvents(t *testing.T) {
	e := &events.Event{Op: events.OpUpsert, Path: "docs/a.md", Content: []byte("# A\n\nSome text."), Status: events.StatusOK}
	e.Hash = events.HashContent(e.Content)
	d := newDocument(nil, e)
	if d.Content != string(e.Content) {
		t.Fatalf("content %q, want %q", d.Content, e.Content)
	}
	if unsafe.StringData(d.Content) != unsafe.SliceData(e.Content) {
		t.Error("the document's content is a copy of the event's")
	}
}
