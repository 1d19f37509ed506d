package projection_test

import (
	"testing"

	"github.com/guide/guide/internal/projection"
)

func TestCountWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"one two  three\n", 3},
		{"don't stop well-known", 3},
		{"# Heading\n\n- item, item.", 3},
		{"Größe und Übermaß", 3},
		{"Привет, мир", 2},
		{"안녕하세요 세계", 2},
		{"灯台のシーン", 6},
		{"v1.2 and 3,000", 5},
	} {
		if got := projection.CountWords([]byte(tc.in)); got != tc.want {
			t.Errorf("CountWords(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestTitle(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# Elara Voss\n\nText", "Elara Voss"},
		{"intro\n\n## Second level ##\n", "Second level"},
		{"---\ntitle: \"From front matter\"\n---\n# Heading", "From front matter"},
		{"---\nauthor: x\n---\n# After front matter", "After front matter"},
		{"#hashtag is not a heading\n", ""},
		{"####### seven is not a heading", ""},
		{"no heading at all", ""},
	} {
		if got := projection.Title([]byte(tc.in)); got != tc.want {
			t.Errorf("Title(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
