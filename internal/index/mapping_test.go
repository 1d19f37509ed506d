package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/schema"
)

// mapByReflection is how a document was mapped before the fieldMapper: Bleve's
// MapDocument, which walks the document by reflection, then the ranked fields made
// wordFields. The reference the fieldMapper is held to.
func mapByReflection(m mapping.IndexMapping, id string, d *document) (*bdoc.Document, error) {
	doc := bdoc.NewDocument(id)
	if err := m.MapDocument(doc, d); err != nil {
		return nil, err
	}
	doc.CompositeFields = nil
	for i, f := range doc.Fields {
		f = asWordField(f)
		if w, ok := f.(*wordField); ok {
			w.Analyze()
		}
		doc.Fields[i] = f
	}
	return doc, nil
}

// asWordField returns f analyzed as a wordField, or f itself when it is not one of the
// fields the word, the parts or the CJK analyzer indexes: how a field of Bleve's mapping
// was made a wordField before the fieldMapper, for the tests that hold one to the other.
func asWordField(f bdoc.Field) bdoc.Field {
	parts, ok := wordFieldParts[f.Name()]
	cjk := f.Name() == schema.ContentCJK
	if !ok && !cjk {
		return f
	}
	if _, ok := f.(*bdoc.TextField); !ok || len(f.ArrayPositions()) > 0 {
		return f
	}
	return &wordField{name: f.Name(), value: f.Value(), options: f.Options(), parts: parts, cjk: cjk}
}

// TestMapperMapsAsBleve: the fieldMapper makes the document Bleve's MapDocument makes —
// the same fields in the same order, with the same names, array positions, options,
// values and analysis — for documents of every shape: empty, with CJK, in folders or
// none, of a session, with front matter, headings and bad bytes.
func TestMapperMapsAsBleve(t *testing.T) {
	m := testMapping(t)
	fm, err := newFieldMapper(m)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"harbour", "parseHTTPHeader", "中华人民共和国", "한국어", "cookies", "IPv6Address", "the", "\xff", "dragons", "naïve", "x"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString([]string{" ", "\n", ", ", "-", "中"}[r.IntN(5)])
		}
		return b.String()
	}
	var evs []*events.Event
	for i := range 300 {
		e := &events.Event{Op: events.OpUpsert, Status: events.StatusOK}
		depth := r.IntN(4)
		parts := []string{}
		for range depth {
			parts = append(parts, []string{"docs", "someFolder", "a b", "中文"}[r.IntN(4)])
		}
		e.Path = strings.Join(append(parts, fmt.Sprintf("file%d%s", i, []string{".md", ".txt", "", ".MD.tmpl", ".env"}[r.IntN(5)])), "/")
		switch r.IntN(6) {
		case 0: // empty
		case 1:
			e.Content = []byte("---\ntitle: Front " + text(3) + "\ntags: [a, b]\n---\n# " + text(4) + "\n\n" + text(40) + "\n\n## " + text(2) + "\n\n" + text(100))
		case 2:
			e.Session, e.Path = "s-"+fmt.Sprint(i), fmt.Sprintf("notes/n%d.md", i)
			e.Content = []byte(text(20))
		default:
			e.Content = []byte(text(r.IntN(200)))
		}
		e.Hash = events.HashContent(e.Content)
		if i%17 == 0 {
			e.Status = events.StatusBinary
		}
		evs = append(evs, e)
	}
	for _, e := range evs {
		d := newDocument(nil, e)
		want, err := mapByReflection(m, "id", d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fm.mapDocument("id", d)
		if err != nil {
			t.Fatal(err)
		}
		if diff := documentDiff(want, got); diff != "" {
			t.Fatalf("%s (session %q): %s", e.Path, e.Session, diff)
		}
	}
}

