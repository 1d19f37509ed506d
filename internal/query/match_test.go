package query

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestWordMatchesAgree checks that finding the terms in a folded copy of the text gives
// the same words as splitting the whole text into words: on texts built from pieces that
// sit at word boundaries, fold (to characters of other lengths too), and take other forms,
// in Latin, Cyrillic and Greek.
func TestWordMatchesAgree(t *testing.T) {
	pieces := []string{"dragon", "Dragons", "DRAGON", "dragonfly", "dragonflies", "a", " ", "  ", "\n", "-", "_", ".",
		"é", "Ünder", "under", "happy", "happiness", "happi", "naïve", "日本", "x1", "1", "\u212aelvin", "kelvin",
		"\u017ftop", "stop", "\xff", "\u00a0", "ß", "straße", "code", "Codes", "coded", "review", "re-view",
		"пример", "Пример", "ПРИМЕРЫ", "примерно", "при", "отчёт", "ОТЧЁТ", "Σίσυφος", "ΣΊΣΥΦΟΣ", "σίσυφοσ",
		"Straße", "STRASSE", "\u1e9e", "Ärger", "ärger", "\xd0", "\xd0\x9f"}
	queries := [][2][]string{
		{{"dragon"}, {"dragon"}},
		{{"dragons"}, {"dragon"}},
		{{"happy"}, {"happi"}},
		{{"code", "review"}, {"code", "review"}},
		{{"review", "code"}, {"review", "cod"}},
		{{"kelvin"}, {"kelvin"}},
		{{"stop"}, {"stop"}},
		{{"under"}, {""}},
		{{"x1"}, {""}},
		{{"a"}, {""}},
		{{"пример"}, {"пример"}},
		{{"примеры"}, {"пример"}},
		{{"отчёт", "review"}, {"", "review"}},
		{{"σίσυφος"}, {""}},
		{{"straße"}, {"straß"}},
		{{"ärger"}, {"ärger"}},
	}
	r := rand.New(rand.NewPCG(7, 8))
	fast, folded := 0, 0 // searched in a folded copy; of those, for terms not all ASCII
	for n := range 3000 {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := []byte(b.String())
		q := queries[n%len(queries)]
		want := splitWordMatches(text, q[0], q[1], 1000)
		got, ok := foldedWordMatches(text, q[0], q[1], 1000, nil)
		if !ok {
			continue
		}
		fast++
		if !isASCII(strings.Join(q[0], "")) {
			folded++
		}
		if !slices.Equal(got, want) {
			t.Fatalf("text %q, terms %q stems %q:\n got %v\nwant %v", text, q[0], q[1], got, want)
		}
	}
	if fast < 1000 || folded < 300 {
		t.Fatalf("only %d of 3000 texts were searched the fast way, %d for terms beyond ASCII", fast, folded)
	}
}

// FuzzWordMatches holds the two ways of finding a query's words to the same answer on any
// text, valid UTF-8 or not.
func FuzzWordMatches(f *testing.F) {
	f.Add([]byte("Dragons flew; a dragonfly did not."), "dragons", "dragon")
	f.Add([]byte("\u212aelvin and kelvin"), "kelvin", "kelvin")
	f.Add([]byte("happy happiness\xffhappi"), "happy", "happi")
	f.Add([]byte("Пример: ПРИМЕРЫ и примерно\u1e9e"), "примеры", "пример")
	f.Fuzz(func(t *testing.T, text []byte, term, stem string) {
		if term == "" {
			return
		}
		terms, stems := []string{term, "the"}, []string{stem, "the"}
		want := splitWordMatches(text, terms, stems, 50)
		got := wordMatches(text, terms, stems, 50, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("text %q, term %q stem %q:\n got %v\nwant %v", text, term, stem, got, want)
		}
	})
}

// TestHitUpperSize: the size a page counts for a hit far from its bound is never below
// the hit's encoding, whatever its strings hold.
func TestHitUpperSize(t *testing.T) {
	worst := strings.Repeat("\x01\"<\xff", 50)
	for _, h := range []SearchHit{
		{},
		{Path: "a.md", Name: "a.md", Words: math.MaxInt, Score: -math.MaxFloat64},
		{Path: worst, Name: worst, Title: worst, Snippet: worst, Words: math.MinInt, Score: math.SmallestNonzeroFloat64,
			Origin:  &Origin{Type: worst, ID: worst},
			Section: &HitSection{Heading: worst, Level: math.MinInt, Offset: math.MinInt}},
	} {
		enc, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if u := hitUpperSize(h); u < len(enc) {
			t.Errorf("upper size %d < %d, the encoding of %s", u, len(enc), enc)
		}
	}
}
