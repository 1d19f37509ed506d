package projection_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/guide/guide/internal/projection"
)

func TestTitle(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# Elara Voss\n\nText", "Elara Voss"},
		{"intro\n\n## Second level ##\n", "Second level"},
		{"---\ntitle: \"From front matter\"\n---\n# Heading", "From front matter"},
		{"---\nauthor: x\n---\n# After front matter", "After front matter"},
		{"#hashtag is not a heading\n", ""},
		{"####### seven is not a heading", ""},
		{"no heading at all", ""},
		{"---\nauthor: x\n...\n# Closed by dots", "Closed by dots"},
		// Unclosed front matter is no front matter: a reader sees a rule, then the heading.
		{"---\n# Inside unclosed front matter", "Inside unclosed front matter"},
		{"\n---\ntitle: not front matter\n# Heading", "Heading"},
		{strings.Repeat("line\n", 200) + "# Past line 200", ""},
		{strings.Repeat("line\n", 199) + "# Line 200", "Line 200"},
		// A lone carriage return ends the heading's line.
		{"# Old Mac\rline endings", "Old Mac"},
	} {
		if got := projection.Title([]byte(tc.in)); got != tc.want {
			t.Errorf("Title(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzTitle checks that a title and an outline of any bytes are one line each and never
// hold front matter's delimiters alone.
func FuzzTitle(f *testing.F) {
	for _, s := range []string{"---\ntitle: t\n---\n# h", "# a\n```\n# b\n```", "---\n...", "\x00#"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if title := projection.Title(b); strings.ContainsAny(title, "\n\r") {
			t.Fatalf("Title = %q: more than a line", title)
		}
		for _, h := range projection.Outline(b) {
			if h.Level < 1 || h.Level > 6 || strings.ContainsAny(h.Text, "\n\r") {
				t.Fatalf("Outline heading %+v", h)
			}
		}
	})
}

func TestSummaryParts(t *testing.T) {
	doc := []byte("---\ntitle: Front\n---\n<!-- a note\nstill -->\n# Elara Voss\n\n```\n# not a heading\n```\n" +
		"Elara is a cartographer\nfrom the north.\n\nSecond paragraph.\n\n## Early life ##\n### Work\n####### too deep\n")
	got := projection.Outline(doc)
	want := []projection.Heading{{1, "Elara Voss"}, {2, "Early life"}, {3, "Work"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Outline = %v, want %v", got, want)
	}
	if p := projection.FirstParagraph(doc); p != "Elara is a cartographer from the north." {
		t.Errorf("FirstParagraph = %q", p)
	}
	long := []byte(strings.Repeat("word ", 400))
	if p := projection.FirstParagraph(long); len(p) > projection.MaxFirstParagraph || !strings.HasSuffix(p, "…") {
		t.Errorf("a long paragraph is not clipped: %d bytes", len(p))
	}
}
