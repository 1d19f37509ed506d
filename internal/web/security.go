package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"
)

// Cookie names. The session cookie names the browser's guide session (its focus and its
// attached documents); the sign-in cookie proves the token was given.
const (
	SessionCookie = "guide_session"
	SignInCookie  = "guide_signin"
	// CSRFHeader carries the CSRF token of a script's request; forms send the field csrf.
	CSRFHeader = "X-CSRF-Token"
)

// ContentSecurityPolicy allows nothing but this origin's own scripts, styles and images:
// no inline script or style, no framing, forms posting only here.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// defaultMaxBody bounds a POST when the caller sets no limit of its own: httpserve's.
const defaultMaxBody = 4 << 20

type ctxKey struct{}

// freshKey marks a request whose session cookie was issued with its answer: the session
// has nothing yet, and the registry need not hold it until it does.
type freshKey struct{}

// sessionID is the browser session of a request: the key the session registry knows it by.
func sessionID(r *http.Request) string {
	sid, _ := r.Context().Value(ctxKey{}).(string)
	if sid == "" {
		return ""
	}
	return "web:" + sid
}

func rawSession(r *http.Request) string {
	sid, _ := r.Context().Value(ctxKey{}).(string)
	return sid
}

func (s *Server) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, s.MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

func validSession(v string) bool {
	if len(v) != 32 {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil
}

// withSession gives every request a browser session, from its cookie or a new one.
func (s *Server) withSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := ""
		if c, err := r.Cookie(SessionCookie); err == nil && validSession(c.Value) {
			sid = c.Value
		}
		if sid == "" {
			if r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
				// A link from another site: the browser withheld this site's SameSite=Strict
				// cookies. Continue from this page, which sends them, rather than start a
				// new session over the one the browser has.
				s.render(w, r, http.StatusOK, "continue", &page{Title: "Continue"})
				return
			}
			sid = newID()
			http.SetCookie(w, s.cookie(SessionCookie, sid))
			r = r.WithContext(context.WithValue(r.Context(), freshKey{}, true))
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, sid)))
	})
}

func (s *Server) cookie(name, value string) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.Secure}
}

func (s *Server) clearCookie(w http.ResponseWriter, name string) {
	c := s.cookie(name, "")
	c.MaxAge = -1
	http.SetCookie(w, c)
}

// signInValue is the sign-in cookie's value: derived from the token, so that it stays
// valid across restarts and replicas and stops being valid when the token changes,
// without the token itself being stored in the browser.
func (s *Server) signInValue() string {
	m := hmac.New(sha256.New, []byte(s.Token))
	m.Write([]byte("guide web sign-in"))
	return hex.EncodeToString(m.Sum(nil))
}

func equalHashed(a, b string) bool {
	x, y := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

func (s *Server) signedIn(r *http.Request) bool {
	if s.Token == "" {
		return true
	}
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return equalHashed(strings.TrimSpace(got), s.Token)
	}
	c, err := r.Cookie(SignInCookie)
	return err == nil && equalHashed(c.Value, s.signInValue())
}

