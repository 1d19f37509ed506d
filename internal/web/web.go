// Package web serves the web page of a query process for people: search, browse and read
// the project, see how fresh the index is, and attach session documents. It maps requests
// to the query package and the session registry, as the MCP server does, and renders
// server-side HTML (html/template) with a little JavaScript; every asset is embedded.
package web

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/yuin/goldmark"

	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Server is the web face of a query process. Set the fields, then call Handler.
type Server struct {
	Project  string
	Catalog  *projection.Catalog
	Index    *index.Index // nil: no search
	Sessions *session.Registry
	Limits   query.Limits
	// Freshness reports how fresh the projections are: the query process's
	// *freshness.Tracker; nil: no status line. What is on its way to the projections for a
	// session (the statuses uploading and processing) is the Sessions' Pending.
	Freshness interface {
		Status(ctx context.Context) query.Status
	}
	// Changes answers the page of recent changes (the changes tool's function); nil: no
	// such page.
	Changes func(ctx context.Context, a query.ChangesArgs) (*query.ChangesView, *query.Error)
	// Token, when set, is required: as a bearer token, or through the sign-in form, which
	// sets a cookie.
	Token string
	// Secure marks the cookies Secure: the page is served over HTTPS.
	Secure bool
	// SignInsPerMinute is how many wrong tokens one client address may send the sign-in
	// form a minute (after a burst of as many); beyond it, every sign-in from there is
	// refused (429) until the allowance comes back. 0 means DefaultSignInsPerMinute; a
	// negative value, no limit.
	SignInsPerMinute int
	// Now is the clock of the sign-in limit; nil means time.Now.
	Now func() time.Time
	// InitialWait bounds how long a page waits for a catalog that has never held a
	// complete scan (a new query process), rather than answer from a partial one.
	InitialWait time.Duration // default 5s
	// MaxBodyBytes bounds a form or an upload, as --max-body bounds every request.
	MaxBodyBytes int64 // default 4 MiB
	// StatusEvery is how often the live status line is recomputed for an open page.
	StatusEvery time.Duration // default 1s
	Logger      *slog.Logger

	secret []byte // signs CSRF tokens; new with every process, as sessions are
	pages  map[string]*template.Template
	md     goldmark.Markdown
	assets map[string]asset
	limit  *signInLimit
}

// Handler builds the routes. Host and Origin checks are the caller's (httpserve wraps it
// as it wraps /mcp); sign-in, sessions, CSRF and the security headers are here.
func (s *Server) Handler() http.Handler {
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.InitialWait <= 0 {
		s.InitialWait = 5 * time.Second
	}
	if s.MaxBodyBytes <= 0 {
		s.MaxBodyBytes = defaultMaxBody
	}
	if s.StatusEvery <= 0 {
		s.StatusEvery = time.Second
	}
	if s.SignInsPerMinute == 0 {
		s.SignInsPerMinute = DefaultSignInsPerMinute
	}
	s.limit = newSignInLimit(s.SignInsPerMinute, s.Now)
	s.secret = make([]byte, 32)
	_, _ = rand.Read(s.secret)
	s.pages = parsePages()
	s.md = newMarkdown()
	s.assets = loadAssets()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /view/{path...}", s.view)
	mux.HandleFunc("GET /session/{name}", s.viewSession)
	mux.HandleFunc("GET /available/{path...}", s.available)
	mux.HandleFunc("GET /changes", s.changes)
	mux.HandleFunc("POST /focus", s.focus)
	mux.HandleFunc("POST /attach", s.attach)
	mux.HandleFunc("POST /detach", s.detach)
	mux.HandleFunc("POST /end", s.endSession)
	mux.HandleFunc("GET /attachments", s.attachments)
	mux.HandleFunc("GET /status", s.statusJSON)
	mux.HandleFunc("GET /status/events", s.statusEvents)
	mux.HandleFunc("GET /signin", s.signinForm)
	mux.HandleFunc("POST /signin", s.signin)
	mux.HandleFunc("POST /signout", s.signout)
	mux.HandleFunc("GET /", s.notFound)

	// Assets need neither a session nor a sign-in: the sign-in page uses them.
	outer := http.NewServeMux()
	outer.HandleFunc("GET /assets/{name}", s.asset)
	outer.Handle("/", s.withSession(s.requireSignIn(s.checkCSRF(mux))))
	return s.headers(outer)
}

func parsePages() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	out := map[string]*template.Template{}
	for _, n := range names {
		if n == "templates/layout.html" {
			continue
		}
		t := template.Must(template.Must(base.Clone()).ParseFS(templateFS, n))
		out[n[len("templates/"):len(n)-len(".html")]] = t
	}
	return out
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
