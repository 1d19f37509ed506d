package querylang_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/guide/guide/internal/index/querylang"
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
		{manyWords(querylang.MaxTerms) + "a an and are as at be but by for", wordsQuery(querylang.MaxTerms) + " ?a ?an ?and ?are ?as ?at ?be ?but"},
	}
	for _, c := range ok {
		q, err := querylang.Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got := q.String(); got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	bad := []struct {
		name, in string
		want     error
	}{
		{"ErrEmptyQuery", "", querylang.ErrEmpty},
		{"ErrEmptyQuery/blank", " \t\n", querylang.ErrEmpty},
		{"ErrNothingToFind/punctuation", `+-:^~*?"()`, querylang.ErrNothingToFind},
		{"ErrNothingToFind/stop words", "the of and", querylang.ErrNothingToFind},
		{"ErrNothingToFind/German and Russian", "der und и в", querylang.ErrNothingToFind},
		{"ErrQueryTooLong", strings.Repeat("x", querylang.MaxChars+1), querylang.ErrTooLong},
		{"ErrTooManyTerms", manyWords(querylang.MaxTerms + 1), querylang.ErrTooManyTerms},
		{"ErrTooManyTerms/phrase", `"` + strings.Repeat("w ", querylang.MaxTerms+1) + `"`, querylang.ErrTooManyTerms},
		{"ErrInvalidUTF8", "a\xffb", querylang.ErrInvalidUTF8},
		{"ErrInvalidUTF8/replacement", "a\uFFFDb", querylang.ErrInvalidUTF8},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if _, err := querylang.Parse(c.in); !errors.Is(err, c.want) {
				t.Fatalf("Parse(%.40q) = %v, want %v", c.in, err, c.want)
			}
		})
	}
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
