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

// TestParseMarkdown: the fields Markdown gives a document, and its sections.
func TestParseMarkdown(t *testing.T) {
	cases := []struct {
		name, doc string
		want      index.Markdown
		sections  []index.Section
	}{
		{"FrontMatter", "---\ntitle: Dragons\ndescription: Fire and scales\ntags: [beasts, lore]\n---\n# Heading\n\nFirst words of it here.\n\nMore.\n",
			index.Markdown{Title: "Dragons", Meta: "Fire and scales\nbeasts\nlore", Headings: "Heading\n", Lead: "First words of it here."},
			[]index.Section{{1, "Heading", 73}}},
		{"FirstHeadingIsTheTitle", "# Chalk\n\n[![badge](x.svg)](y)\n\n> Terminal string styling done right\n\nInstall it.\n",
			index.Markdown{Title: "Chalk", Headings: "Chalk\n", Lead: "> Terminal string styling done right"},
			[]index.Section{{1, "Chalk", 0}}},
		{"CodeIsNoHeading", "Intro words are here.\n\n```sh\n# not a heading\n```\n## Real\n\ntext\n",
			index.Markdown{Title: "Real", Headings: "Real\n", Lead: "Intro words are here."},
			[]index.Section{{0, "", 0}, {2, "Real", 49}}},
		{"OneParagraphHasNoLead", "Just one paragraph of words.\n", index.Markdown{}, []index.Section{{0, "", 0}}},
		{"BrokenFrontMatterIsText", "---\n: [\n---\nWords after it here.\n\nMore.\n",
			index.Markdown{Lead: "--- : --- Words after it here."}, []index.Section{{0, "", 0}}},
		// Sections, as a document's outline, leave out what lies between the delimiters.
		{"BrokenFrontMatterHoldsNoSection", "---\n: [\n# In front\n---\n# Heading\n\nWords after it here.\n\nMore.\n",
			index.Markdown{Title: "In front", Headings: "In front\nHeading\n", Lead: "Words after it here."}, []index.Section{{1, "Heading", 23}}},
		{"ReferenceBadgesAreNoLead", "# cookie-parser\n\n[![NPM Version][npm-image]][npm-url] [![Build][ci-image]][ci-url]\n\nParse `Cookie` header and populate [req.cookies](#x).\n\nMore.\n",
			index.Markdown{Title: "cookie-parser", Headings: "cookie-parser\n", Lead: "Parse `Cookie` header and populate req.cookies ."},
			[]index.Section{{1, "cookie-parser", 0}}},
		{"TitleIsItsText", "# YAML <a href=\"https://x\"><img src=\"y.svg\" title=\"npm package\" /></a>\n\nA library for YAML, the data serialization standard.\n\nMore.\n",
			index.Markdown{Title: "YAML", Headings: "YAML\n", Lead: "A library for YAML, the data serialization standard."},
			[]index.Section{{1, `YAML <a href="https://x"><img src="y.svg" title="npm package" /></a>`, 0}}},
		{"HTMLParagraphIsText", "<p align=\"center\"><img src=\"logo.svg\"></p>\n\n<p align=\"center\">Promise based HTTP client for the browser</p>\n\nMore.\n",
			index.Markdown{Lead: "Promise based HTTP client for the browser"}, []index.Section{{0, "", 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md, secs := index.ParseMarkdown([]byte(c.doc)), index.Sections([]byte(c.doc))
			testkit.Equal(t, md, c.want, "fields")
			testkit.Equal(t, secs, c.sections, "sections")
		})
	}
}

// FuzzParseMarkdown: any text parses, and its sections start at lines, in order.
func FuzzParseMarkdown(f *testing.F) {
	f.Add("---\ntitle: x\n---\n# A\n\ntext\n\n## B\n")
	f.Add("```\n# no\n```\n# yes\n")
	f.Add("---\n: [\n")
	f.Fuzz(func(t *testing.T, s string) {
		_ = index.ParseMarkdown([]byte(s))
		secs := index.Sections([]byte(s))
		prev := -1
		for _, sec := range secs {
			if sec.Start <= prev && !(prev == -1) || sec.Start > len(s) || sec.Start > 0 && s[sec.Start-1] != '\n' {
				t.Fatalf("section %+v after %d in %q", sec, prev, s)
			}
			prev = sec.Start
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
