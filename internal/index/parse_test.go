package index_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/text"
)

func TestParseQuery(t *testing.T) {
	ok := []struct{ in, want string }{
		{"dragon", "+dragon"},
		{"Dragon DRAGON dragon", "+dragon"},
		{"magic sword", "+magic +sword"},
		{`"magic system" dragon`, `+dragon +"magic system"`},
		{`the dragon of the north`, "+dragon +north ?the ?of"},
		{`"the"`, "+the"},
		{`"to be or not"`, `+"to be or not"`},
		{`dragon^3 +sword -lair:gold~2 (x OR y)`, "+dragon +3 +sword +lair +gold +2 +x +y ?or"},
		{`drag* ?ragon`, "+drag +ragon"},
		{`“smart quotes” «ёлка»`, `+ёлка +"smart quotes"`},
		{`"unclosed phrase`, `+"unclosed phrase"`},
		{"STRASSE Straße", "+strasse +straße"},
		{"中华人民 한국어를", "+中华人民 +한국어를"},
		{"snake_case foo.bar", "+snake_case +foo +bar"},
		// A sentence of more than MaxQueryTerms words, fewer of them different.
		{strings.Repeat("read it or write it ", 9), "+read +write ?it ?or"},
		// A pasted paragraph: its common words do not count against MaxQueryTerms, and
		// only the first MaxOptional of them rank.
		{manyWords(index.MaxQueryTerms) + "a an and are as at be but by for", wordsQuery(index.MaxQueryTerms) + " ?a ?an ?and ?are ?as ?at ?be ?but"},
	}
	for _, c := range ok {
		q, err := index.ParseQuery(c.in)
		if err != nil {
			t.Errorf("ParseQuery(%q): %v", c.in, err)
			continue
		}
		testkit.Equal(t, q.String(), c.want, "ParseQuery("+c.in+")")
	}
	bad := []struct {
		name, in string
		want     error
	}{
		{"ErrEmptyQuery", "", index.ErrEmptyQuery},
		{"ErrEmptyQuery/blank", " \t\n", index.ErrEmptyQuery},
		{"ErrNothingToFind/punctuation", `+-:^~*?"()`, index.ErrNothingToFind},
		{"ErrNothingToFind/stop words", "the of and", index.ErrNothingToFind},
		{"ErrNothingToFind/German and Russian", "der und и в", index.ErrNothingToFind},
		{"ErrQueryTooLong", strings.Repeat("x", index.MaxQueryChars+1), index.ErrQueryTooLong},
		{"ErrTooManyTerms", manyWords(index.MaxQueryTerms + 1), index.ErrTooManyTerms},
		{"ErrTooManyTerms/phrase", `"` + strings.Repeat("w ", index.MaxQueryTerms+1) + `"`, index.ErrTooManyTerms},
		{"ErrInvalidUTF8", "a\xffb", index.ErrInvalidUTF8},
		{"ErrInvalidUTF8/replacement", "a\uFFFDb", index.ErrInvalidUTF8},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if _, err := index.ParseQuery(c.in); !errors.Is(err, c.want) {
				t.Fatalf("ParseQuery(%.40q) = %v, want %v", c.in, err, c.want)
			}
		})
	}
}

// FuzzParseQuery: no text makes the parser, or a search with what it returns, fail in any
// way but a documented error; every word it returns is a folded word of the text.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"dragon", `"magic system"`, `+-:^~*?"()`, "the", "a\xffb", "中华 한국어",
		`"""`, `"a" "b c" "`, "Σ ς σ K k", strings.Repeat("ab ", 40), "\x00\x01"} {
		f.Add(s)
	}
	x := openIndex(f, filepath.Join(f.TempDir(), "index"))
	(&feeder{x: x}).batch(f, map[string]*string{"a.md": str("magic system of dragons"), "b/c.md": str("中华人民 한국어를")})
	f.Fuzz(func(t *testing.T, s string) {
		q, err := index.ParseQuery(s)
		if err != nil {
			for _, e := range []error{index.ErrEmptyQuery, index.ErrNothingToFind, index.ErrQueryTooLong,
				index.ErrTooManyTerms, index.ErrInvalidUTF8} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("ParseQuery(%q): undocumented error %v", s, err)
		}
		if len(q.Terms()) > index.MaxQueryTerms+index.MaxOptional || len(q.Optional) > index.MaxOptional || len(q.Words)+len(q.Phrases) == 0 {
			t.Fatalf("ParseQuery(%q) = %s", s, q)
		}
		for _, w := range q.Terms() {
			if w == "" || !utf8.ValidString(w) || text.FoldString(w) != w {
				t.Fatalf("ParseQuery(%q): word %q", s, w)
			}
			for _, r := range w {
				if !text.IsWordRune(r) {
					t.Fatalf("ParseQuery(%q): word %q holds %q", s, w, r)
				}
			}
		}
		if _, err := x.Search(testkit.Context(t), index.Request{Query: q, Limit: 5}); err != nil {
			t.Fatalf("Search(%s): %v", q, err)
		}
	})
}

// wordsQuery is the canonical form of manyWords(n).
func wordsQuery(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf("+w%d", i))
	}
	return strings.Join(parts, " ")
}

// manyWords returns n different words.
func manyWords(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "w%d ", i)
	}
	return b.String()
}
