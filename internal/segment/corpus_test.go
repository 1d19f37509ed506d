package segment

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
)

// The tests index documents shaped as guide's: the same fields, with and without
// positions, analyzers that give positions and no offsets (a word tokenizer, folded,
// stemmed for the short fields), keyword fields for the folders, an array of folders,
// BM25. (guide's own analysis is its index's; these stand in for it.)

const (
	testWordTokenizer = "segment_test_word"
	testWord          = "segment_test_word"
	testParts         = "segment_test_parts"
)

func init() {
	registry.RegisterTokenizer(testWordTokenizer, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return wordTokenizer{}, nil
	})
}

type wordTokenizer struct{}

func (wordTokenizer) Tokenize(b []byte) analysis.TokenStream {
	var out analysis.TokenStream
	start := -1
	for i, r := range string(b) + " " {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
		if word && start < 0 {
			start = i
		} else if !word && start >= 0 {
			out = append(out, &analysis.Token{Term: b[start:i], Position: len(out) + 1, Type: analysis.AlphaNumeric})
			start = -1
		}
	}
	return out
}

// testFields are the text fields: name, analyzer, positions.
var testFields = []struct {
	name, analyzer string
	positions      bool
}{
	{"name", testWord, true},
	{"path", testParts, false},
	{"title", testParts, true},
	{"meta", testParts, false},
	{"headings", testParts, false},
	{"lead", testParts, false},
	{"content", testWord, true},
	{"content_cjk", "cjk", true},
	{"folders", keyword.Name, false},
	{"dir", keyword.Name, false},
	{"session", keyword.Name, false},
	{"ext", keyword.Name, false},
}

func testMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := m.AddCustomAnalyzer(testWord, map[string]any{
		"type": custom.Name, "tokenizer": testWordTokenizer, "token_filters": []any{lowercase.Name},
	}); err != nil {
		return nil, err
	}
	if err := m.AddCustomAnalyzer(testParts, map[string]any{
		"type": custom.Name, "tokenizer": testWordTokenizer, "token_filters": []any{lowercase.Name, porter.Name},
	}); err != nil {
		return nil, err
	}
	m.ScoringModel = "bm25"
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	m.DefaultAnalyzer = testWord
	doc := bleve.NewDocumentStaticMapping()
	for _, f := range testFields {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer, fm.Store, fm.IncludeInAll, fm.DocValues, fm.IncludeTermVectors = f.analyzer, false, false, false, f.positions
		doc.AddFieldMappingsAt(f.name, fm)
	}
	m.DefaultMapping = doc
	return m, nil
}

// testDoc is a document of the mapping.
type testDoc struct {
	Name       string   `json:"name"`
	Path       string   `json:"path,omitempty"`
	Title      string   `json:"title,omitempty"`
	Meta       string   `json:"meta,omitempty"`
	Headings   string   `json:"headings,omitempty"`
	Lead       string   `json:"lead,omitempty"`
	Content    string   `json:"content,omitempty"`
	ContentCJK string   `json:"content_cjk,omitempty"`
	Folders    []string `json:"folders,omitempty"`
	Dir        string   `json:"dir,omitempty"`
	Session    string   `json:"session"`
	Ext        string   `json:"ext,omitempty"`
}

// vocabulary is words of several scripts, drawn with a Zipf law so that a few are in
// most documents (long postings lists, many chunks) and most in one or two.
type vocabulary struct {
	words []string
	rng   *rand.Rand
	zipf  *rand.Zipf
}

var (
	latin    = []rune("abcdefghijklmnopqrstuvwxyzäöüßéèñ")
	cyrillic = []rune("абвгдеёжзийклмнопрстуфхцчшщъыьэюя")
	greek    = []rune("αβγδεζηθικλμνξοπρστυφχψως")
	hangul   = []rune("가나다라마바사아자차카타파하한국어를")
	han      = []rune("中华人民共和国的一是不了在有我他这为之大来以个")
	suffixes = []string{"", "", "", "s", "ing", "ed", "er", "ly", "ation"}
)

func newVocabulary(seed uint64, n int) *vocabulary {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	v := &vocabulary{rng: rng}
	seen := map[string]bool{}
	for len(v.words) < n {
		alphabet := latin
		switch r := rng.IntN(20); {
		case r == 0:
			alphabet = cyrillic
		case r == 1:
			alphabet = greek
		case r == 2:
			alphabet = hangul
		case r == 3:
			alphabet = han
		}
		l := 2 + rng.IntN(7)
		var b strings.Builder
		for range l {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		w := b.String()
		if alphabet[0] == 'a' {
			w += suffixes[rng.IntN(len(suffixes))]
		}
		if !seen[w] {
			seen[w] = true
			v.words = append(v.words, w)
		}
	}
	v.zipf = rand.NewZipf(rng, 1.1, 2, uint64(n-1))
	return v
}

func (v *vocabulary) word() string {
	w := v.words[v.zipf.Uint64()]
	if v.rng.IntN(12) == 0 { // now and then capitalised, or written in camel case with another
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		w = string(r)
		if v.rng.IntN(2) == 0 {
			w += strings.ToUpper(v.words[v.zipf.Uint64()][:1]) + v.words[v.zipf.Uint64()]
		}
	}
	return w
}

func (v *vocabulary) text(lo, hi int) string {
	n := lo + v.rng.IntN(hi-lo+1)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString([]string{" ", " ", " ", ", ", ". ", "\n", "-", "_"}[v.rng.IntN(8)])
		}
		b.WriteString(v.word())
	}
	return b.String()
}

func (v *vocabulary) doc() (string, testDoc) {
	depth := v.rng.IntN(4)
	var folders []string
	dir := ""
	for range depth {
		dir = strings.TrimPrefix(dir+"/"+v.words[v.rng.IntN(40)], "/")
		folders = append(folders, dir)
	}
	name := v.text(1, 3)
	id := strings.TrimPrefix(dir+"/"+name+".md", "/")
	d := testDoc{
		Name: name, Path: strings.ReplaceAll(dir, "/", " "), Folders: folders, Dir: dir, Session: "-", Ext: "md",
	}
	if d.Dir == "" {
		d.Dir = "."
	}
	if v.rng.IntN(10) > 0 {
		d.Title = v.text(1, 6)
		d.Headings = v.text(0, 12)
		d.Lead = v.text(0, 30)
		d.Content = v.text(5, 400)
		if v.rng.IntN(5) == 0 {
			d.Meta = v.text(1, 8)
		}
		if strings.ContainsFunc(d.Content, func(r rune) bool { return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) }) {
			d.ContentCJK = d.Content
		}
	}
	return id, d
}

// docID names the i-th document of a test, so that ids are unique however the words fall.
func docID(i int, id string) string { return fmt.Sprintf("%05d/%s", i, id) }
