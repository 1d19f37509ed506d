package text

import "unicode"

// IsCJK reports a rune of a script written without spaces between words (or, for
// Hangul, with particles glued to them): Han, Hiragana, Katakana and Hangul. The index
// finds words of these scripts inside longer runs, which ripgrep's -w cannot.
func IsCJK(r rune) bool {
	switch {
	case r < 0x1100 || r >= 0x1200 && r < 0x2e80: // none of the four scripts (Latin, Greek, Cyrillic, punctuation, …)
		return false
	case r >= 0x4e00 && r <= 0x9fff || r >= 0xac00 && r <= 0xd7a3: // the common ideographs, Hangul syllables
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// HasCJK reports whether s holds a rune IsCJK reports.
func HasCJK(s string) bool {
	for _, r := range s {
		if IsCJK(r) {
			return true
		}
	}
	return false
}
