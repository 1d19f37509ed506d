package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guide/guide/internal/httpserve"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/web"
)

const hostileName = `<img src=x onerror=alert(1)>.md`
const hostileContent = "# <script>alert('title')</script>\n\n<img src=x onerror=alert(2)>\n\n<div onclick=\"alert(3)\">raw block</div>\n\nInline <b onmouseover=alert(4)>bold</b> and [a link](javascript:alert(5)).\n"

// site is the web page over a whole pipeline (indexer, embedded NATS, catalog, index),
// behind httpserve's Host and Origin checks as guide-mcp serves it.
type site struct {
	*testkit.Pipeline
	URL string
	Web *web.Server
}

func newSite(t *testing.T, root, token string) *site {
	t.Helper()
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	w := &web.Server{Project: "sample", Catalog: p.Catalog, Index: p.Index, Sessions: p.Server.Sessions,
		Freshness: p.Server.Freshness, Changes: p.Server.Changes, Token: token, Logger: testkit.Logger(),
		StatusEvery: 20 * time.Millisecond}
	hs := &httpserve.Server{Addr: "127.0.0.1:0", Token: token, Web: w.Handler(), Logger: testkit.Logger(),
		MaxBodyBytes: httpserve.DefaultMaxBodyBytes}
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return &site{Pipeline: p, URL: ts.URL, Web: w}
}

func sampleWithHostile(t *testing.T) string {
	root := testkit.CopyTree(t, "../../testdata/sample")
	testkit.WriteFile(t, root, "Hostile/"+hostileName, hostileContent)
	return root
}

// browser is an HTTP client with its own cookies: one browser session.
type browser struct {
	t    *testing.T
	c    *http.Client
	base string
}

func (s *site) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: s.URL, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	res, err := b.c.Do(req)
	testkit.NoErr(b.t, err, req.Method+" "+req.URL.String())
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(req)
}

var assetVersion = regexp.MustCompile(`\?v=[0-9a-f]+"`)

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf is the token of the forms of this browser's pages.
func (b *browser) csrf() string {
	b.t.Helper()
	_, body := b.get("/")
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no CSRF field in the page:\n%s", body)
	}
	return m[1]
}

func (b *browser) post(path string, form url.Values, hdr map[string]string) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return b.do(req)
}

// attach uploads files (name → content) as the page's script does, or as the plain form
// does when js is false.
func (b *browser) attach(files map[string]string, js bool) (*http.Response, string) {
	b.t.Helper()
	token := b.csrf()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if !js {
		_ = mw.WriteField("csrf", token)
		_ = mw.WriteField("return", "/")
	}
	for name, content := range files {
		fw, _ := mw.CreateFormFile("files", name)
		_, _ = fw.Write([]byte(content))
	}
	_ = mw.Close()
	req, _ := http.NewRequest("POST", b.base+"/attach", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if js {
		req.Header.Set(web.CSRFHeader, token)
		req.Header.Set("Accept", "application/json")
	}
	return b.do(req)
}

func mustContain(t *testing.T, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Fatalf("page lacks %q:\n%s", w, body)
		}
	}
}

func mustLack(t *testing.T, body string, bad ...string) {
	t.Helper()
	for _, w := range bad {
		if strings.Contains(body, w) {
			t.Fatalf("page holds %q:\n%s", w, body)
		}
	}
}

