package web

import (
	"bytes"
	"context"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
)

// page is what the layout shows around every page's own content.
type page struct {
	Title       string
	Project     string
	CSRF        string
	Query       string // the search box's text
	Scope       string // the search box's scope: "" (focus) or "all"
	Focus       string // the session's focus folder
	Within      string // a folder the search box offers to search in ("" for none)
	WithinOn    bool   // and whether it is ticked
	Status      statusLine
	Attachments []query.ListEntry
	MaxUpload   int64
	SignOut     bool // a token is configured: offer to sign out
	ChangesOn   bool // the page of recent changes is served
	Here        string
	Crumbs      []crumb
	Body        any
}

type crumb struct {
	Name string
	Href string
}

// render writes a page; a template failure is logged and answered as a plain error,
// since half a page may have been lost.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name string, p *page) {
	p.Project = s.Project
	if p.CSRF == "" && rawSession(r) != "" {
		p.CSRF = s.csrfToken(r)
	}
	p.SignOut = s.Token != ""
	p.ChangesOn = s.Changes != nil
	p.Here = r.URL.RequestURI()
	if r.Method != http.MethodGet {
		// The answer to a form: its forms return where that form came from.
		p.Here = localPath(r.PostFormValue("return"))
	}
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, "layout.html", p); err != nil {
		s.Logger.Error("rendering a page", "page", name, "err", err)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// chrome fills what every signed-in page shows: the session's focus and attachments, the
// status line, the search box.
func (s *Server) chrome(r *http.Request, p *page) *page {
	c := s.contexts(r)
	p.Focus = c.Focus
	p.Attachments = s.sessionDocuments(r)
	p.MaxUpload = s.maxUpload()
	if s.Freshness != nil {
		p.Status = describe(s.Freshness.Status(r.Context()))
	}
	return p
}

// contexts are the browser session's focus and history. A session whose cookie is being
// issued with this very answer has none yet, and is not registered: a visitor, or a
// crawler, that never comes back leaves nothing behind.
func (s *Server) contexts(r *http.Request) query.Contexts {
	if fresh, _ := r.Context().Value(freshKey{}).(bool); fresh {
		return query.Contexts{Session: sessionToken(r)}
	}
	return s.Sessions.Contexts(sessionID(r))
}

func (s *Server) maxUpload() int64 {
	if s.Sessions.MaxDocBytes > 0 {
		return s.Sessions.MaxDocBytes
	}
	return sessionDefaultMax
}

// errorBody is the content of an error page.
type errorBody struct {
	Code    int
	Message string
}

// fail answers an error: a page for a browser, JSON for a script.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if wantsJSON(r) {
		writeJSON(w, code, map[string]string{"error": msg})
		return
	}
	p := &page{Title: http.StatusText(code), Body: errorBody{Code: code, Message: msg}}
	if rawSession(r) != "" && s.signedIn(r) {
		s.chrome(r, p)
	}
	s.render(w, r, code, "error", p)
}

// failQuery answers an error of the query layer with the status code its type means.
func (s *Server) failQuery(w http.ResponseWriter, r *http.Request, e *query.Error) {
	code := http.StatusInternalServerError
	switch e.Type {
	case query.ErrNotFound, query.ErrNoMatches:
		code = http.StatusNotFound
	case query.ErrInvalidPath, query.ErrInvalidArgument, query.ErrInvalidPattern, query.ErrNoSession:
		code = http.StatusBadRequest
	case query.ErrNotReady:
		code = http.StatusServiceUnavailable
	case query.ErrTooLarge:
		code = http.StatusRequestEntityTooLarge
	}
	if e.Cause != nil {
		s.Logger.Error("internal failure", "path", r.URL.Path, "err", e.Cause)
	}
	s.fail(w, r, code, e.Message)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, "There is no page at this address.")
}

