package query

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guide/guide/internal/glob"
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
}

// Part is one document of a content response.
type Part struct {
	Category    string // the category it came from
	Path        string // in the project; for a template, its real path
	Location    string // guide://category/{category}/{path in the category}
	ContentType string
	Body        []byte
}

// syntaxHelp is shown with every invalid_pattern error.
const syntaxHelp = "Pattern syntax: * matches within a name, ** across folders, ? one character, " +
	"[abc] or [a-z] one character of a set, \\ escapes; a pattern without an extension matches every " +
	"extension. Examples: \"*.md\", \"intro\", \"guides/*.md\", \"**/*.py\"."

// compiledPattern is a pattern split on '/', matched folder by folder over the catalog.
type compiledPattern struct {
	src  string
	segs []segment
}

type segment struct {
	m        *glob.Matcher
	alt      *glob.Matcher // for the last segment without an extension: m + ".*"
	globstar bool          // "**" alone: zero or more folders
	// rest is set on a segment holding "**" inside it: the pattern from here on is
	// matched against whole relative paths below the folder.
	rest, restAlt *glob.Matcher
}

func compilePattern(p string) (*compiledPattern, *Error) {
	bad := func(format string, args ...any) *Error {
		return Errorf(ErrInvalidPattern, "invalid pattern %q: %s. %s", p, fmt.Sprintf(format, args...), syntaxHelp)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return nil, bad("it contains a NUL byte")
	}
	if strings.HasPrefix(p, "/") || hasDrive(p) || strings.HasPrefix(p, "~") {
		return nil, bad("patterns are relative to the category's folder")
	}
	raw := strings.Split(p, "/")
	var parts []string
	for _, s := range raw {
		switch s {
		case "", ".":
			continue
		case "..":
			return nil, bad("'..' would leave the category's folder")
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return nil, bad("it is empty")
	}
	if _, err := glob.Compile(strings.Join(parts, "/")); err != nil {
		return nil, bad("%s", strings.TrimPrefix(err.Error(), glob.ErrSyntax.Error()+": "))
	}
	cp := &compiledPattern{src: p}
	var cerr error
	compile := func(s string) *glob.Matcher {
		m, err := glob.Compile(s)
		if err != nil && cerr == nil {
			cerr = err
		}
		return m
	}
	extensionless := !strings.Contains(parts[len(parts)-1], ".")
	for i, s := range parts {
		if strings.Trim(s, "*") == "" && len(s) >= 2 {
			cp.segs = append(cp.segs, segment{globstar: true})
			continue
		}
		if strings.Contains(s, "**") {
			rest := strings.Join(parts[i:], "/")
			seg := segment{rest: compile(rest)}
			if extensionless {
				seg.restAlt = compile(rest + ".*")
			}
			cp.segs = append(cp.segs, seg)
			break
		}
		seg := segment{m: compile(s)}
		if i == len(parts)-1 && extensionless {
			seg.alt = compile(s + ".*")
		}
		cp.segs = append(cp.segs, seg)
	}
	if cerr != nil {
		// '/' always separates folders: "a\\/b" escapes nothing across it.
		return nil, bad("%s", strings.TrimPrefix(cerr.Error(), glob.ErrSyntax.Error()+": "))
	}
	return cp, nil
}

// matchNames reports whether a document answers to m (or alt): by its name, or for a
// template by its basename too. rel is the document's path relative to where m applies.
func matchNames(m, alt *glob.Matcher, rel string, d *projection.Document) bool {
	try := func(s string) bool { return m.Match(s) || alt != nil && alt.Match(s) }
	if try(rel) {
		return true
	}
	return d.Template() && try(strings.TrimSuffix(rel, projection.TemplateExt))
}

// walk emits the documents below f that match the pattern from segment i on.
func (cp *compiledPattern) walk(s *projection.Snapshot, f *projection.Folder, i int, emit func(*projection.Document)) {
	seg := &cp.segs[i]
	last := i == len(cp.segs)-1
	switch {
	case seg.globstar:
		if last {
			eachDoc(f, func(d *projection.Document) { emit(d) })
			return
		}
		cp.walk(s, f, i+1, emit)
		for _, sub := range f.Folders() {
			cp.walk(s, sub, i, emit)
		}
	case seg.rest != nil:
		eachDoc(f, func(d *projection.Document) {
			if matchNames(seg.rest, seg.restAlt, relTo(f.Path, d.Path), d) {
				emit(d)
			}
		})
	case last:
		if lit, ok := seg.m.Literal(); ok && seg.alt == nil {
			for _, name := range []string{lit, lit + projection.TemplateExt} {
				if d, ok := s.Document(joinPath(f.Path, name)); ok {
					emit(d)
				}
			}
			return
		}
		for _, d := range f.Docs() {
			if matchNames(seg.m, seg.alt, d.Name(), d) {
				emit(d)
			}
		}
	default:
		if lit, ok := seg.m.Literal(); ok {
			if sub, ok := s.Folder(joinPath(f.Path, lit)); ok {
				cp.walk(s, sub, i+1, emit)
			}
			return
		}
		for _, sub := range f.Folders() {
			if seg.m.Match(sub.Name()) {
				cp.walk(s, sub, i+1, emit)
			}
		}
	}
}

// eachDoc calls fn for every document in f and below it, in path order.
func eachDoc(f *projection.Folder, fn func(*projection.Document)) {
	for _, d := range f.Docs() {
		fn(d)
	}
	for _, sub := range f.Folders() {
		eachDoc(sub, fn)
	}
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func relTo(dir, p string) string {
	if dir == "" {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
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
func Content(s *projection.Snapshot, req ContentRequest, lim Limits) (*ContentResult, *Error) {
	lim = lim.orDefault()
	if req.Project == "" {
		return nil, Errorf(ErrNoSession, "no active project session: this query process is not bound to a project (start guide-mcp with --root DIR or --project NAME)")
	}
	cfg := s.Config()
	cats, collection, qerr := resolveName(cfg, req)
	if qerr != nil {
		return nil, qerr
	}
	var patterns map[string][]*compiledPattern // category → patterns
	var override *compiledPattern
	if req.Pattern != "" {
		if override, qerr = compilePattern(req.Pattern); qerr != nil {
			return nil, qerr
		}
	} else {
		patterns = map[string][]*compiledPattern{}
		for _, c := range cats {
			for _, p := range cfg.Categories[c].Patterns {
				cp, qerr := compilePattern(p)
				if qerr != nil {
					return nil, Errorf(ErrUnknown, "category %q: %s", c, qerr.Message)
				}
				patterns[c] = append(patterns[c], cp)
			}
		}
	}

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
		if override != nil {
			override.walk(s, f, 0, emit)
		} else {
			for _, cp := range patterns[c] {
				cp.walk(s, f, 0, emit)
			}
		}
		found = preferDocuments(found, seen)
		slices.SortFunc(found, func(a, b *projection.Document) int { return strings.Compare(a.Path, b.Path) })
		for _, d := range found {
			matches = append(matches, match{doc: d, category: c, dir: cat.Dir})
		}
	}
	if len(matches) == 0 {
		return nil, noMatches(cfg, req, cats, collection)
	}

	b := &builder{s: s, req: req, lim: lim, cfg: cfg, collection: collection}
	return b.build(matches)
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

func resolveName(cfg *guideyaml.Config, req ContentRequest) (cats []string, collection string, qerr *Error) {
	name := req.Name
	if req.Kind != CollectionOnly {
		if _, ok := cfg.Categories[name]; ok {
			return []string{name}, "", nil
		}
	}
	if req.Kind != CategoryOnly {
		if c, ok := cfg.Collections[name]; ok {
			return c.Categories, name, nil
		}
	}
	catNames, colNames := cfg.Names()
	what := map[Kind]string{CategoryOrCollection: "Category or collection", CategoryOnly: "Category", CollectionOnly: "Collection"}[req.Kind]
	msg := fmt.Sprintf("%s '%s' not found", what, name)
	if req.Kind != CollectionOnly {
		msg += fmt.Sprintf("; categories: %s", listOrNone(catNames))
	}
	if req.Kind != CategoryOnly {
		msg += fmt.Sprintf("; collections: %s", listOrNone(colNames))
	}
	return nil, "", Errorf(ErrNotFound, "%s", msg)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	const max = 30
	if len(names) > max {
		return strings.Join(names[:max], ", ") + fmt.Sprintf(", … (%d more)", len(names)-max)
	}
	return strings.Join(names, ", ")
}

func noMatches(cfg *guideyaml.Config, req ContentRequest, cats []string, collection string) *Error {
	where := fmt.Sprintf("category '%s'", cats[0])
	if collection != "" {
		where = fmt.Sprintf("collection '%s' (categories %s)", collection, listOrNone(cats))
	}
	if req.Pattern != "" {
		return Errorf(ErrNoMatches, "no documents in %s match pattern '%s'", where, req.Pattern)
	}
	var pats []string
	for _, c := range cats {
		pats = append(pats, cfg.Categories[c].Patterns...)
	}
	slices.Sort(pats)
	return Errorf(ErrNoMatches, "no documents in %s match its patterns (%s)", where, strings.Join(slices.Compact(pats), ", "))
}

// builder renders the selected documents and assembles the response within the limits.
type builder struct {
	s          *projection.Snapshot
	req        ContentRequest
	lim        Limits
	cfg        *guideyaml.Config
	collection string
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
	var parts []Part
	var unreadable []string
	for _, m := range matches {
		d := m.doc
		if !d.Readable() {
			unreadable = append(unreadable, fmt.Sprintf("%s (%s)", d.Path, d.Status))
			continue
		}
		body, err := b.s.Content(d)
		if err != nil {
			return nil, Errorf(ErrIO, "reading %s: %v", d.Path, err)
		}
		name := d.Path
		if d.Template() {
			rendered, qerr := b.render(m, body)
			if qerr != nil {
				return nil, qerr
			}
			body = rendered
			name = strings.TrimSuffix(d.Path, projection.TemplateExt)
		}
		parts = append(parts, Part{Category: m.category, Path: d.Path, Body: body,
			Location:    Location(m.category, relTo(m.dir, name)),
			ContentType: ContentType(path.Base(name))})
	}
	if len(unreadable) > 0 {
		notes = append(notes, fmt.Sprintf("%d matching document(s) have no text content and were left out: %s",
			len(unreadable), strings.Join(unreadable, ", ")))
	}
	if len(parts) == 0 {
		return nil, Errorf(ErrNoMatches, "%d document(s) match, but none has text content: %s", len(unreadable), strings.Join(unreadable, ", "))
	}

	res := &ContentResult{}
	budget := b.lim.MaxChars - 1000 // room for the JSON envelope and the message
	if len(parts) == 1 && len(omitted) == 0 {
		p := parts[0]
		if len(p.Body) > budget {
			cut := cutAt(p.Body, budget)
			notes = append(notes, fmt.Sprintf("%s is %d bytes, over the response limit; only the first %d characters are shown. "+
				"Read the rest with view(path=%q, offset=%d).", p.Path, len(p.Body), utf8.RuneCount(p.Body[:cut]), p.Path, utf8.RuneCount(p.Body[:cut])))
			p.Body = p.Body[:cut]
		}
		res.Value, res.Parts = string(p.Body), []Part{p}
	} else {
		kept := parts[:0:0]
		size := multipartOverhead
		for i, p := range parts {
			need := partSize(p)
			if size+need > budget {
				if i == 0 {
					cut := cutAt(p.Body, budget-size-partSize(Part{Location: p.Location, ContentType: p.ContentType}))
					notes = append(notes, fmt.Sprintf("%s is truncated to %d characters; read it whole with view(path=%q)",
						p.Path, utf8.RuneCount(p.Body[:cut]), p.Path))
					p.Body = p.Body[:cut]
					kept = append(kept, p)
					i++
				}
				for _, q := range parts[i:] {
					omitted = append(omitted, q.Path)
				}
				break
			}
			size += need
			kept = append(kept, p)
		}
		res.Parts = kept
		if len(kept) == 1 && len(omitted) == 0 {
			res.Value = string(kept[0].Body)
		} else {
			res.Value = Multipart(kept)
		}
	}
	if len(omitted) > 0 {
		notes = append(notes, fmt.Sprintf("returned %d of %d matching documents (limits: %d documents, %d characters); left out: %s. "+
			"Narrow the pattern to get the rest, e.g. a subfolder (\"sub/*.md\") or a name (\"intro\").",
			len(res.Parts), total, b.lim.MaxDocuments, b.lim.MaxChars, listOrNone(omitted)))
	}
	res.Message = strings.Join(notes, "; ")
	return res, nil
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
