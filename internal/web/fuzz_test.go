package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode"
)

// sent is the Location http.Redirect sends for a redirect to next from a page below /view.
func sent(next string) string {
	rec := httptest.NewRecorder()
	http.Redirect(rec, httptest.NewRequest(http.MethodPost, "/view/a/b", nil), next, http.StatusSeeOther)
	return rec.Header().Get("Location")
}

// escapeNonASCII is what http.Redirect makes of a location's bytes beyond ASCII.
func escapeNonASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			fmt.Fprintf(&b, "%%%02x", s[i])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// checkStaysOnSite fails unless localPath(next) is sent as it is and a browser reads it as
// a path of this site: one leading slash, no backslash before the query (a browser reads
// "\\" as "/"), no control character (a browser drops tabs and newlines).
func checkStaysOnSite(t *testing.T, next string) string {
	t.Helper()
	got := localPath(next)
	loc := sent(got)
	if loc != escapeNonASCII(got) {
		t.Fatalf("localPath(%q) = %q, but http.Redirect sends %q", next, got, loc)
	}
	pathPart, _, _ := strings.Cut(loc, "?")
	if !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.Contains(pathPart, "\\") ||
		strings.ContainsFunc(loc, unicode.IsControl) {
		t.Fatalf("localPath(%q) sends the browser to %q", next, loc)
	}
	u, err := url.Parse(loc)
	if err != nil || u.Host != "" || u.Scheme != "" {
		t.Fatalf("localPath(%q) = %q leaves the site", next, loc)
	}
	return loc
}

// TestLocalPathRefusesHostileValues: each way of writing another site, or of hiding one
// from a check made before http.Redirect cleans the path, sends the browser home.
func TestLocalPathRefusesHostileValues(t *testing.T) {
	for _, tc := range []struct{ next, want string }{
		{"/./\\evil.example/phish", "/"},
		{"/.\\evil.example", "/"},
		{"/x/../\\evil.example", "/"},
		{"/\\evil.example", "/"},
		{"\\\\evil.example", "/"},
		{"//evil.example/", "/evil.example/"},
		{"/.//evil.example", "/evil.example"},
		{"/x/..//evil.example", "/evil.example"},
		{"///evil.example", "/evil.example"},
		{"/\t/evil.example", "/"},
		{"/\n/evil.example", "/"},
		{"\t//evil.example", "/"},
		{"/view/a\x00b", "/"},
		{"/view/\u202e", "/view/%e2%80%ae"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{"evil.example", "/"},
		{"", "/"},
		{"/%5Cevil.example", "/%5Cevil.example"},
		{"/%2F%2Fevil.example", "/%2F%2Fevil.example"},
		{"/view/Characters?x=1", "/view/Characters?x=1"},
		{"/view/a/./b/", "/view/a/b/"},
		{"/search?q=a\\b", "/search?q=a\\b"},
	} {
		if got := checkStaysOnSite(t, tc.next); got != tc.want {
			t.Errorf("localPath(%q) sends %q; want %q", tc.next, got, tc.want)
		}
	}
}

// FuzzLocalPath: whatever a form says to return to, the browser stays on this site.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/", "/view/a b", "//evil.example/", "/\\evil.example", "https://evil.example/", "javascript:alert(1)",
		"/%2F%2Fevil.example", "\t//evil.example", "/search?q=x#y", "", "/./\\evil.example/phish"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) { checkStaysOnSite(t, next) })
}

// FuzzSnippetHTML: a snippet's only markup is the <mark> around matches.
func FuzzSnippetHTML(f *testing.F) {
	for _, s := range []string{"a **match** b", "**<img src=x>**", "**a b** c", "x ** y", "****", "<script>**x**</script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, snip string) {
		out := strings.ReplaceAll(strings.ReplaceAll(string(snippetHTML(snip)), "<mark>", ""), "</mark>", "")
		if strings.ContainsAny(out, "<>") {
			t.Fatalf("snippetHTML(%q) holds markup: %q", snip, out)
		}
	})
}

// TestSnippetHTML: matches are marked; the document's own bold and markup are text.
func TestSnippetHTML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"the **dragon** sleeps", "the <mark>dragon</mark> sleeps"},
		{"**a b** and **c**", "**a b** and <mark>c</mark>"},
		{"**<b>**", "<mark>&lt;b&gt;</mark>"},
		{"odd ** marker", "odd ** marker"},
	} {
		if got := string(snippetHTML(tc.in)); got != tc.want {
			t.Errorf("snippetHTML(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
