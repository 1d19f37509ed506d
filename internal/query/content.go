package query

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guide/guide/internal/guideyaml"
	"github.com/guide/guide/internal/projection"
)

// Kind says what a content request names.
type Kind int

// What a content request may name.
const (
	CategoryOrCollection Kind = iota // get_content: a category first, then a collection
	CategoryOnly                     // get_category_content
	CollectionOnly                   // get_collection_content
)

// DefaultMaxDocuments bounds the documents of one content response.
const DefaultMaxDocuments = 100

// ContentRequest is one call of get_content, get_category_content or get_collection_content.
type ContentRequest struct {
	Project string // the session's project; "" means no session
	Name    string
	Kind    Kind
	Pattern string    // "" for the categories' own patterns
	Now     time.Time // for templates; zero means time.Now()
}

// ContentResult is a successful content response.
type ContentResult struct {
	Value   string
	Message string
	Parts   []Part // what Value holds, in order
	// Partial, when set, lists the matching documents left out because another partition
	// keeps them and none of its replicas answered.
	Partial *ContentPartial
}

// Part is one document of a content response.
type Part struct {
	Category    string // the category it came from
	Path        string // in the project; for a template, its real path
	Location    string // guide://category/{category}/{path in the category}
	ContentType string
	Body        []byte
}

// match is a document selected for a response, with the category it came from.
type match struct {
	doc      *projection.Document
	category string
	dir      string
}

// Content answers the content tools from the catalog: it resolves the name to categories,
// matches their patterns (or the given one) over the folder tree, prefers a document to
// its template, renders templates, and formats one document as is or several as MIME
// multipart, within the response limits.
func Content(ctx context.Context, s *projection.Snapshot, req ContentRequest, lim Limits) (*ContentResult, *Error) {
	lim = lim.orDefault()
	if req.Project == "" {
		return nil, Errorf(ErrNoSession, "no active project session: this query process is not bound to a project (start guide-mcp with --root DIR or --project NAME)")
	}
	cfg := s.Config()
	cats, collection, qerr := resolveName(cfg, req)
	if qerr != nil {
		return nil, qerr
	}
	patterns, qerr := categoryPatterns(cfg, cats, req.Pattern)
	if qerr != nil {
		return nil, qerr
	}
	matches, err := selectDocuments(ctx, s, cfg, cats, patterns)
	if err != nil {
		return nil, Internal(ErrIO, err, "matching the pattern was interrupted")
	}
	if len(matches) == 0 {
		return nil, noMatches(cfg, req, cats, collection)
	}
	b := &builder{s: s, req: req, lim: lim, cfg: cfg, collection: collection}
	return b.build(matches)
}

// categoryPatterns compiles what each category matches: the request's pattern when given,
// else the category's own patterns.
func categoryPatterns(cfg *guideyaml.Config, cats []string, pattern string) (map[string][]*compiledPattern, *Error) {
	patterns := map[string][]*compiledPattern{}
	if pattern != "" {
		override, qerr := compilePattern(pattern)
		if qerr != nil {
			return nil, qerr
		}
		for _, c := range cats {
			patterns[c] = []*compiledPattern{override}
		}
		return patterns, nil
	}
	for _, c := range cats {
		for _, p := range cfg.Categories[c].Patterns {
			cp, qerr := compilePattern(p)
			if qerr != nil {
				return nil, Errorf(ErrUnknown, "category %q: %s", c, qerr.Message)
			}
			patterns[c] = append(patterns[c], cp)
		}
	}
	return patterns, nil
}

