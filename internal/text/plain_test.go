package text

import (
	"strings"
	"testing"
)

// TestOneLineAsFields: oneLine gives what strings.Fields joined by spaces gives.
func TestOneLineAsFields(t *testing.T) {
	for _, s := range []string{"", " ", "a", "a b", " a", "a ", "a  b", "a\tb", "a\nb", "a\u00a0b", "a\u0085b", "é b",
		"\u3000", "a\xffb", "a \xff", "日本 語", "a\r", "\x0bx"} {
		if got, want := oneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzOneLine holds oneLine to strings.Fields joined by spaces.
func FuzzOneLine(f *testing.F) {
	f.Add("a  b\u00a0c")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := oneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("oneLine(%q) = %q, want %q", s, got, want)
		}
	})
}
