package text_test

import (
	"reflect"
	"testing"

	"github.com/guide/guide/internal/text"
)

// TestParseMarkdown: the fields Markdown gives a document, and its sections.
func TestParseMarkdown(t *testing.T) {
	cases := []struct {
		name, doc string
		want      text.Markdown
		sections  []text.Section
	}{
		{"FrontMatter", "---\ntitle: Dragons\ndescription: Fire and scales\ntags: [beasts, lore]\n---\n# Heading\n\nFirst words of it here.\n\nMore.\n",
			text.Markdown{Title: "Dragons", Meta: "Fire and scales\nbeasts\nlore", Headings: "Heading\n", Lead: "First words of it here."},
			[]text.Section{{1, "Heading", 73}}},
		{"FirstHeadingIsTheTitle", "# Chalk\n\n[![badge](x.svg)](y)\n\n> Terminal string styling done right\n\nInstall it.\n",
			text.Markdown{Title: "Chalk", Headings: "Chalk\n", Lead: "> Terminal string styling done right"},
			[]text.Section{{1, "Chalk", 0}}},
		{"CodeIsNoHeading", "Intro words are here.\n\n```sh\n# not a heading\n```\n## Real\n\ntext\n",
			text.Markdown{Title: "Real", Headings: "Real\n", Lead: "Intro words are here."},
			[]text.Section{{0, "", 0}, {2, "Real", 49}}},
		{"OneParagraphHasNoLead", "Just one paragraph of words.\n", text.Markdown{}, []text.Section{{0, "", 0}}},
		{"BrokenFrontMatterIsText", "---\n: [\n---\nWords after it here.\n\nMore.\n",
			text.Markdown{Lead: "--- : --- Words after it here."}, []text.Section{{0, "", 0}}},
		// Sections, as a document's outline, leave out what lies between the delimiters.
		{"BrokenFrontMatterHoldsNoSection", "---\n: [\n# In front\n---\n# Heading\n\nWords after it here.\n\nMore.\n",
			text.Markdown{Title: "In front", Headings: "In front\nHeading\n", Lead: "Words after it here."}, []text.Section{{1, "Heading", 23}}},
		{"ReferenceBadgesAreNoLead", "# cookie-parser\n\n[![NPM Version][npm-image]][npm-url] [![Build][ci-image]][ci-url]\n\nParse `Cookie` header and populate [req.cookies](#x).\n\nMore.\n",
			text.Markdown{Title: "cookie-parser", Headings: "cookie-parser\n", Lead: "Parse `Cookie` header and populate req.cookies ."},
			[]text.Section{{1, "cookie-parser", 0}}},
		{"TitleIsItsText", "# YAML <a href=\"https://x\"><img src=\"y.svg\" title=\"npm package\" /></a>\n\nA library for YAML, the data serialization standard.\n\nMore.\n",
			text.Markdown{Title: "YAML", Headings: "YAML\n", Lead: "A library for YAML, the data serialization standard."},
			[]text.Section{{1, `YAML <a href="https://x"><img src="y.svg" title="npm package" /></a>`, 0}}},
		{"HTMLParagraphIsText", "<p align=\"center\"><img src=\"logo.svg\"></p>\n\n<p align=\"center\">Promise based HTTP client for the browser</p>\n\nMore.\n",
			text.Markdown{Lead: "Promise based HTTP client for the browser"}, []text.Section{{0, "", 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md, secs := text.ParseMarkdown([]byte(c.doc)), text.Sections([]byte(c.doc))
			if !reflect.DeepEqual(md, c.want) {
				t.Errorf("fields %+v, want %+v", md, c.want)
			}
			if !reflect.DeepEqual(secs, c.sections) {
				t.Errorf("sections %+v, want %+v", secs, c.sections)
			}
		})
	}
}

// FuzzParseMarkdown: any text parses, and its sections start at lines, in order.
func FuzzParseMarkdown(f *testing.F) {
	f.Add("---\ntitle: x\n---\n# A\n\ntext\n\n## B\n")
	f.Add("```\n# no\n```\n# yes\n")
	f.Add("---\n: [\n")
	f.Fuzz(func(t *testing.T, s string) {
		_ = text.ParseMarkdown([]byte(s))
		secs := text.Sections([]byte(s))
		prev := -1
		for _, sec := range secs {
			if sec.Start <= prev && !(prev == -1) || sec.Start > len(s) || sec.Start > 0 && s[sec.Start-1] != '\n' {
				t.Fatalf("section %+v after %d in %q", sec, prev, s)
			}
			prev = sec.Start
		}
	})
}