// read runs fn on a catalog snapshot, once the catalog has held a complete scan (or
// InitialWait passed): a new process's first pages do not say a folder is missing
// because the first scan has not reached it yet.
func (s *Server) read(ctx context.Context, fn func(*projection.Snapshot) *query.Error) *query.Error {
	s.waitScanned(ctx)
	var qerr *query.Error
	if err := s.Catalog.Read(func(snap *projection.Snapshot) error {
		qerr = fn(snap)
		return nil
	}); err != nil {
		return query.Internal(query.ErrIO, err, "reading the catalog")
	}
	return qerr
}

// waitScanned waits, up to InitialWait, for a catalog that has never held a complete scan.
func (s *Server) waitScanned(ctx context.Context) {
	select {
	case <-s.Catalog.Scanned():
	default:
		t := time.NewTimer(s.InitialWait)
		select {
		case <-s.Catalog.Scanned():
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// viewHref is the address of a path of the tree, each segment escaped.
func viewHref(p string) string {
	if p == "" {
		return "/"
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/view/" + strings.Join(segs, "/")
}

func sessionHref(name string) string { return "/session/" + url.PathEscape(name) }

func availableHref(p string) string {
	if p == "" {
		return "/available/"
	}
	return "/available/" + strings.TrimPrefix(viewHref(p), "/view/")
}

// crumbs are the links from the root down to p's folder (p itself excluded).
func (s *Server) crumbs(p string) []crumb {
	out := []crumb{{Name: s.Project, Href: "/"}}
	if p == "" {
		return out
	}
	parts := strings.Split(p, "/")
	for i := range parts[:len(parts)-1] {
		q := strings.Join(parts[:i+1], "/")
		out = append(out, crumb{Name: parts[i], Href: viewHref(q)})
	}
	return out
}

// folderBody is a folder page: its listing, and what focusing on it makes available.
type folderBody struct {
	*query.FolderView
	Root      bool
	Focused   bool
	Available availability
	NextHref  string
}

// availability counts the documents a focus on a folder makes available, by context,
// from the folder totals, without walking the documents.
type availability struct {
	Focus, Descendant, Ancestor, Session int
	Href                                 string
}

func (a availability) Total() int { return a.Focus + a.Descendant + a.Ancestor + a.Session }

func (s *Server) home(w http.ResponseWriter, r *http.Request) { s.showPath(w, r, "") }

func (s *Server) view(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("path")
	if p == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.showPath(w, r, p)
}

// offset reads the page's offset argument; a bad one is answered with 400 and ok false.
func (s *Server) offset(w http.ResponseWriter, r *http.Request) (int, bool) {
	n, ok := offsetArg(r, "offset")
	if !ok {
		s.fail(w, r, http.StatusBadRequest, "offset must be a whole number, 0 or more.")
	}
	return n, ok
}

func offsetArg(r *http.Request, name string) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 0
}

// showPath shows a folder or a document of the tree, as the view tool does.
func (s *Server) showPath(w http.ResponseWriter, r *http.Request, p string) {
	offset, ok := s.offset(w, r)
	if !ok {
		return
	}
	pg := s.chrome(r, &page{})
	var out any
	var avail availability
	qerr := s.read(r.Context(), func(snap *projection.Snapshot) *query.Error {
		var qerr *query.Error
		out, qerr = query.View(snap, p, offset, s.Limits)
		if f, ok := out.(*query.FolderView); ok && qerr == nil {
			avail = countAvailable(snap, f.Path)
			avail.Session = len(pg.Attachments)
		}
		return qerr
	})
	if qerr != nil {
		s.failQuery(w, r, qerr)
		return
	}
	switch v := out.(type) {
	case *query.FolderView:
		if v.Path != p {
			http.Redirect(w, r, viewHref(v.Path), http.StatusSeeOther)
			return
		}
		avail.Href = availableHref(v.Path)
		body := folderBody{FolderView: v, Root: v.Path == "", Focused: pg.Focus == v.Path, Available: avail}
		if v.Truncated {
			body.NextHref = viewHref(v.Path) + "?offset=" + strconv.Itoa(v.NextOffset)
		}
		pg.Title, pg.Crumbs, pg.Body, pg.Within = v.Name, s.crumbs(v.Path), body, v.Path
		if v.Path == "" {
			pg.Title, pg.Crumbs = s.Project, nil
		}
		s.render(w, r, http.StatusOK, "folder", pg)
	case *query.DocumentView:
		if v.Path != p {
			// Resolved without its extension, or by a template's basename: show the
			// document at its own address.
			http.Redirect(w, r, viewHref(v.Path), http.StatusSeeOther)
			return
		}
		pg.Title, pg.Crumbs, pg.Body, pg.Within = v.Name, s.crumbs(v.Path), s.documentBody(v, viewHref(v.Path)), parentDir(v.Path)
		s.render(w, r, http.StatusOK, "document", pg)
	}
}

func countAvailable(snap *projection.Snapshot, folder string) availability {
	var a availability
	if f, ok := snap.Folder(folder); ok {
		a.Focus = len(f.Docs())
		a.Descendant = f.Documents - a.Focus
	}
	for dir := folder; dir != ""; {
		dir = parentDir(dir)
		if f, ok := snap.Folder(dir); ok {
			a.Ancestor += len(f.Docs())
		}
	}
	return a
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// documentBody is a document page: metadata and the content, rendered.
type documentBody struct {
	*query.DocumentView
	Session  bool
	HTML     template.HTML // rendered Markdown, or the text in a pre
	PrevHref string
	NextHref string
	Part     string
}

func (s *Server) documentBody(v *query.DocumentView, href string) documentBody {
	b := documentBody{DocumentView: v, HTML: s.renderContent(v)}
	if v.Truncated || v.Offset > 0 {
		b.Part = "characters " + commas(v.Offset+1) + " to " + commas(v.Offset+len([]rune(v.Content))) + " of " + commas(v.Chars)
	}
	if v.Truncated {
		b.NextHref = href + "?offset=" + strconv.Itoa(v.NextOffset)
	}
	if v.Offset > 0 {
		b.PrevHref = href
	}
	return b
}

func (s *Server) viewSession(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	offset, ok := s.offset(w, r)
	if !ok {
		return
	}
	pg := s.chrome(r, &page{})
	token := sessionToken(r)
	var out any
	qerr := s.read(r.Context(), func(snap *projection.Snapshot) *query.Error {
		var qerr *query.Error
		out, qerr = query.ViewSession(snap, token, name, offset, s.Limits)
		return qerr
	})
	if qerr != nil {
		s.failQuery(w, r, qerr)
		return
	}
	v := out.(*query.DocumentView)
	body := s.documentBody(v, sessionHref(name))
	body.Session = true
	pg.Title, pg.Crumbs, pg.Body = name, []crumb{{Name: s.Project, Href: "/"}}, body
	s.render(w, r, http.StatusOK, "document", pg)
}

// searchBody is a search page.
type searchBody struct {
	*query.SearchResult
	Scope     string
	Searched  bool
	NextHref  string
	FirstHref string
	AllHref   string
	FocusHref string
}

func searchHref(q, folder, scope, cursor string) string {
	v := url.Values{"q": {q}}
	if folder != "" {
		v.Set("folder", folder)
	}
	if scope == "all" {
		v.Set("scope", "all")
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	return "/search?" + v.Encode()
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a := query.SearchArgs{Query: q.Get("q"), Folder: q.Get("folder"), Cursor: q.Get("cursor"), Limit: search.DefaultLimit}
	scope := q.Get("scope")
	if scope != "all" {
		scope = ""
	}
	pg := s.chrome(r, &page{Title: "Search", Query: a.Query, Scope: scope})
	if strings.TrimSpace(a.Query) == "" {
		pg.Body = searchBody{Scope: scope}
		s.render(w, r, http.StatusOK, "search", pg)
		return
	}
	if s.Index == nil {
		s.fail(w, r, http.StatusServiceUnavailable, "This server has no full-text index.")
		return
	}
	a.Scope = &query.Scope{Contexts: s.contexts(r), All: scope == "all"}
	// The search reads the catalog around the index's search, not during it.
	s.waitScanned(r.Context())
	res, qerr := query.Search(r.Context(), s.Catalog, s.Index, a, s.Limits)
	if qerr != nil {
		if qerr.Type == query.ErrInvalidArgument || qerr.Type == query.ErrNotReady {
			// Show the message under the search box, which keeps the query to correct.
			pg.Body = searchBody{Scope: scope, Searched: true, SearchResult: &query.SearchResult{Query: a.Query, Message: qerr.Message}}
			code := http.StatusBadRequest
			if qerr.Type == query.ErrNotReady {
				code = http.StatusServiceUnavailable
			}
			s.render(w, r, code, "search", pg)
			return
		}
		s.failQuery(w, r, qerr)
		return
	}
	body := searchBody{SearchResult: res, Scope: scope, Searched: true,
		AllHref: searchHref(a.Query, res.Folder, "all", ""), FocusHref: searchHref(a.Query, res.Folder, "", "")}
	if res.NextCursor != "" {
		body.NextHref = searchHref(a.Query, res.Folder, scope, res.NextCursor)
	}
	if a.Cursor != "" {
		body.FirstHref = searchHref(a.Query, res.Folder, scope, "")
	}
	pg.Within, pg.WithinOn = res.Folder, res.Folder != ""
	pg.Title = a.Query + " – search"
	pg.Body = body
	s.render(w, r, http.StatusOK, "search", pg)
}

// availableBody lists the documents available from a focus on a folder, by context.
type availableBody struct {
	*query.ListResult
	Folder   string
	Focused  bool
	NextHref string
}

func (s *Server) available(w http.ResponseWriter, r *http.Request) {
	folder := r.PathValue("path")
	offset, ok := s.offset(w, r)
	if !ok {
		return
	}
	pg := s.chrome(r, &page{})
	c := s.contexts(r)
	var res *query.ListResult
	pend := s.pending(r)
	qerr := s.read(r.Context(), func(snap *projection.Snapshot) *query.Error {
		f, qerr := query.CheckFocus(snap, folder)
		if qerr != nil {
			return qerr
		}
		folder = f
		// As if the focus were here: the session's history does not matter to availability.
		sc := query.Scope{Contexts: query.Contexts{Focus: f, Session: c.Session}}
		res, qerr = query.List(snap, sc, pend, query.ListFilter{Offset: offset}, s.Limits)
		return qerr
	})
	if qerr != nil {
		s.failQuery(w, r, qerr)
		return
	}
	body := availableBody{ListResult: res, Folder: folder, Focused: c.Focus == folder}
	if res.Truncated {
		body.NextHref = availableHref(folder) + "?offset=" + strconv.Itoa(res.NextOffset)
	}
	name := path.Base(folder)
	if folder == "" {
		name = s.Project
	}
	pg.Title = "Available from " + name
	pg.Crumbs = append(s.crumbs(folder), crumb{Name: name, Href: viewHref(folder)})
	if folder == "" {
		pg.Crumbs = pg.Crumbs[:1]
	}
	pg.Body = body
	s.render(w, r, http.StatusOK, "available", pg)
}

// focus makes a folder the session's focus context.
func (s *Server) focus(w http.ResponseWriter, r *http.Request) {
	raw := r.PostFormValue("folder")
	var folder string
	qerr := s.read(r.Context(), func(snap *projection.Snapshot) *query.Error {
		var qerr *query.Error
		folder, qerr = query.CheckFocus(snap, raw)
		return qerr
	})
	if qerr == nil {
		_, qerr = s.Sessions.SetFocus(r.Context(), sessionID(r), folder)
	}
	if qerr != nil {
		s.failQuery(w, r, qerr)
		return
	}
	http.Redirect(w, r, viewHref(folder), http.StatusSeeOther)
}