// TestPagesWithoutScript: search, browse and read are plain links and forms.
func TestPagesWithoutScript(t *testing.T) {
	s := newSite(t, testkit.CopyTree(t, "../../testdata/sample"), "")
	b := s.browser(t)

	t.Run("RootListsFoldersAndDocuments", func(t *testing.T) {
		res, body := b.get("/")
		testkit.Equal(t, res.StatusCode, 200, "GET /")
		mustContain(t, body, `<a href="/view/Characters">Characters</a>`, `<a href="/view/Notes%20and%20drafts">Notes and drafts</a>`,
			`<a href="/view/README.md">README.md</a>`, `<span class="docs">10 documents</span>`, `aria-label="Search"`,
			`aria-label="Attach files"`)
	})
	t.Run("FolderHasCountsBreadcrumbAndFocus", func(t *testing.T) {
		_, body := b.get("/view/Worldbuilding")
		mustContain(t, body, `<a href="/view/Worldbuilding/Creatures">Creatures</a><span class="count">1 document</span>`,
			`<nav class="crumbs" aria-label="Breadcrumb"><ol><li><a href="/">sample</a></li>`,
			`<button type="submit">Focus here</button>`, `magic-system.md`)
	})
	t.Run("DocumentRendersMarkdown", func(t *testing.T) {
		_, body := b.get("/view/Characters/Elara.md")
		mustContain(t, body, "<h1>Elara Voss</h1>", "<h2>Arc</h2>", `<a href="/view/Characters">Characters</a>`)
	})
	t.Run("DocumentWithoutExtensionRedirects", func(t *testing.T) {
		res, _ := b.get("/view/Characters/Elara")
		testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "status")
		testkit.Equal(t, res.Header.Get("Location"), "/view/Characters/Elara.md", "location")
	})
	t.Run("SearchLinksToResultsWithMarkedSnippets", func(t *testing.T) {
		res, body := b.get("/search?q=dragon")
		testkit.Equal(t, res.StatusCode, 200, "search")
		mustContain(t, body, `href="/view/Worldbuilding/Creatures/Dragons.md"`, "<mark>dragon</mark>",
			"Worldbuilding/Creatures/Dragons.md", `value="dragon" aria-label="Search"`)
	})
	t.Run("SearchInAFolder", func(t *testing.T) {
		_, body := b.get("/view/Worldbuilding")
		mustContain(t, body, `<input type="checkbox" form="search-form" name="folder" value="Worldbuilding"> Search only in Worldbuilding`)
		_, body = b.get("/search?q=elara&folder=Worldbuilding")
		mustContain(t, body, "No match", `value="Worldbuilding" checked>`)
		_, body = b.get("/search?q=dragon&folder=Worldbuilding")
		mustContain(t, body, `href="/view/Worldbuilding/Creatures/Dragons.md"`)
	})
	t.Run("SearchScopeAllAndPaging", func(t *testing.T) {
		_, body := b.get("/search?q=the&scope=all")
		mustContain(t, body, `<strong>every document</strong>`, `<input type="hidden" name="scope" value="all">`)
	})
	t.Run("FocusMovesTheSearchScope", func(t *testing.T) {
		res, _ := b.post("/focus", url.Values{"folder": {"Characters"}, "csrf": {b.csrf()}}, nil)
		testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "focus")
		_, body := b.get("/search?q=dragon")
		mustContain(t, body, "No match")
		_, body = b.get("/search?q=dragon&scope=all")
		mustContain(t, body, `href="/view/Worldbuilding/Creatures/Dragons.md"`, `ctx-other`)
		_, body = b.get("/view/Characters")
		mustContain(t, body, "Focused here.")
	})
	t.Run("AvailableByContext", func(t *testing.T) {
		_, body := b.get("/available/Worldbuilding/Creatures")
		mustContain(t, body, `<span class="ctx ctx-focus">focus</span></td><td><a href="/view/Worldbuilding/Creatures/Dragons.md">`,
			`<span class="ctx ctx-ancestor">ancestor</span></td><td><a href="/view/README.md">`)
	})
	t.Run("UnknownPathIsNotFound", func(t *testing.T) {
		res, body := b.get("/view/nowhere")
		testkit.Equal(t, res.StatusCode, 404, "status")
		mustContain(t, body, "nothing at")
	})
	t.Run("TraversalIsRefused", func(t *testing.T) {
		res, _ := b.get("/view/%2e%2e/%2e%2e/etc/passwd")
		if res.StatusCode != 400 && res.StatusCode != 404 {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}

// TestHostileNamesAndContent: a file name and a document full of HTML render as text.
func TestHostileNamesAndContent(t *testing.T) {
	s := newSite(t, sampleWithHostile(t), "")
	b := s.browser(t)
	escapedName := `&lt;img src=x onerror=alert(1)&gt;.md`
	bad := []string{"<img src=x", "<script>alert", "<div onclick", "<b onmouseover", `href="javascript:`}

	_, body := b.get("/view/Hostile")
	mustContain(t, body, escapedName, `href="/view/Hostile/%3Cimg%20src=x%20onerror=alert%281%29%3E.md"`)
	mustLack(t, body, bad...)

	res, body := b.get("/view/Hostile/" + url.PathEscape(hostileName))
	testkit.Equal(t, res.StatusCode, 200, "document page")
	mustContain(t, body, escapedName, "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;",
		"&lt;img src=x onerror=alert(2)&gt;", "&lt;div onclick=&#34;alert(3)&#34;&gt;", "&lt;b onmouseover=alert(4)&gt;")
	mustLack(t, body, bad...)

	_, body = b.get("/search?q=onerror&scope=all")
	mustContain(t, body, escapedName)
	mustLack(t, body, bad...)

	// As a session document: the widget, its remove button and its page.
	_, body = b.attach(map[string]string{hostileName: hostileContent}, false)
	mustContain(t, body, escapedName, `aria-label="Remove `+escapedName+`"`)
	mustLack(t, body, bad...)
	res, body = b.get("/session/" + url.PathEscape(hostileName))
	testkit.Equal(t, res.StatusCode, 200, "session document page")
	mustContain(t, body, "&lt;img src=x onerror=alert(2)&gt;")
	mustLack(t, body, bad...)
}

// TestSecurityHeaders: a strict CSP, and no sniffing or framing, on every answer.
func TestSecurityHeaders(t *testing.T) {
	s := newSite(t, testkit.CopyTree(t, "../../testdata/sample"), "")
	b := s.browser(t)
	for _, p := range []string{"/", "/view/Characters/Elara.md", "/search?q=x", "/nowhere", "/assets/app.js", "/status"} {
		res, _ := b.get(p)
		testkit.Equal(t, res.Header.Get("Content-Security-Policy"), web.ContentSecurityPolicy, "CSP of "+p)
		testkit.Equal(t, res.Header.Get("X-Content-Type-Options"), "nosniff", "nosniff of "+p)
		testkit.Equal(t, res.Header.Get("X-Frame-Options"), "DENY", "framing of "+p)
	}
	if !strings.Contains(web.ContentSecurityPolicy, "script-src 'self'") || strings.Contains(web.ContentSecurityPolicy, "unsafe") {
		t.Fatalf("CSP %q", web.ContentSecurityPolicy)
	}
	res, _ := s.browser(t).get("/")
	var sc *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == web.SessionCookie {
			sc = c
		}
	}
	if sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie %+v", sc)
	}
}

