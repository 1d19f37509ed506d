package index

import (
	"path"
	"strings"
	"unsafe"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/text"
)

// document is what the mapping indexes for one file.
// Stemmed forms are not indexed: a search expands a word to the indexed words of the
// same stem (see wordQuery), which costs a dictionary look-up per search instead of a
// second analysis and a second set of postings of every text.
type document struct {
	Name       string   `json:"name"`
	Path       string   `json:"path,omitempty"`
	Title      string   `json:"title,omitempty"`
	Headings   string   `json:"headings,omitempty"`
	Meta       string   `json:"meta,omitempty"`
	Lead       string   `json:"lead,omitempty"`
	Content    string   `json:"content,omitempty"`
	ContentCJK string   `json:"content_cjk,omitempty"`
	Folders    []string `json:"folders,omitempty"`
	Dir        string   `json:"dir,omitempty"`
	Session    string   `json:"session"`
	Ext        string   `json:"ext,omitempty"`
}

// field returns the text of one of the ranked fields.
func (d *document) field(name string) string {
	switch name {
	case schema.Name:
		return d.Name
	case schema.Path:
		return d.Path
	case schema.Title:
		return d.Title
	case schema.Headings:
		return d.Headings
	case schema.Meta:
		return d.Meta
	case schema.Lead:
		return d.Lead
	case schema.Content:
		return d.Content
	}
	return ""
}

// newDocument derives the indexed fields of an upserted file. A file without readable
// content is still indexed by its name, so that it can be found.
func newDocument(handoff *text.MarkdownHandoff, e *events.Event) *document {
	name := path.Base(e.Path)
	name = strings.TrimSuffix(name, projection.TemplateExt)
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if stem == "" { // ".env": the name is the extension
		stem = name
	}
	d := &document{Ext: strings.ToLower(strings.TrimPrefix(ext, ".")), Session: schema.TreeSession}
	if e.Session != "" {
		d.Session = e.Session // a session document belongs to no folder of the tree
	} else {
		d.Folders, d.Dir = documentFolders(e.Path), schema.DirKey(path.Dir(e.Path))
		if dir := path.Dir(e.Path); dir != "." {
			d.Path = dir
		}
	}
	if e.Status == events.StatusOK && events.HashContent(e.Content) == e.Hash {
		// The event's bytes, not a copy of them (a third of a gigabyte of garbage at 100k
		// documents): an event's content is its message's own data, never changed once
		// decoded.
		d.Content = unsafe.String(unsafe.SliceData(e.Content), len(e.Content))
		if text.HasCJK(d.Content) {
			d.ContentCJK = d.Content
		}
		md := handoff.Take(e.Seq, e.Hash, e.Content)
		d.Title, d.Headings, d.Meta, d.Lead = text.PlainText(md.Title), headingsField(md.Headings), md.Meta, md.Lead
	}
	d.Name = stem
	return d
}

// maxHeadingsBytes bounds the headings field: a field is ranked on a few words, whatever
// the document.
const maxHeadingsBytes = 8000

// headingsField is the headings field of a document with headings hs: the plain text of
// each (text.PlainText), one a line, as many as fit in maxHeadingsBytes.
func headingsField(hs []text.Heading) string {
	var b strings.Builder
	for _, h := range hs {
		if t := text.PlainText(h.Text); b.Len()+len(t) < maxHeadingsBytes {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// documentFolders returns every folder above a document's path, outermost first, the root
// left out: "a/b/c.md" → ["a", "a/b"].
func documentFolders(p string) []string {
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}
