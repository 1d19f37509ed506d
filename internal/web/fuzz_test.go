package web

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzLocalPath: whatever a form says to return to, the browser stays on this site.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/", "/view/a b", "//evil.example/", "/\\evil.example", "https://evil.example/", "javascript:alert(1)",
		"/%2F%2Fevil.example", "\t//evil.example", "/search?q=x#y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := localPath(next)
		if got == "/" {
			return
		}
		if got != next || !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.HasPrefix(got, "/\\") {
			t.Fatalf("localPath(%q) = %q", next, got)
		}
		u, err := url.Parse(got)
		if err != nil || u.Host != "" || u.Scheme != "" {
			t.Fatalf("localPath(%q) = %q leaves the site", next, got)
		}
	})
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
