package text

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzAppendFold: AppendFold appends what Fold returns, after whatever dst holds, and what
// folding each rune in turn gives.
func FuzzAppendFold(f *testing.F) {
	for _, s := range []string{"", "word", "WoRd", "Kelvin \u212a", "Straße ẞ", "ΣΊΣΥΦΟΣ σίσυφος", "bad \xff\xfe\xc3", "中华"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want := Fold(bytes.Clone(s))
		if got := AppendFold(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendFold(%q) = %q, Fold %q", s, got, want)
		}
		var runes []byte
		for _, r := range string(s) {
			runes = utf8.AppendRune(runes, FoldRune(r))
		}
		if !bytes.Equal(want, runes) {
			t.Fatalf("Fold(%q) = %q, rune by rune %q", s, want, runes)
		}
		if got := AppendFold([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("AppendFold after x: %q", got)
		}
	})
}

// BenchmarkAppendFold folds the words of an English sentence into one buffer, by
// AppendFold and rune by rune (as AppendFold did before its ASCII loop).
func BenchmarkAppendFold(b *testing.B) {
	words := bytes.Fields([]byte("The Harbour Master keeps the parseHTTPHeader logs while Ships come and go"))
	for name, fold := range map[string]func(dst, s []byte) []byte{"ascii": AppendFold, "runes": appendFoldRunes} {
		b.Run(name, func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				for _, w := range words {
					buf = fold(buf[:0], w)
				}
			}
		})
	}
}
