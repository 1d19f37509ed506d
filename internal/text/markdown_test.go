package text_test

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/guide/guide/internal/text"
)

// TestParseMarkdown: what the one Markdown reader finds in a document, and its sections.
func TestParseMarkdown(t *testing.T) {
	type h = text.Heading
	cases := []struct {
		name, doc string
		want      text.Markdown
		sections  []text.Section
	}{
		{"FrontMatter", "---\ntitle: Dragons\ndescription: Fire and scales\ntags: [beasts, lore]\n---\n# Heading\n\nFirst words of it here.\n\nMore.\n",
			text.Markdown{Body: 73, Title: "Dragons", Meta: "Fire and scales\nbeasts\nlore", Headings: []h{{1, "Heading", 73}},
				Lead: "First words of it here.", FirstParagraph: "First words of it here."},
			[]text.Section{{1, "Heading", 73}}},
		{"FirstHeadingIsTheTitle", "# Chalk\n\n[![badge](x.svg)](y)\n\n> Terminal string styling done right\n\nInstall it.\n",
			text.Markdown{Title: "Chalk", Headings: []h{{1, "Chalk", 0}}, Lead: "> Terminal string styling done right",
				FirstParagraph: "[![badge](x.svg)](y)"},
			[]text.Section{{1, "Chalk", 0}}},
		{"CodeIsNoHeading", "Intro words are here.\n\n```sh\n# not a heading\n```\n## Real\n\ntext\n",
			text.Markdown{Title: "Real", Headings: []h{{2, "Real", 49}}, Lead: "Intro words are here.", FirstParagraph: "Intro words are here."},
			[]text.Section{{0, "", 0}, {2, "Real", 49}}},
		{"OneParagraphHasNoLead", "Just one paragraph of words.\n", text.Markdown{FirstParagraph: "Just one paragraph of words."},
			[]text.Section{{0, "", 0}}},
		// Front matter is what lies between the delimiters, YAML or not: its text is no
		// paragraph and its lines no headings, for the catalog as for the index.
		{"BrokenFrontMatterIsNoText", "---\n: [\n---\nWords after it here.\n\nMore.\n",
			text.Markdown{Body: 12, Lead: "Words after it here.", FirstParagraph: "Words after it here."}, []text.Section{{0, "", 0}}},
		{"BrokenFrontMatterHoldsNoHeading", "---\n: [\n# In front\n---\n# Heading\n\nWords after it here.\n\nMore.\n",
			text.Markdown{Body: 23, Title: "Heading", Headings: []h{{1, "Heading", 23}}, Lead: "Words after it here.",
				FirstParagraph: "Words after it here."}, []text.Section{{1, "Heading", 23}}},
		{"ReferenceBadgesAreNoLead", "# cookie-parser\n\n[![NPM Version][npm-image]][npm-url] [![Build][ci-image]][ci-url]\n\nParse `Cookie` header and populate [req.cookies](#x).\n\nMore.\n",
			text.Markdown{Title: "cookie-parser", Headings: []h{{1, "cookie-parser", 0}}, Lead: "Parse `Cookie` header and populate req.cookies .",
				FirstParagraph: "[![NPM Version][npm-image]][npm-url] [![Build][ci-image]][ci-url]"},
			[]text.Section{{1, "cookie-parser", 0}}},
		{"TitleIsItsText", "# YAML <a href=\"https://x\"><img src=\"y.svg\" title=\"npm package\" /></a>\n\nA library for YAML, the data serialization standard.\n\nMore.\n",
			text.Markdown{Title: `YAML <a href="https://x"><img src="y.svg" title="npm package" /></a>`,
				Headings: []h{{1, `YAML <a href="https://x"><img src="y.svg" title="npm package" /></a>`, 0}},
				Lead:     "A library for YAML, the data serialization standard.", FirstParagraph: "A library for YAML, the data serialization standard."},
			[]text.Section{{1, `YAML <a href="https://x"><img src="y.svg" title="npm package" /></a>`, 0}}},
		{"HTMLParagraphIsText", "<p align=\"center\"><img src=\"logo.svg\"></p>\n\n<p align=\"center\">Promise based HTTP client for the browser</p>\n\nMore.\n",
			text.Markdown{Lead: "Promise based HTTP client for the browser", FirstParagraph: `<p align="center"><img src="logo.svg"></p>`},
			[]text.Section{{0, "", 0}}},
		{"CommentsAreNoFirstParagraph", "<!-- a note\nstill -->\n# T\n\nOne line\nand another.\n<!-- ends it -->\nnot this\n\nmore\n",
			text.Markdown{Title: "T", Headings: []h{{1, "T", 22}}, Lead: "One line and another. not this", FirstParagraph: "One line and another."},
			[]text.Section{{0, "", 0}, {1, "T", 22}}},
		{"CRLF", "---\r\ntitle: crlf\r\n---\r\nFirst line of words\r\n\r\n# H\r\n",
			text.Markdown{Body: 23, Title: "crlf", Headings: []h{{1, "H", 46}}, Lead: "First line of words", FirstParagraph: "First line of words"},
			[]text.Section{{0, "", 0}, {1, "H", 46}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md, secs := text.ParseMarkdown([]byte(c.doc)), text.Sections([]byte(c.doc))
			if !reflect.DeepEqual(md, c.want) {
				t.Errorf("ParseMarkdown:\n got %+v\nwant %+v", md, c.want)
			}
			if !reflect.DeepEqual(secs, c.sections) {
				t.Errorf("Sections: got %+v, want %+v", secs, c.sections)
			}
		})
	}
}

