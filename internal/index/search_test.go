package index_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/text"
)

// FuzzParseQuery: no text makes the parser, or a search of the index with what it returns,
// fail in any way but a documented error; every word it returns is a folded word of the text.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"dragon", `"magic system"`, `+-:^~*?"()`, "the", "a\xffb", "中华 한국어",
		`"""`, `"a" "b c" "`, "Σ ς σ K k", strings.Repeat("ab ", 40), "\x00\x01"} {
		f.Add(s)
	}
	x := openIndex(f, filepath.Join(f.TempDir(), "index"))
	(&feeder{x: x}).batch(f, map[string]*string{"a.md": str("magic system of dragons"), "b/c.md": str("中华人民 한국어를")})
	f.Fuzz(func(t *testing.T, s string) {
		q, err := querylang.Parse(s)
		if err != nil {
			for _, e := range []error{querylang.ErrEmpty, querylang.ErrNothingToFind, querylang.ErrTooLong,
				querylang.ErrTooManyTerms, querylang.ErrInvalidUTF8} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("Parse(%q): undocumented error %v", s, err)
		}
		if len(q.Terms()) > querylang.MaxTerms+querylang.MaxOptional || len(q.Optional) > querylang.MaxOptional || len(q.Words)+len(q.Phrases) == 0 {
			t.Fatalf("Parse(%q) = %s", s, q)
		}
		for _, w := range q.Terms() {
			if w == "" || !utf8.ValidString(w) || text.FoldString(w) != w {
				t.Fatalf("Parse(%q): word %q", s, w)
			}
			for _, r := range w {
				if !text.IsWordRune(r) {
					t.Fatalf("Parse(%q): word %q holds %q", s, w, r)
				}
			}
		}
		if _, err := x.Search(testkit.Context(t), search.Request{Query: q, Limit: 5}); err != nil {
			t.Fatalf("Search(%s): %v", q, err)
		}
	})
}
