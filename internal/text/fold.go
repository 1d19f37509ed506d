package text

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// Fold maps every rune to one representative of its simple case-folding orbit (the
// orbit's smallest member, lower-cased), which is the equality `rg -i` uses: K, k and the
// Kelvin sign fold together, so do ẞ and ß, Σ, σ and ς. It returns s itself when nothing
// changes.
func Fold(s []byte) []byte {
	ascii := true
	for _, c := range s {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		out, copied := s, false
		for i, c := range s {
			if c >= 'A' && c <= 'Z' {
				if !copied {
					out, copied = append([]byte(nil), s...), true
				}
				out[i] = c + 'a' - 'A'
			}
		}
		return out
	}
	return AppendFold(make([]byte, 0, len(s)), s)
}

// AppendFold appends s folded as Fold folds it to dst, allocating nothing when dst has
// room: for a caller that folds one word after another into the same buffer. A word of
// ASCII, most of them, is folded a byte at a time into room made once.
func AppendFold(dst, s []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(s))[:n+len(s)]
	out := dst[n:]
	for i, c := range s {
		if c >= utf8.RuneSelf {
			return appendFoldRunes(dst[:n+i], s[i:])
		}
		if c-'A' < 26 {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return dst
}

// appendFoldRunes is AppendFold a rune at a time.
func appendFoldRunes(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		i += size
		dst = utf8.AppendRune(dst, FoldRune(r))
	}
	return dst
}

// FoldString is Fold for a string.
func FoldString(s string) string { return string(Fold([]byte(s))) }

// FoldRune is r as Fold folds it: its lower-case form, the same for every character
// bytes.EqualFold holds equal to it.
func FoldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return unicode.ToLower(least)
}