// TestCSRF: every state-changing request needs the session's CSRF token.
func TestCSRF(t *testing.T) {
	s := newSite(t, testkit.CopyTree(t, "../../testdata/sample"), "")
	b := s.browser(t)
	other := s.browser(t)
	token := b.csrf()
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  map[string]string
	}{
		{"ErrNoToken", url.Values{"folder": {"Characters"}}, nil},
		{"ErrWrongToken", url.Values{"folder": {"Characters"}, "csrf": {strings.Repeat("0", 64)}}, nil},
		{"ErrAnotherSessionsToken", url.Values{"folder": {"Characters"}, "csrf": {other.csrf()}}, nil},
		{"ErrWrongHeader", url.Values{"folder": {"Characters"}}, map[string]string{web.CSRFHeader: "nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/focus", "/detach", "/end", "/attach"} {
				res, _ := b.post(path, tc.form, tc.hdr)
				testkit.Equal(t, res.StatusCode, http.StatusForbidden, path)
			}
		})
	}
	t.Run("MultipartWithoutToken", func(t *testing.T) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("files", "a.md")
		_, _ = fw.Write([]byte("hello"))
		_ = mw.Close()
		req, _ := http.NewRequest("POST", s.URL+"/attach", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		res, _ := b.do(req)
		testkit.Equal(t, res.StatusCode, http.StatusForbidden, "attach without a token")
	})
	t.Run("WithToken", func(t *testing.T) {
		res, _ := b.post("/focus", url.Values{"folder": {"Characters"}, "csrf": {token}}, nil)
		testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "focus with the token")
		res, _ = b.post("/focus", url.Values{"folder": {"Plot"}}, map[string]string{web.CSRFHeader: token})
		testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "focus with the header")
	})
}