// documentDiff says how got differs from want, "" when it does not.
func documentDiff(want, got *bdoc.Document) string {
	if want.ID() != got.ID() || want.Indexed() != got.Indexed() || got.HasComposite() {
		return fmt.Sprintf("document %q indexed %v composite %v, want %q indexed %v", got.ID(), got.Indexed(), got.HasComposite(), want.ID(), want.Indexed())
	}
	if len(want.Fields) != len(got.Fields) {
		return fmt.Sprintf("%d fields, want %d: %s against %s", len(got.Fields), len(want.Fields), fieldNames(got), fieldNames(want))
	}
	for i, w := range want.Fields {
		g := got.Fields[i]
		if !sameKind(g, w) || g.Name() != w.Name() || !slices.Equal(g.ArrayPositions(), w.ArrayPositions()) ||
			g.Options() != w.Options() || !bytes.Equal(g.Value(), w.Value()) || g.EncodedFieldType() != w.EncodedFieldType() {
			return fmt.Sprintf("field %d: %T %s %v %v %q, want %T %s %v %v %q", i, g, g.Name(), g.ArrayPositions(), g.Options(), g.Value(),
				w, w.Name(), w.ArrayPositions(), w.Options(), w.Value())
		}
		g.Analyze()
		w.Analyze()
		if g.AnalyzedLength() != w.AnalyzedLength() {
			return fmt.Sprintf("field %s: length %d, want %d", g.Name(), g.AnalyzedLength(), w.AnalyzedLength())
		}
		if gs, ws := analyzedTerms(g), analyzedTerms(w); gs != ws {
			return fmt.Sprintf("field %s: terms %s, want %s", g.Name(), gs, ws)
		}
	}
	return ""
}

// sameKind: a wordField where Bleve's mapping gives one, a field of Bleve's kind or a
// keywordField where it gives a text field.
func sameKind(got, want bdoc.Field) bool {
	_, gw := got.(*wordField)
	_, ww := want.(*wordField)
	_, gk := got.(*keywordField)
	_, wt := want.(*bdoc.TextField)
	return gw == ww && (!gk || wt)
}

func fieldNames(d *bdoc.Document) string {
	var names []string
	for _, f := range d.Fields {
		names = append(names, f.Name())
	}
	return strings.Join(names, ",")
}

// analyzedTerms prints a field's analysis: a wordField's terms as the segment reads them,
// another's token frequencies.
func analyzedTerms(f bdoc.Field) string {
	var b strings.Builder
	if w, ok := f.(*wordField); ok {
		_ = w.VisitTerms(func(term []byte, freq int, positions []uint32) error {
			fmt.Fprintf(&b, "%s×%d%v ", term, freq, positions)
			return nil
		})
		return b.String()
	}
	tf := f.AnalyzedTokenFrequencies()
	keys := make([]string, 0, len(tf))
	for k := range tf {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s×%d", k, tf[k].Frequency())
		for _, l := range tf[k].Locations {
			fmt.Fprintf(&b, "[%v %d %d %d]", l.ArrayPositions, l.Start, l.End, l.Position)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// BenchmarkMapDocument maps a document of a few kilobytes, by the fieldMapper and by
// Bleve's MapDocument, for the allocations and time each takes.
func BenchmarkMapDocument(b *testing.B) {
	m := testMapping(b)
	fm, err := newFieldMapper(m)
	if err != nil {
		b.Fatal(err)
	}
	c := []byte("# Guide to the harbour\n\nThe harbour master keeps the parseHTTPHeader logs.\n\n" + strings.Repeat("Ships come and go; the tide waits for no one. ", 80))
	e := &events.Event{Op: events.OpUpsert, Path: "docs/ports/harbour.md", Content: c, Hash: events.HashContent(c), Status: events.StatusOK}
	d := newDocument(nil, e)
	for _, c := range []struct {
		name string
		mapf func() (*bdoc.Document, error)
	}{
		{"mapper", func() (*bdoc.Document, error) { return fm.mapDocument("id", d) }},
		{"reflection", func() (*bdoc.Document, error) { return mapByReflection(m, "id", d) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				doc, err := c.mapf()
				if err != nil {
					b.Fatal(err)
				}
				doc.VisitFields(func(f bindex.Field) { f.Analyze() })
			}
		})
	}
}
