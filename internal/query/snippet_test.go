package query_test

import (
	"strings"
	"testing"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

func TestSnippet(t *testing.T) {
	long := strings.Repeat("Filler words about nothing much. ", 100)
	cases := []struct {
		name, content string
		terms, stems  []string
		want          string
	}{
		{"MarksTheMatch", "# Dragons\n\nA dragon's lair is quiet.", []string{"dragon"}, []string{"dragon"},
			"# **Dragons** A **dragon**'s lair is quiet."},
		{"WindowAroundTheBestPlace", long + "Here the magic sword glows. " + long, []string{"magic", "sword"}, []string{"magic", "sword"},
			"…"},
		{"CaseFolded", "STRASSE und Straße", []string{"straße"}, []string{""}, "STRASSE und **Straße**"},
		{"CJKInsideARun", "我爱北京天安门。", []string{"北京"}, []string{""}, "我爱**北京**天安门。"},
		{"NoMatchIsTheBeginning", "Just text.", []string{"absent"}, []string{""}, "Just text."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := query.Snippet([]byte(c.content), c.terms, c.stems)
			if len(got) > query.SnippetChars+80 {
				t.Fatalf("snippet of %d bytes: %q", len(got), got)
			}
			if c.want == "…" {
				if !strings.HasPrefix(got, "…") || !strings.Contains(got, "**magic** **sword**") || !strings.HasSuffix(got, "…") {
					t.Fatalf("got %q", got)
				}
				return
			}
			testkit.Equal(t, got, c.want, "snippet")
		})
	}
}