// TestTitle: a document's title is its front matter's, read as YAML, else its first heading
// outside front matter and fenced code that has some plain text; one line, wherever it is.
func TestTitle(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# Elara Voss\n\nText", "Elara Voss"},
		{"intro\n\n## Second level ##\n", "Second level"},
		{"---\ntitle: \"From front matter\"\n---\n# Heading", "From front matter"},
		{"---\ntitle: 'Single \"quoted\"'\n---\n", `Single "quoted"`},
		{"---\ntitle: \"Escaped \\\"quote\\\"\"\n---\n", `Escaped "quote"`},
		{"---\ntitle: >\n  Folded\n  title\n---\n# Heading", "Folded title"},
		{"---\ntitle: |\n  Literal\n  title\n---\n# Heading", "Literal title"},
		{"---\ntitle: [Two, parts]\n---\n# Heading", "Two parts"},
		{"---\ntitle: plain # a comment\n---\n", "plain"},
		{"---\ntitle: ''\n---\n# Heading of an empty title", "Heading of an empty title"},
		{"---\ntitle: 2024\n---\n# Heading of a number", "Heading of a number"},
		{"---\nauthor: x\n---\n# After front matter", "After front matter"},
		{"---\ntitle: Broken: YAML\n---\n# After broken front matter", "After broken front matter"},
		{"#hashtag is not a heading\n", ""},
		{"####### seven is not a heading", ""},
		{"no heading at all", ""},
		{"---\nauthor: x\n...\n# Closed by dots", "Closed by dots"},
		// Unclosed front matter is no front matter: a reader sees a rule, then the heading.
		{"---\n# Inside unclosed front matter", "Inside unclosed front matter"},
		{"\n---\ntitle: not front matter\n# Heading", "Heading"},
		{"```\n# in code\n```\n# After the code", "After the code"},
		// A heading of a logo has no text: the next is the title, as written.
		{"# ![logo](x.png)\n\n# [The](x) <b>name</b>", "[The](x) <b>name</b>"},
		{strings.Repeat("line\n", 500) + "# Past line 500", "Past line 500"},
		// A lone carriage return ends the heading's line.
		{"# Old Mac\rline endings", "Old Mac"},
	} {
		if got := text.ParseMarkdown([]byte(tc.in)).Title; got != tc.want {
			t.Errorf("title of %q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzParseMarkdown: any bytes parse; the title is one line; headings are of levels 1 to 6,
// one line each, at the starts of lines after the front matter, in order; the sections
// are those headings, with the text before the first; no field runs past its bound.
func FuzzParseMarkdown(f *testing.F) {
	for _, s := range []string{"---\ntitle: x\n---\n# A\n\ntext\n\n## B\n", "```\n# no\n```\n# yes\n", "---\n: [\n",
		"---\ntitle: t\n---\n# h", "# a\n```\n# b\n```", "---\n...", "\x00#", "---\ntitle: |\n  a\n\n  b\n---\n", "<!--\n# c\n-->\np\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		md := text.ParseMarkdown(b)
		if strings.ContainsAny(md.Title, "\n\r") || len(md.Title) > 2000 {
			t.Fatalf("title %q: more than a line, or too long", md.Title)
		}
		if len(md.Lead) > 2000 || len(md.FirstParagraph) > 2000 || len(md.Meta) > 2000 {
			t.Fatalf("a field past its bound: %+v", md)
		}
		prev := md.Body - 1
		for _, h := range md.Headings {
			if h.Level < 1 || h.Level > 6 || strings.ContainsAny(h.Text, "\n\r") || h.Start <= prev ||
				h.Start > 0 && b[h.Start-1] != '\n' {
				t.Fatalf("heading %+v after %d in %q", h, prev, b)
			}
			prev = h.Start
		}
		secs := text.Sections(b)
		if len(secs) == 0 || len(secs) < len(md.Headings) || len(secs) > len(md.Headings)+1 {
			t.Fatalf("%d sections for %d headings in %q", len(secs), len(md.Headings), b)
		}
		for i, h := range md.Headings {
			if s := secs[len(secs)-len(md.Headings)+i]; s.Level != h.Level || s.Heading != h.Text || s.Start != h.Start {
				t.Fatalf("section %+v for heading %+v in %q", s, h, b)
			}
		}
	})
}

// TestParseMarkdownAllocatesNoLines: reading a document allocates for what it finds — its
// headings and paragraphs — not for each line it reads: the catalog and the index read
// every document saved.
func TestParseMarkdownAllocatesNoLines(t *testing.T) {
	doc := []byte("intro line\n\n# The title\n" + strings.Repeat("\nbody text, a paragraph of its own\n", 500))
	if md := text.ParseMarkdown(doc); md.Title != "The title" {
		t.Fatalf("title %q", md.Title)
	}
	const runs = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		text.ParseMarkdown(doc)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 1024 {
		t.Fatalf("ParseMarkdown allocated %d bytes a call for one heading and 501 paragraphs", per)
	}
}
