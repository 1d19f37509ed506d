// Package projection folds the event stream into the read models the queries use: the
// catalog (path → metadata and content, the folder tree, the basename/template view), and
// the runner that feeds every projection from the stream and records how far each got.
//
// # Lock order
//
// The query process's locks, written down once. A goroutine holding one of them takes only
// locks further down the list, and waits on nothing slow (the network, a client, another
// projection) while it holds one, except where the list says so.
//
//  1. freshness.Tracker's reader of unapplied events (its turn, a lock that a waiting
//     call gives up when its context ends): held while it reads the stream (requests
//     bounded by the call's timeout), so that calls take turns on one consumer; it takes
//     no other lock.
//  2. session.Registry.mu: released before the catalog is read.
//  3. Catalog.mu (RWMutex), then a bbolt transaction inside it: Apply writes under it;
//     Read holds it for the snapshot's whole life, so a reader must not wait under it for
//     anything slow (but a damaged body, read again from the stream within fetchTimeout). Search reads the catalog before and after it searches the index,
//     never during; subscriptions read resources on their own goroutine, not the runner's.
//  4. index.Index.mu (RWMutex): guards the Bleve handle against Reset and Close; never
//     taken under Catalog.mu by a query.
//  5. Leaves, under which nothing else is taken: Runner.mu, Runner.appliedMu, Catalog.scanMu,
//     Catalog.repairMu and damageMu, Index.damageMu, freshness.Tracker.mu and recent.mu, mcpserver's Server.connMu and subscriptions.mu
//     (released before any resource is read or any notification sent).
package projection

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/text"
)

// TemplateExt marks a template: "doc.md.mustache" is a template whose basename is "doc.md".
const TemplateExt = ".mustache"

// Document is the catalog's record of one file of the tree.
type Document struct {
	Path   string        `json:"path"`
	Size   int64         `json:"size"`
	Mtime  time.Time     `json:"mtime"`
	Hash   string        `json:"hash,omitempty"`
	Status events.Status `json:"status"`
	Reason string        `json:"reason,omitempty"`
	Words  int           `json:"words"`
	Title  string        `json:"title,omitempty"`
	Seq    uint64        `json:"seq"` // the stream sequence of the event that wrote this record

	// Session is the token of the MCP session a session document is attached to; "" for a
	// document of the tree. A session document's Path is its file name: it is in no folder.
	Session string `json:"session,omitempty"`
}

// Summary is the rest of a document's summary besides its Title: derived when the event
// is applied and stored in the document's record, but not held in memory with it, since
// only get_summary reads it (Snapshot.Summary) and it weighs more than the rest of the
// record (a third of a GB at a million documents).
type Summary struct {
	Outline        []Heading `json:"outline,omitempty"`
	FirstParagraph string    `json:"first_paragraph,omitempty"`
}

// Heading is one Markdown heading of a document's outline.
type Heading struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
}

// Key names the document in either family: the tree's or a session's.
func (d *Document) Key() events.DocKey { return events.DocKey{Session: d.Session, Path: d.Path} }

// Name is the file name, the last element of the path.
func (d *Document) Name() string {
	// Paths in the catalog are clean, so the base is what follows the last slash; this is
	// the hot comparison of folder sorts, where path.Base's trimming costs a catch-up.
	if i := strings.LastIndexByte(d.Path, '/'); i >= 0 {
		return d.Path[i+1:]
	}
	return d.Path
}

// Dir is the folder holding the document ("" for the root).
func (d *Document) Dir() string { return ParentOf(d.Path) }

// Template reports whether the document is a template.
func (d *Document) Template() bool { return strings.HasSuffix(d.Path, TemplateExt) }

// Basename is the name the document answers to: its name less any ".mustache".
func (d *Document) Basename() string { return strings.TrimSuffix(d.Name(), TemplateExt) }

// Readable reports whether the catalog holds the document's content.
func (d *Document) Readable() bool { return d.Status == events.StatusOK }

// ParentOf is the folder holding the path p: "a/b/c.md" → "a/b"; "" (the root) for a
// name at the top.
func ParentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// Summary bounds: a summary stays short whatever the document.
const (
	MaxOutline        = 100 // headings
	MaxHeadingLen     = 200 // bytes per heading
	MaxFirstParagraph = 500 // bytes
)

// Describe derives what the catalog records of a readable document besides its metadata,
// from one reading of its Markdown (text.ParseMarkdown, which the index ranks by too): its
// word count as a reader counts words, its title, and its summary — the outline, at most
// MaxOutline headings of MaxHeadingLen bytes, and the first paragraph, at most
// MaxFirstParagraph bytes.
func Describe(b []byte) (words int, title string, sum Summary) {
	return describe(text.ParseMarkdown(b), b)
}

// describe is Describe of b parsed as md.
func describe(md text.Markdown, b []byte) (words int, title string, sum Summary) {
	for _, h := range md.Headings[:min(len(md.Headings), MaxOutline)] {
		sum.Outline = append(sum.Outline, Heading{Level: h.Level, Text: clip(h.Text, MaxHeadingLen)})
	}
	sum.FirstParagraph = clip(md.FirstParagraph, MaxFirstParagraph)
	return text.ReaderWords(b), md.Title, sum
}

// clip shortens s to at most n bytes on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
