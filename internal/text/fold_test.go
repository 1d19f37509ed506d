package text

import (
	"bytes"
	"testing"
)

// FuzzAppendFold: AppendFold appends what Fold returns, after whatever dst holds.
func FuzzAppendFold(f *testing.F) {
	for _, s := range []string{"", "word", "WoRd", "Kelvin \u212a", "Straße ẞ", "ΣΊΣΥΦΟΣ σίσυφος", "bad \xff\xfe\xc3", "中华"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want := Fold(bytes.Clone(s))
		if got := AppendFold(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendFold(%q) = %q, Fold %q", s, got, want)
		}
		if got := AppendFold([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("AppendFold after x: %q", got)
		}
	})
}