// requireSignIn sends a visitor without the token to the sign-in form.
func (s *Server) requireSignIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.signedIn(r) || r.URL.Path == "/signin" {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet && !wantsJSON(r) && !isAPI(r.URL.Path) {
			http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="guide"`)
		http.Error(w, "Unauthorized: sign in at /signin", http.StatusUnauthorized)
	})
}

// csrfToken binds a form to the browser session that was shown it.
func (s *Server) csrfToken(r *http.Request) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("csrf\x00" + rawSession(r)))
	return hex.EncodeToString(m.Sum(nil))
}

// checkCSRF refuses a POST without this session's CSRF token, in the header a script
// sends or in the form field csrf.
func (s *Server) checkCSRF(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		got := r.Header.Get(CSRFHeader)
		if got == "" {
			if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
				if err := r.ParseMultipartForm(s.MaxBodyBytes); err != nil {
					s.fail(w, r, http.StatusRequestEntityTooLarge, "The upload is too large or malformed: "+err.Error())
					return
				}
			}
			got = r.PostFormValue("csrf")
		}
		if got == "" || !hmac.Equal([]byte(got), []byte(s.csrfToken(r))) {
			s.Logger.Warn("refused a form without a valid CSRF token", "path", r.URL.Path, "remote", r.RemoteAddr)
			s.fail(w, r, http.StatusForbidden, "This form has expired or did not come from this page. Reload the page and try again.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isAPI says a path answers a script (JSON or events), never a page.
func isAPI(p string) bool { return p == "/status" || p == "/status/events" || p == "/attachments" }

func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// localPath returns next when it is a path of this site, "/" otherwise: a sign-in or a
// form never sends the browser elsewhere. It judges the path as http.Redirect will send
// it, after cleaning ("/./\evil.example" becomes "/\evil.example", which a browser reads
// as "//evil.example"), and returns it so cleaned. A backslash in the path, or any control
// character (a browser drops tabs and newlines from a URL), is refused.
func localPath(next string) string {
	p := redirectPath(next)
	pathPart, _, _ := strings.Cut(p, "?")
	if p == "" || p[0] != '/' || strings.HasPrefix(p, "//") || strings.ContainsRune(pathPart, '\\') ||
		strings.ContainsFunc(p, unicode.IsControl) {
		return "/"
	}
	u, err := url.Parse(p)
	if err != nil || u.Host != "" || u.Scheme != "" || u.Opaque != "" {
		return "/"
	}
	return p
}

// redirectPath is what http.Redirect sends for a path that starts with '/': the part
// before any query cleaned as path.Clean does, a trailing slash kept.
func redirectPath(next string) string {
	if next == "" || next[0] != '/' {
		return next
	}
	p, query, hasQuery := strings.Cut(next, "?")
	trailing := strings.HasSuffix(p, "/")
	p = path.Clean(p)
	if trailing && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	if hasQuery {
		p += "?" + query
	}
	return p
}

func (s *Server) signinForm(w http.ResponseWriter, r *http.Request) {
	if s.Token == "" || s.signedIn(r) {
		http.Redirect(w, r, localPath(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, "signin", &page{Title: "Sign in", Body: signinBody{Next: localPath(r.URL.Query().Get("next"))}})
}

type signinBody struct {
	Next  string
	Error string
}

func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.PostFormValue("next"))
	if s.Token == "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	client := clientAddress(r.RemoteAddr)
	if ok, wait := s.limit.Allowed(client); !ok {
		s.Logger.Warn("refused a sign-in: too many wrong tokens from this address", "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		s.render(w, r, http.StatusTooManyRequests, "signin", &page{Title: "Sign in",
			Body: signinBody{Next: next, Error: fmt.Sprintf("Too many wrong tokens from this address: try again in %d seconds.", int(math.Ceil(wait.Seconds())))}})
		return
	}
	if !equalHashed(strings.TrimSpace(r.PostFormValue("token")), s.Token) {
		s.limit.Failed(client)
		s.Logger.Warn("refused a sign-in with a wrong token", "remote", r.RemoteAddr)
		s.render(w, r, http.StatusUnauthorized, "signin", &page{Title: "Sign in",
			Body: signinBody{Next: next, Error: "That token is not the one this server was given."}})
		return
	}
	http.SetCookie(w, s.cookie(SignInCookie, s.signInValue()))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signout ends the browser session (its documents go) and forgets the sign-in.
func (s *Server) signout(w http.ResponseWriter, r *http.Request) {
	s.Sessions.End(r.Context(), sessionID(r))
	s.clearCookie(w, SessionCookie)
	s.clearCookie(w, SignInCookie)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// endSession ends the browser session: its attached documents are deleted, its focus
// forgotten, and the next page starts a new one.
func (s *Server) endSession(w http.ResponseWriter, r *http.Request) {
	s.Sessions.End(r.Context(), sessionID(r))
	s.clearCookie(w, SessionCookie)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
