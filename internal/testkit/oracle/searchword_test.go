package oracle

import "testing"

func TestSearchWordIsAWholeWord(t *testing.T) {
	for in, want := range map[string]string{
		"Village Zeitüberschreitung coverage": "coverage",
		"naïve café au lait":                  "lait",
		"plain words only here":               "plain",
		"über":                                "",
	} {
		if got := searchWord(in); got != want {
			t.Errorf("searchWord(%q) = %q, want %q", in, got, want)
		}
	}
}