// selectDocuments matches the patterns over each category's folder, in category order then
// path order: a document once, never the configuration file, and a template only where its
// basename's document is not selected. It stops with the context's error when ctx ends.
func selectDocuments(ctx context.Context, s *projection.Snapshot, cfg *guideyaml.Config, cats []string, patterns map[string][]*compiledPattern) ([]match, error) {
	var matches []match
	seen := map[string]bool{}
	for _, c := range cats {
		cat := cfg.Categories[c]
		f, ok := s.Folder(cat.Dir)
		if !ok {
			continue
		}
		var found []*projection.Document
		emit := func(d *projection.Document) {
			if !seen[d.Path] && d.Path != cfg.Source {
				seen[d.Path] = true
				found = append(found, d)
			}
		}
		for _, cp := range patterns[c] {
			if _, err := cp.match(ctx, s, f, emit); err != nil {
				return nil, err
			}
		}
		found = preferDocuments(found, seen)
		slices.SortFunc(found, func(a, b *projection.Document) int { return strings.Compare(a.Path, b.Path) })
		for _, d := range found {
			matches = append(matches, match{doc: d, category: c, dir: cat.Dir})
		}
	}
	return matches, nil
}

// preferDocuments drops a template where its basename's document is also selected.
func preferDocuments(found []*projection.Document, seen map[string]bool) []*projection.Document {
	out := found[:0]
	for _, d := range found {
		if d.Template() && seen[strings.TrimSuffix(d.Path, projection.TemplateExt)] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// builder renders the selected documents and assembles the response within the limits.
type builder struct {
	s          *projection.Snapshot
	req        ContentRequest
	lim        Limits
	cfg        *guideyaml.Config
	collection string
	gone       elsewhere // bodies kept by a partition none of whose replicas answered
}

func (b *builder) build(matches []match) (*ContentResult, *Error) {
	var notes []string
	total := len(matches)
	var omitted []string
	if len(matches) > b.lim.MaxDocuments {
		for _, m := range matches[b.lim.MaxDocuments:] {
			omitted = append(omitted, m.doc.Path)
		}
		matches = matches[:b.lim.MaxDocuments]
	}
	parts, unreadable, qerr := b.parts(matches)
	if qerr != nil {
		return nil, qerr
	}
	if len(unreadable) > 0 {
		notes = append(notes, fmt.Sprintf("%d matching document(s) have no text content and were left out: %s",
			len(unreadable), strings.Join(unreadable, ", ")))
	}
	partial := b.gone.partial()
	if partial != nil {
		notes = append(notes, partial.Note)
	}
	if len(parts) == 0 && partial != nil {
		return &ContentResult{Message: strings.Join(notes, "; "), Partial: partial}, nil
	}
	if len(parts) == 0 {
		return nil, Errorf(ErrNoMatches, "%d document(s) match, but none has text content: %s", len(unreadable), strings.Join(unreadable, ", "))
	}

	res := &ContentResult{Partial: partial}
	budget := b.lim.MaxChars - 1000 // room for the JSON envelope and the message
	var note string
	if len(parts) == 1 && len(omitted) == 0 {
		var p Part
		p, note = single(parts[0], budget)
		res.Value, res.Parts = string(p.Body), []Part{p}
	} else {
		var left []string
		res.Parts, note, left = fit(parts, budget)
		omitted = append(omitted, left...)
		if len(res.Parts) == 1 && len(omitted) == 0 {
			res.Value = string(res.Parts[0].Body)
		} else {
			res.Value = Multipart(res.Parts)
		}
	}
	if note != "" {
		notes = append(notes, note)
	}
	if len(omitted) > 0 {
		notes = append(notes, fmt.Sprintf("returned %d of %d matching documents (limits: %d documents, %d characters); left out: %s. "+
			"Narrow the pattern to get the rest, e.g. a subfolder (\"sub/*.md\") or a name (\"intro\").",
			len(res.Parts), total, b.lim.MaxDocuments, b.lim.MaxChars, listOrNone(omitted)))
	}
	res.Message = strings.Join(notes, "; ")
	return res, nil
}

// parts reads the matches that have text content, rendering templates; unreadable lists the
// others with their status.
func (b *builder) parts(matches []match) (parts []Part, unreadable []string, qerr *Error) {
	for _, m := range matches {
		d := m.doc
		if !d.Readable() {
			unreadable = append(unreadable, fmt.Sprintf("%s (%s)", d.Path, d.Status))
			continue
		}
		body, err := b.s.Content(d)
		if b.gone.add(err) {
			// Read the others: the catalog fetches every body asked for at once, and
			// those it cannot are left out, named.
			continue
		}
		if err != nil {
			return nil, nil, Internal(ErrIO, err, "reading %s", d.Path)
		}
		name := d.Path
		if d.Template() {
			rendered, qerr := b.render(m, body)
			if qerr != nil {
				return nil, nil, qerr
			}
			body = rendered
			name = strings.TrimSuffix(d.Path, projection.TemplateExt)
		}
		parts = append(parts, Part{Category: m.category, Path: d.Path, Body: body,
			Location:    Location(m.category, relTo(m.dir, name)),
			ContentType: ContentType(path.Base(name))})
	}
	return parts, unreadable, nil
}

// single cuts a lone document to the budget; note says where to read the rest.
func single(p Part, budget int) (Part, string) {
	if len(p.Body) <= budget {
		return p, ""
	}
	cut := cutAt(p.Body, budget)
	note := fmt.Sprintf("%s is %d bytes, over the response limit; only the first %d characters are shown. "+
		"Read the rest with view(path=%q, offset=%d).", p.Path, len(p.Body), utf8.RuneCount(p.Body[:cut]), p.Path, utf8.RuneCount(p.Body[:cut]))
	p.Body = p.Body[:cut]
	return p, note
}

// fit keeps the parts of a multipart response that the budget holds, in order: when not
// even the first fits whole, it is cut (and note says so). left are the paths left out.
func fit(parts []Part, budget int) (kept []Part, note string, left []string) {
	kept = parts[:0:0]
	size := multipartOverhead
	for i, p := range parts {
		need := partSize(p)
		if size+need > budget {
			if i == 0 {
				cut := cutAt(p.Body, budget-size-partSize(Part{Location: p.Location, ContentType: p.ContentType}))
				note = fmt.Sprintf("%s is truncated to %d characters; read it whole with view(path=%q)",
					p.Path, utf8.RuneCount(p.Body[:cut]), p.Path)
				p.Body = p.Body[:cut]
				kept = append(kept, p)
				i++
			}
			for _, q := range parts[i:] {
				left = append(left, q.Path)
			}
			break
		}
		size += need
		kept = append(kept, p)
	}
	return kept, note, left
}

// cutAt returns a length of at most n bytes of b that ends on a character boundary.
func cutAt(b []byte, n int) int {
	if n <= 0 {
		return 0
	}
	if n >= len(b) {
		return len(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

func (b *builder) render(m match, body []byte) ([]byte, *Error) {
	now := b.req.Now
	if now.IsZero() {
		now = time.Now()
	}
	basename := m.doc.Basename()
	ctx := TemplateContext{
		Project:    b.req.Project,
		Category:   m.category,
		Collection: b.collection,
		Document:   basename,
		Path:       strings.TrimSuffix(m.doc.Path, projection.TemplateExt),
		Date:       now.Format("2006-01-02"),
		Time:       now.Format("15:04:05"),
	}
	out, err := Render(b.s, m.doc, body, ctx)
	if err != nil {
		return nil, Errorf(ErrTemplate, "template %s: %v", m.doc.Path, err)
	}
	return out, nil
}

// Location is the Content-Location of a document of a category.
func Location(category, rel string) string {
	return "guide://category/" + escapeIRI(category) + "/" + escapeIRI(rel)
}

// escapeIRI percent-encodes what cannot stand in a URI path (white space, controls,
// and the delimiters % ? # and the like), keeping '/' and other UTF-8 text readable.
func escapeIRI(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || strings.IndexByte(`%?#"<>\^`+"`{|}[]", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