// TestHostAndOrigin: the page sits behind /mcp's DNS-rebinding and Origin checks.
func TestHostAndOrigin(t *testing.T) {
	s := newSite(t, testkit.CopyTree(t, "../../testdata/sample"), "")
	b := s.browser(t)
	req, _ := http.NewRequest("GET", s.URL+"/", nil)
	req.Host = "evil.example"
	res, _ := b.do(req)
	testkit.Equal(t, res.StatusCode, http.StatusForbidden, "foreign Host")

	token := b.csrf()
	req, _ = http.NewRequest("POST", s.URL+"/focus", strings.NewReader("folder=Plot&csrf="+token))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	res, _ = b.do(req)
	testkit.Equal(t, res.StatusCode, http.StatusForbidden, "foreign Origin")

	req.Header.Set("Origin", s.URL)
	req.Body = io.NopCloser(strings.NewReader("folder=Plot&csrf=" + token))
	res, _ = b.do(req)
	testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "own Origin")
}

// TestSignIn: with a token, the page asks for it once and keeps an HttpOnly, SameSite
// cookie; a bearer token works as for /mcp.
func TestSignIn(t *testing.T) {
	const token = "team-secret"
	s := newSite(t, testkit.CopyTree(t, "../../testdata/sample"), token)
	b := s.browser(t)

	res, _ := b.get("/view/Characters?x=1")
	testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "unsigned page")
	testkit.Equal(t, res.Header.Get("Location"), "/signin?next="+url.QueryEscape("/view/Characters?x=1"), "to the form")
	res, body := b.get("/signin?next=/view/Characters")
	testkit.Equal(t, res.StatusCode, 200, "form")
	mustLack(t, body, "Characters</a>", "documents")
	res, _ = b.get("/status")
	testkit.Equal(t, res.StatusCode, http.StatusUnauthorized, "status without sign-in")
	res, _ = b.get("/assets/style.css")
	testkit.Equal(t, res.StatusCode, 200, "assets need no sign-in")

	csrf := csrfField.FindStringSubmatch(body)[1]
	res, body = b.post("/signin", url.Values{"token": {"wrong"}, "csrf": {csrf}, "next": {"/view/Characters"}}, nil)
	testkit.Equal(t, res.StatusCode, http.StatusUnauthorized, "wrong token")
	mustContain(t, body, "not the one")
	res, _ = b.post("/signin", url.Values{"token": {token}, "next": {"/view/Characters"}}, nil)
	testkit.Equal(t, res.StatusCode, http.StatusForbidden, "sign-in without CSRF token")
	res, _ = b.post("/signin", url.Values{"token": {token}, "csrf": {csrf}, "next": {"https://evil.example/"}}, nil)
	testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "sign-in")
	testkit.Equal(t, res.Header.Get("Location"), "/", "never sent elsewhere")
	var c *http.Cookie
	for _, x := range res.Cookies() {
		if x.Name == web.SignInCookie {
			c = x
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || strings.Contains(c.Value, token) {
		t.Fatalf("sign-in cookie %+v", c)
	}
	res, body = b.get("/view/Characters")
	testkit.Equal(t, res.StatusCode, 200, "signed in")
	mustContain(t, body, "Elara.md", "Sign out")
	res, _ = b.get("/signin?next=/./%5Cevil.example/phish")
	testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "signed in: the form sends on")
	testkit.Equal(t, res.Header.Get("Location"), "/", "a next that cleans to /\\evil.example sends home")

	req, _ := http.NewRequest("GET", s.URL+"/view/Characters", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	testkit.NoErr(t, err, "bearer")
	res.Body.Close()
	testkit.Equal(t, res.StatusCode, 200, "bearer token")

	res, _ = b.post("/signout", url.Values{"csrf": {b.csrf()}}, nil)
	testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "sign out")
	res, _ = b.get("/")
	testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "signed out")
}

