package text

import (
	"testing"
	"unicode"
)

// TestIsCJKAsItsScripts: IsCJK's shortcuts give, for every code point, what the four
// scripts' tables give.
func TestIsCJKAsItsScripts(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
		if got := IsCJK(r); got != want {
			t.Fatalf("IsCJK(%U) = %v, want %v", r, got, want)
		}
	}
}
