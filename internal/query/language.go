package query

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// DetectLanguage guesses the language of a text, as an ISO 639-1 code, "und" when it
// cannot tell. A small heuristic, not a model: the writing system decides first (Hangul is
// Korean; kana, with or without Han, Japanese; Han alone Chinese; Cyrillic Russian, or
// Ukrainian when і, ї, є or ґ appear; Greek, Arabic, Hebrew, Thai, Devanagari), and a Latin
// text goes to the language whose most common words it uses most (English, German,
// French, Spanish, Italian, Portuguese, Dutch). It reads the first 64 KiB.
func DetectLanguage(b []byte) string {
	if len(b) > 64<<10 {
		b = b[:64<<10]
	}
	text := b
	var letters, latin, hangul, kana, han, cyr, ukr, greek, arabic, hebrew, thai, deva int
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		switch {
		case unicode.Is(unicode.Latin, r):
			latin++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			kana++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
			if strings.ContainsRune("іїєґІЇЄҐ", r) {
				ukr++
			}
		case unicode.Is(unicode.Greek, r):
			greek++
		case unicode.Is(unicode.Arabic, r):
			arabic++
		case unicode.Is(unicode.Hebrew, r):
			hebrew++
		case unicode.Is(unicode.Thai, r):
			thai++
		case unicode.Is(unicode.Devanagari, r):
			deva++
		}
	}
	if letters == 0 {
		return "und"
	}
	share := func(n int) bool { return n*5 >= letters } // at least a fifth of the letters
	switch {
	case share(hangul):
		return "ko"
	case kana > 0 && share(kana+han) && kana*10 >= han:
		return "ja"
	case share(han):
		return "zh"
	case share(cyr):
		if ukr*100 >= cyr {
			return "uk"
		}
		return "ru"
	case share(greek):
		return "el"
	case share(arabic):
		return "ar"
	case share(hebrew):
		return "he"
	case share(thai):
		return "th"
	case share(deva):
		return "hi"
	case share(latin):
		return latinLanguage(text)
	}
	return "und"
}

// stopwords are the most common short words of each Latin-script language the heuristic
// knows; words shared by several languages are left out.
var stopwords = map[string][]string{
	"en": {"the", "and", "of", "to", "is", "in", "that", "it", "with", "for", "was", "on", "are", "this", "be", "by", "not", "or", "from", "which", "have", "an", "they", "you", "we", "his", "her"},
	"de": {"der", "die", "und", "das", "ist", "nicht", "ein", "eine", "zu", "den", "mit", "sich", "auf", "für", "im", "dem", "von", "auch", "es", "wird", "sind", "ich", "wir", "aus", "bei"},
	"fr": {"le", "la", "les", "et", "des", "est", "un", "une", "du", "dans", "que", "qui", "pour", "pas", "sur", "au", "avec", "il", "elle", "ce", "sont", "nous", "vous", "aux", "mais"},
	"es": {"el", "los", "las", "y", "es", "del", "que", "en", "un", "una", "por", "con", "para", "su", "se", "lo", "como", "más", "pero", "sus", "está", "son", "muy"},
	"it": {"il", "di", "che", "è", "gli", "della", "per", "un", "una", "sono", "con", "non", "nel", "del", "alla", "anche", "come", "più", "questo", "ma", "si"},
	"pt": {"o", "os", "as", "e", "do", "da", "que", "em", "um", "uma", "para", "com", "não", "se", "no", "na", "por", "mais", "dos", "das", "como", "é", "ao"},
	"nl": {"de", "het", "een", "en", "van", "is", "dat", "op", "te", "zijn", "niet", "met", "voor", "ook", "als", "aan", "bij", "er", "maar", "om", "wordt", "ze"},
}

var stopwordIndex = func() map[string][]string {
	idx := map[string][]string{}
	for lang, words := range stopwords {
		for _, w := range words {
			idx[w] = append(idx[w], lang)
		}
	}
	return idx
}()

// latinLanguage picks the Latin-script language whose common words the text uses most;
// "und" when none stands out (fewer than three hits, or a tie).
func latinLanguage(b []byte) string {
	score := map[string]int{}
	for w := range strings.FieldsFuncSeq(strings.ToLower(string(b)), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	}) {
		for _, lang := range stopwordIndex[w] {
			score[lang]++
		}
	}
	best, top, second := "und", 0, 0
	for lang, n := range score {
		switch {
		case n > top:
			best, top, second = lang, n, top
		case n > second:
			second = n
		}
	}
	if top < 3 || top == second {
		return "und"
	}
	return best
}
