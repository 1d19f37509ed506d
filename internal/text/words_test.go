package text_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/guide/guide/internal/text"
	"github.com/guide/guide/tools/corpus"
)

func equal[T comparable](t *testing.T, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

// readerWordsReference is ReaderWords as first written, rune by rune through the Unicode
// tables: the ASCII fast path must count exactly as it does.
func readerWordsReference(b []byte) int {
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

func TestReaderWords(t *testing.T) {
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
		equal(t, text.ReaderWords([]byte(in)), want, "words in "+in)
		equal(t, text.ReaderWords([]byte(in)), readerWordsReference([]byte(in)), "reference on "+in)
	}
}

func TestReaderWordsMatchesReference(t *testing.T) {
	var buf bytes.Buffer
	for _, f := range corpus.Plan(corpus.Options{Docs: 300, Seed: 3}) {
		buf.Reset()
		corpus.Content(&buf, 3, f)
		equal(t, text.ReaderWords(buf.Bytes()), readerWordsReference(buf.Bytes()), "words in "+f.Path)
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
		equal(t, text.ReaderWords(b), readerWordsReference(b), "words in "+string(b))
	}
}

func TestReaderWordsScripts(t *testing.T) {
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
		if got := text.ReaderWords([]byte(tc.in)); got != tc.want {
			t.Errorf("ReaderWords(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestIsWordByteAsRune: the ASCII table says what IsWordRune says, and no byte of a
// multi-byte character is a word byte.
func TestIsWordByteAsRune(t *testing.T) {
	for c := 0; c < 256; c++ {
		if got, want := text.IsWordByte(byte(c)), c < utf8.RuneSelf && text.IsWordRune(rune(c)); got != want {
			t.Errorf("IsWordByte(%#x) = %v, want %v", c, got, want)
		}
	}
}

// FuzzCountWords holds CountWords to the words Words splits a text into.
func FuzzCountWords(f *testing.F) {
	for _, s := range []string{"", "one two", "a_b c1 é\u0301 中文", "\xff\xfeword", "x\u200dy"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := 0
		text.Words([]byte(s), func(text.Span) bool { n++; return true })
		if got := text.CountWords(s); got != n {
			t.Fatalf("CountWords(%q) = %d, Words splits %d", s, got, n)
		}
	})
}
