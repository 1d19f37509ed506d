package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
)

// TestWebPage: --http serves the web page at /, beside /mcp, behind the token when there
// is one.
func TestWebPage(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	t.Run("Open", func(t *testing.T) {
		m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0")
		base := "http://" + m.Addr().String()
		code, body := get(t, base+"/view/Characters", "")
		testkit.Equal(t, code, http.StatusOK, "folder page")
		for _, want := range []string{`<a href="/view/Characters/Elara.md">Elara.md</a>`, `aria-label="Search"`, `id="status"`} {
			if !strings.Contains(body, want) {
				t.Fatalf("page lacks %q:\n%s", want, body)
			}
		}
		// Ready once the search index has caught up with the catalog too.
		testkit.Eventually(t, 30*time.Second, func() (bool, string) {
			code, body := get(t, base+"/healthz", "")
			return code == http.StatusOK, "healthz: " + body
		})
	})
	t.Run("WithToken", func(t *testing.T) {
		m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0", "--token-file", tokenFile(t, "s3cret"))
		base := "http://" + m.Addr().String()
		req, _ := http.NewRequest("GET", base+"/", nil)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		testkit.NoErr(t, err, "GET /")
		res.Body.Close()
		testkit.Equal(t, res.StatusCode, http.StatusSeeOther, "unsigned")
		testkit.Equal(t, res.Header.Get("Location"), "/signin?next=%2F", "to the sign-in form")
		code, _ := get(t, base+"/", "s3cret")
		testkit.Equal(t, code, http.StatusOK, "with the bearer token")
	})
}
