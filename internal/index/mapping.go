package index

import (
	"cmp"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/segment"
)

// mapDocument makes the Bleve document of d as the mapping does, with the fields of the
// word and parts analyzers analyzed by wordField, here rather than when scorch builds the
// batch (see Prepare).
func (x *Index) mapDocument(id string, d *document) (*bdoc.Document, error) {
	m, err := mapper()
	if err != nil {
		return nil, err
	}
	return m.mapDocument(id, d)
}

// mapper is the fieldMapper of the mapping every index of this MappingVersion has (an
// index of another is rebuilt).
var mapper = sync.OnceValues(func() (*fieldMapper, error) {
	m, err := newMapping()
	if err != nil {
		return nil, err
	}
	return newFieldMapper(m)
})

// A fieldMapper makes a document's Bleve fields as the mapping's MapDocument would — the
// same fields, in the same order, with the same options and analyzers
// (TestMapperMapsAsBleve) — without walking the document by reflection or copying its
// text: a field's value is the document's string (the event's bytes, never changed once
// decoded). The document keeps no composite field: the mapping puts no field in Bleve's
// _all (TestNoFieldIsInAll), whose composite would be an empty field of every document,
// and scorch would ask each field for Bleve's form of its terms to compose it.
type fieldMapper struct {
	name, path, title, headings, meta, lead, content mappedField
	contentCJK, folders, dir, session, ext           mappedField
}

// mappedField is how the mapping indexes one field.
type mappedField struct {
	name     string
	options  bindex.FieldIndexingOptions
	analyzer analysis.Analyzer // nil for the fields a wordField analyzes
	parts    bool              // a wordField of the parts analyzer
	cjk      bool              // a wordField of the CJK analyzer
	keyword  bool              // of the keyword analyzer, its value its one term: a keywordField
}

// newFieldMapper reads how m indexes each field of a document.
func newFieldMapper(m mapping.IndexMapping) (*fieldMapper, error) {
	impl, ok := m.(*mapping.IndexMappingImpl)
	if !ok || impl.DefaultMapping == nil {
		return nil, fmt.Errorf("index mapping: %T, not Bleve's", m)
	}
	field := func(name string) (mappedField, error) {
		dm := impl.DefaultMapping.Properties[name]
		if dm == nil || len(dm.Fields) != 1 || dm.Fields[0].Type != "text" || !dm.Enabled {
			return mappedField{}, fmt.Errorf("index mapping: field %q is not one text field", name)
		}
		fm := dm.Fields[0]
		f := mappedField{name: name, options: fm.Options()}
		if parts, ok := wordFieldParts[name]; ok {
			f.parts = parts
			return f, nil
		}
		a := cmp.Or(fm.Analyzer, impl.DefaultAnalyzer)
		if a == schema.AnalyzerCJK {
			f.cjk = true
			return f, nil
		}
		if f.analyzer = impl.AnalyzerNamed(a); f.analyzer == nil {
			return mappedField{}, fmt.Errorf("index mapping: field %q: no analyzer %q", name, a)
		}
		f.keyword = a == keyword.Name && !f.options.IncludeTermVectors()
		return f, nil
	}
	var fm fieldMapper
	var errs []error
	for _, f := range []struct {
		to   *mappedField
		name string
	}{
		{&fm.name, schema.Name}, {&fm.path, schema.Path}, {&fm.title, schema.Title}, {&fm.headings, schema.Headings},
		{&fm.meta, schema.Meta}, {&fm.lead, schema.Lead}, {&fm.content, schema.Content}, {&fm.contentCJK, schema.ContentCJK},
		{&fm.folders, schema.Folders}, {&fm.dir, schema.Dir}, {&fm.session, schema.Session}, {&fm.ext, schema.Ext},
	} {
		var err error
		*f.to, err = field(f.name)
		errs = append(errs, err)
	}
	return &fm, errors.Join(errs...)
}

