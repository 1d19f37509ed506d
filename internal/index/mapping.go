package index

import (
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/guide/guide/internal/index/schema"
)

// mapDocument makes the Bleve document of d as the mapping does, with the fields of the
// word and parts analyzers analyzed by wordField, here rather than when scorch builds the
// batch (see Prepare). The document keeps no composite field: the mapping puts no field
// in Bleve's _all (TestNoFieldIsInAll), whose composite would be an empty field of every
// document, and scorch would ask each field for Bleve's form of its terms to compose it.
func (x *Index) mapDocument(id string, d *document) (*bdoc.Document, error) {
	return mapWith(x.idx.Mapping(), id, d)
}

// mapWith is mapDocument with the mapping m.
func mapWith(m mapping.IndexMapping, id string, d *document) (*bdoc.Document, error) {
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