type attachResult struct {
	Files []struct {
		Filename, Status, Reason, Href string
	}
}

func decodeFiles(t *testing.T, body string) attachResult {
	t.Helper()
	var r attachResult
	testkit.NoErr(t, json.Unmarshal([]byte(body), &r), "decode "+body)
	return r
}

// TestAttachments: files attached in one browser are its own: searchable and readable
// there once ready, invisible to another browser, gone when removed or the session ends.
func TestAttachments(t *testing.T) {
	s := newSite(t, testkit.CopyTree(t, "../../testdata/sample"), "")
	a, other := s.browser(t), s.browser(t)

	res, body := a.attach(map[string]string{"minutes.md": "# Minutes\n\nThe quokka committee met.", "todo.txt": "feed the quokka"}, true)
	testkit.Equal(t, res.StatusCode, 200, "attach: "+body)
	for _, f := range decodeFiles(t, body).Files {
		testkit.Equal(t, f.Status, query.StatusReady, "status of "+f.Filename)
	}
	_, body = a.get("/attachments")
	testkit.Equal(t, len(decodeFiles(t, body).Files), 2, "attachments: "+body)
	_, body = a.get("/search?q=quokka")
	mustContain(t, body, `href="/session/minutes.md"`, `href="/session/todo.txt"`, "ctx-session")
	res, body = a.get("/session/minutes.md")
	testkit.Equal(t, res.StatusCode, 200, "session document")
	mustContain(t, body, "<h1>Minutes</h1>")
	_, body = a.get("/")
	mustContain(t, body, `aria-label="Remove minutes.md"`, `data-status="ready"`)

	t.Run("AnotherBrowserNeverSeesThem", func(t *testing.T) {
		_, body := other.get("/search?q=quokka&scope=all")
		mustContain(t, body, "No match")
		res, _ := other.get("/session/minutes.md")
		testkit.Equal(t, res.StatusCode, 404, "another session's document")
		_, body = other.get("/attachments")
		testkit.Equal(t, len(decodeFiles(t, body).Files), 0, "another session's attachments")
		// Nor does an MCP session.
		r := s.Call("search", map[string]any{"query": "quokka", "scope": "all"})
		mustContain(t, testkit.Text(t, r), `"total":0`)
	})
	t.Run("Remove", func(t *testing.T) {
		res, _ := a.post("/detach", url.Values{"name": {"todo.txt"}, "csrf": {a.csrf()}, "return": {"/./\\evil.example/phish"}}, nil)
		testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "detach")
		testkit.Equal(t, res.Header.Get("Location"), "/", "a hostile return sends the browser home")
		_, body := a.get("/attachments")
		testkit.Equal(t, len(decodeFiles(t, body).Files), 1, "after removing one: "+body)
		res, _ = a.get("/session/todo.txt")
		testkit.Equal(t, res.StatusCode, 404, "removed document")
	})
	t.Run("FailedWithReason", func(t *testing.T) {
		big := strings.Repeat("x", int(session.DefaultMaxDocBytes)+1)
		_, body := a.attach(map[string]string{"big.md": big}, true)
		f := decodeFiles(t, body).Files[0]
		testkit.Equal(t, f.Status, query.StatusFailed, "too large")
		mustContain(t, f.Reason, "too large")
		_, body = a.attach(map[string]string{"logo.png": "\x89PNG\r\n\x1a\n\x00\x00"}, true)
		f = decodeFiles(t, body).Files[0]
		testkit.Equal(t, f.Status, query.StatusFailed, "binary")
		mustContain(t, f.Reason, "binary")
		_, body = a.attach(map[string]string{"../escape.md": "x"}, true)
		f = decodeFiles(t, body).Files[0]
		if f.Status != query.StatusFailed && f.Filename != "escape.md" {
			t.Fatalf("a name with a folder: %+v", f)
		}
	})
	t.Run("ErrBodyTooLarge", func(t *testing.T) {
		res, _ := a.attach(map[string]string{"huge.md": strings.Repeat("x", 5<<20)}, true)
		testkit.Equal(t, res.StatusCode, http.StatusRequestEntityTooLarge, "over the body limit")
	})
	t.Run("EndingTheSessionDeletesThem", func(t *testing.T) {
		res, _ := a.post("/end", url.Values{"csrf": {a.csrf()}}, nil)
		testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "end")
		// The deletions are published at once and applied a moment later.
		testkit.Eventually(t, 10*time.Second, func() (bool, string) {
			var toks []string
			_ = s.Catalog.Read(func(snap *projection.Snapshot) error {
				toks = snap.SessionTokens()
				return nil
			})
			return len(toks) == 0, fmt.Sprintf("session documents left: %v", toks)
		})
	})
}

