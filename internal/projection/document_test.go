package projection_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/corpus"
)

// countWordsReference is CountWords as first written, rune by rune through the Unicode
// tables: the ASCII fast path must count exactly as it does.
func countWordsReference(b []byte) int {
	n := 0
	in := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			n++
			in = false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if !in {
				n++
				in = true
			}
		case in && (r == '\'' || r == '’' || r == '-') && len(b) > 0:
			next, _ := utf8.DecodeRune(b)
			in = unicode.IsLetter(next) || unicode.IsDigit(next)
		default:
			in = false
		}
	}
	return n
}

func TestCountWords(t *testing.T) {
	for in, want := range map[string]int{
		"":                               0,
		"one two  three":                 3,
		"don't well-known -x x- a'":      5,
		"Größe über-all straße":          3,
		"文档 和 the 検索":                    6,
		"v1.2.3 a_b 42":                  6,
		"it's\u2019s don\u2019t-é":       2,
		"end-\u00e9t\u00e9 foo-'bar x'y": 4,
	} {
		testkit.Equal(t, projection.CountWords([]byte(in)), want, "words in "+in)
		testkit.Equal(t, projection.CountWords([]byte(in)), countWordsReference([]byte(in)), "reference on "+in)
	}
}

func TestCountWordsMatchesReference(t *testing.T) {
	var buf bytes.Buffer
	for _, f := range corpus.Plan(corpus.Options{Docs: 300, Seed: 3}) {
		buf.Reset()
		corpus.Content(&buf, 3, f)
		testkit.Equal(t, projection.CountWords(buf.Bytes()), countWordsReference(buf.Bytes()), "words in "+f.Path)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab Z9 -'’_.\n\té文カ한ДÄ\u0301\x00\xff")
	for range 2000 {
		var b []byte
		for range rng.IntN(40) {
			b = utf8.AppendRune(b, alphabet[rng.IntN(len(alphabet))])
		}
		if rng.IntN(4) == 0 && len(b) > 0 {
			b = b[:rng.IntN(len(b))] // cut inside a rune now and then
		}
		testkit.Equal(t, projection.CountWords(b), countWordsReference(b), "words in "+string(b))
	}
}

func TestCountWordsScripts(t *testing.T) {
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