// mapDocument makes the Bleve document of d, in the order of document's fields as the
// mapping walks them.
func (m *fieldMapper) mapDocument(id string, d *document) (*bdoc.Document, error) {
	doc := bdoc.NewDocument(id)
	doc.Fields = make([]bdoc.Field, 0, 11+len(d.Folders))
	for _, f := range []struct {
		m *mappedField
		v string
	}{
		{&m.name, d.Name}, {&m.path, d.Path}, {&m.title, d.Title}, {&m.headings, d.Headings},
		{&m.meta, d.Meta}, {&m.lead, d.Lead}, {&m.content, d.Content}, {&m.contentCJK, d.ContentCJK},
	} {
		doc.AddField(f.m.field(nil, f.v))
	}
	for i, folder := range d.Folders {
		doc.AddField(m.folders.field([]uint64{uint64(i)}, folder))
	}
	doc.AddField(m.dir.field(nil, d.Dir))
	doc.AddField(m.session.field(nil, d.Session))
	doc.AddField(m.ext.field(nil, d.Ext))
	doc.SetIndexed()
	return doc, nil
}

// field is f's field of the text v at array positions at; a wordField is analyzed now.
func (f *mappedField) field(at []uint64, v string) bdoc.Field {
	value := unsafe.Slice(unsafe.StringData(v), len(v)) // read, never written
	if f.keyword {
		return &keywordField{name: f.name, at: at, value: value, options: f.options}
	}
	if f.analyzer != nil || at != nil {
		return bdoc.NewTextFieldCustom(f.name, at, value, f.options, f.analyzer)
	}
	w := &wordField{name: f.name, value: value, options: f.options, parts: f.parts, cjk: f.cjk}
	w.Analyze()
	return w
}

// keywordField is a field of the keyword analyzer: its value is its one term, whatever it
// holds (the empty value too), once, at position 1. Bleve's text field would make a token,
// a stream of it and a map of one term to say so (TestMapperMapsAsBleve: the same terms
// and length).
type keywordField struct {
	name    string
	at      []uint64
	value   []byte
	options bindex.FieldIndexingOptions
}

var (
	_ bdoc.Field    = (*keywordField)(nil)
	_ segment.Terms = (*keywordField)(nil)
)

func (f *keywordField) Name() string                         { return f.name }
func (f *keywordField) ArrayPositions() []uint64             { return f.at }
func (f *keywordField) Options() bindex.FieldIndexingOptions { return f.options }
func (f *keywordField) Value() []byte                        { return f.value }
func (f *keywordField) NumPlainTextBytes() uint64            { return uint64(len(f.value)) }
func (f *keywordField) EncodedFieldType() byte               { return 't' }
func (f *keywordField) Analyze()                             {}
func (f *keywordField) AnalyzedLength() int                  { return 1 }
func (f *keywordField) Size() int {
	return int(unsafe.Sizeof(*f)) + len(f.name) + 8*len(f.at) + len(f.value)
}

// VisitTerms gives the segment's builder the one term (no positions: the mapping keeps
// no term vectors of a keyword field).
func (f *keywordField) VisitTerms(fn func(term []byte, freq int, positions []uint32) error) error {
	return fn(f.value, 1, nil)
}

// AnalyzedTokenFrequencies makes Bleve's form of the term, for a folder's field given
// more than once in a document and for the tests.
func (f *keywordField) AnalyzedTokenFrequencies() bindex.TokenFrequencies {
	return segment.TokenFrequencies(f)
}

func newMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := addAnalyzers(m); err != nil {
		return nil, err
	}
	// BM25 saturates repeated terms and normalises by length, so that one passing
	// mention in a long body weighs little against a name.
	m.ScoringModel = "bm25"
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	m.DefaultAnalyzer = schema.AnalyzerWord

	text := func(analyzer string, positions bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store = false
		f.IncludeInAll = false
		f.DocValues = false
		f.IncludeTermVectors = positions
		return f
	}
	doc := bleve.NewDocumentStaticMapping()
	for _, f := range schema.Ranked {
		a := schema.AnalyzerWord
		if f.Stemmed {
			a = schema.AnalyzerParts
		}
		doc.AddFieldMappingsAt(f.Name, text(a, f.Positions))
	}
	doc.AddFieldMappingsAt(schema.ContentCJK, text(schema.AnalyzerCJK, true))
	doc.AddFieldMappingsAt(schema.Folders, text(keyword.Name, false))
	doc.AddFieldMappingsAt(schema.Dir, text(keyword.Name, false))
	doc.AddFieldMappingsAt(schema.Session, text(keyword.Name, false))
	doc.AddFieldMappingsAt(schema.Ext, text(keyword.Name, false))
	m.DefaultMapping = doc
	return m, nil
}