// TestStatusEvents: the status line is pushed again when the document count changes.
func TestStatusEvents(t *testing.T) {
	s := newSite(t, testkit.CopyTree(t, "../../testdata/sample"), "")
	b := s.browser(t)
	ctx, cancel := context.WithTimeout(testkit.Context(t), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/status/events", nil)
	res, err := b.c.Do(req)
	testkit.NoErr(t, err, "events")
	defer res.Body.Close()
	testkit.Equal(t, res.Header.Get("Content-Type"), "text/event-stream", "content type")
	lines := make(chan string)
	go func() {
		buf := make([]byte, 4096)
		var acc string
		for {
			n, err := res.Body.Read(buf)
			acc += string(buf[:n])
			for {
				i := strings.Index(acc, "\n\n")
				if i < 0 {
					break
				}
				select {
				case lines <- acc[:i]:
				case <-ctx.Done():
					return
				}
				acc = acc[i+2:]
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	waitFor := func(want string) {
		t.Helper()
		for l := range lines {
			if strings.Contains(l, want) {
				return
			}
		}
		t.Fatalf("the stream ended before %q", want)
	}
	waitFor(`"documents":"10 documents"`)
	testkit.WriteFile(t, s.Root, "new/one.md", "one")
	testkit.WriteFile(t, s.Root, "new/two.md", "two")
	s.Reconcile()
	waitFor(`"documents":"12 documents"`)
}

// TestGoldenPages: the HTML of folders and documents, over a fixed catalog (go test
// -update rewrites testdata/).
func TestGoldenPages(t *testing.T) {
	files := map[string]string{
		"README.md":               "# Handbook\n\nRead [the style guide](guides/style.md).\n",
		"guides/style.md":         "# Style\n\nWrite **plain** words.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<p>raw</p>\n",
		"guides/" + hostileName:   hostileContent,
		"guides/deep/notes.txt":   "<b>not markup</b>\n",
		"guides/deep/more/x.md":   "x",
		"other/far.md":            "far away",
		"guides/tmpl.md.mustache": "Hello {{name}}",
	}
	c := testkit.Catalog(t, files)
	reg := &session.Registry{Project: "handbook", Catalog: c, Logger: testkit.Logger()}
	w := &web.Server{Project: "handbook", Catalog: c, Sessions: reg, Logger: testkit.Logger(),
		Freshness: fixedStatus{Documents: len(files), CaughtUp: true, InitialScanDone: true, Lag: 3}}
	ts := httptest.NewServer(w.Handler())
	t.Cleanup(ts.Close)
	b := &browser{t: t, base: ts.URL, c: &http.Client{}}
	for _, tc := range []struct{ name, path string }{
		{"root", "/"},
		{"folder", "/view/guides"},
		{"document", "/view/guides/style.md"},
		{"hostile", "/view/guides/" + url.PathEscape(hostileName)},
		{"text", "/view/guides/deep/notes.txt"},
		{"template", "/view/guides/tmpl.md.mustache"},
		{"available", "/available/guides/deep"},
		{"notfound", "/view/missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, body := b.get(tc.path)
			body = csrfField.ReplaceAllString(body, `name="csrf" value="CSRF"`)
			body = assetVersion.ReplaceAllString(body, `?v=V"`)
			testkit.Golden(t, filepath.Join("testdata", tc.name+".html"), []byte(body))
		})
	}
}

// fixedStatus reports the same status always.
type fixedStatus query.Status

func (f fixedStatus) Status(context.Context) query.Status { return query.Status(f) }

// TestCrossSiteLink: a link from another site arrives without the SameSite=Strict
// cookies; the page continues from itself instead of starting a session over the one
// the browser has.
func TestCrossSiteLink(t *testing.T) {
	s := newSite(t, testkit.CopyTree(t, "../../testdata/sample"), "")
	b := s.browser(t)
	req, _ := http.NewRequest("GET", s.URL+"/view/Characters", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, body := b.do(req)
	testkit.Equal(t, res.StatusCode, 200, "status")
	testkit.Equal(t, len(res.Cookies()), 0, "cookies set")
	mustContain(t, body, `<meta http-equiv="refresh" content="0">`, `<a href="/view/Characters">Continue to guide</a>`)
	mustLack(t, body, "Elara.md")
}

// TestFrontMatterIsShownAsFrontMatter: a document's front matter is shown as one block of
// metadata, not read as Markdown (where "---" is a rule and "tags: x" over "---" a heading).
func TestFrontMatterIsShownAsFrontMatter(t *testing.T) {
	files := map[string]string{
		"notes/front.md": "---\ntitle: <b>Voyage</b>\ntags: [sea, maps]\n---\n# Voyage\n\nThe text.\n",
		"notes/crlf.md":  "---\r\ntitle: Tides\r\n---\r\nBody.\r\n",
		"notes/empty.md": "---\n---\n# Empty\n",
	}
	c := testkit.Catalog(t, files)
	reg := &session.Registry{Project: "p", Catalog: c, Logger: testkit.Logger()}
	w := &web.Server{Project: "p", Catalog: c, Sessions: reg, Logger: testkit.Logger(),
		Freshness: fixedStatus{Documents: len(files), CaughtUp: true, InitialScanDone: true}}
	ts := httptest.NewServer(w.Handler())
	t.Cleanup(ts.Close)
	b := &browser{t: t, base: ts.URL, c: &http.Client{}}

	_, body := b.get("/view/notes/front.md")
	mustContain(t, body, `<pre class="front-matter" aria-label="Front matter"><code>title: &lt;b&gt;Voyage&lt;/b&gt;
tags: [sea, maps]
</code></pre>`, "<h1>Voyage</h1>", "<p>The text.</p>")
	mustLack(t, body, "<hr>", "<h2>tags:", "<b>Voyage")

	_, body = b.get("/view/notes/crlf.md")
	mustContain(t, body, `<code>title: Tides`, "<p>Body.</p>")
	mustLack(t, body, "<hr>", "<h2>")

	_, body = b.get("/view/notes/empty.md")
	mustContain(t, body, `<pre class="front-matter" aria-label="Front matter"><code></code></pre>`, "<h1>Empty</h1>")
	mustLack(t, body, "<hr>")
}

// TestSignInIsRateLimited: after its allowance of wrong tokens an address is refused
// every sign-in, the right token too, with 429 and when to try again; the allowance
// comes back with time.
func TestSignInIsRateLimited(t *testing.T) {
	const token = "team-secret"
	var now atomic.Int64 // the limit's clock, in Unix seconds: moved by the test, read by the server
	now.Store(1700000000)
	c := testkit.Catalog(t, map[string]string{"a.md": "# A\n"})
	reg := &session.Registry{Project: "p", Catalog: c, Logger: testkit.Logger()}
	w := &web.Server{Project: "p", Catalog: c, Sessions: reg, Logger: testkit.Logger(), Token: token,
		SignInsPerMinute: 3, Now: func() time.Time { return time.Unix(now.Load(), 0) }}
	ts := httptest.NewServer(w.Handler())
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, base: ts.URL, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	_, body := b.get("/signin")
	csrf := csrfField.FindStringSubmatch(body)[1]
	try := func(tok string) *http.Response {
		res, _ := b.post("/signin", url.Values{"token": {tok}, "csrf": {csrf}, "next": {"/"}}, nil)
		return res
	}
	for i := range 3 {
		testkit.Equal(t, try(fmt.Sprint("wrong-", i)).StatusCode, http.StatusUnauthorized, "a wrong token within the allowance")
	}
	res := try("wrong-3")
	testkit.Equal(t, res.StatusCode, http.StatusTooManyRequests, "a wrong token over the allowance")
	testkit.Equal(t, res.Header.Get("Retry-After"), "20", "Retry-After (3 a minute)")
	testkit.Equal(t, try(token).StatusCode, http.StatusTooManyRequests, "the right token while refused")
	now.Add(20)
	testkit.Equal(t, try(token).StatusCode, http.StatusSeeOther, "the right token once the allowance came back")
}

// TestRecentChanges: the page of recent changes shows what the changes tool answers,
// newest first, with diffs on request, names escaped, and a link to what follows.
func TestRecentChanges(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	s := newSite(t, root, "")
	b := s.browser(t)
	start, qerr := s.Server.Changes(testkit.Context(t), query.ChangesArgs{Since: "now"})
	if qerr != nil {
		t.Fatal(qerr)
	}
	elara := testkit.Disk(t, root)["Characters/Elara.md"]
	testkit.WriteFile(t, root, "Characters/Elara.md", strings.Replace(elara, "Elara", "Elara <em>the bold</em>", 1))
	testkit.NoErr(t, os.Rename(filepath.Join(root, "Plot"), filepath.Join(root, "Story")), "move a folder")
	s.Reconcile()
	testkit.WriteFile(t, root, "Hostile/"+hostileName, hostileContent) // the newest
	s.Reconcile()

	_, body := b.get("/")
	mustContain(t, body, `<a href="/changes">Recent changes</a>`)
	res, body := b.get("/changes?cursor=" + url.QueryEscape(start.Cursor) + "&diff=1")
	testkit.Equal(t, res.StatusCode, 200, "changes page")
	mustContain(t, body, "<h1>Recent changes</h1>", `data-change="modified"`, `<a href="/view/Characters/Elara.md">Characters/Elara.md</a>`,
		`data-change="moved"`, `from Plot/`, `data-change="added"`, `&lt;img src=x onerror=alert(1)&gt;.md`,
		`<pre class="diff">--- a/Characters/Elara.md`, `&#43;# Elara &lt;em&gt;the bold&lt;/em&gt; Voss`, `· 181 bytes`, "Changes after these")
	mustLack(t, body, "<img src=x", "<em>the bold")
	// Newest first: the hostile file was written last.
	if strings.Index(body, "onerror=alert(1)") > strings.Index(body, "Characters/Elara.md") {
		t.Fatal("the newest change is not first")
	}
	_, body = b.get("/changes?folder=Characters&cursor=" + url.QueryEscape(start.Cursor))
	mustContain(t, body, "Recent changes in Characters", "Characters/Elara.md")
	mustLack(t, body, "Story/", `<pre class="diff">`)
	res, _ = b.get("/changes?cursor=nonsense")
	testkit.Equal(t, res.StatusCode, http.StatusBadRequest, "a bad cursor")
}
