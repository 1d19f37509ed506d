// Package corpus generates trees of realistic Markdown documents for benchmarks: nested
// folders of uneven sizes, headings, paragraphs, lists and code, a small share of German,
// Russian, Chinese and Korean, a few Mustache templates, and sizes skewed as real notes
// are (most small, a few large). The same options always give the same tree.
package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Version changes whenever the generator's output for given options changes, so that a
// stored corpus made by an older generator is made again.
const Version = 2

// Size bounds of a document, in bytes.
const (
	MinSize    = 200
	MaxSize    = 50_000
	medianSize = 2_000
)

// Options say what to generate.
type Options struct {
	Docs int
	Seed uint64
}

// Stats describe a generated tree.
type Stats struct {
	Docs      int   `json:"docs"`
	Folders   int   `json:"folders"` // folders holding at least one document, the root included
	Templates int   `json:"templates"`
	Bytes     int64 `json:"bytes"`
	// LargestFolder is the most documents directly in one folder.
	LargestFolder int `json:"largest_folder"`
	MaxDepth      int `json:"max_depth"`
}

// File is one planned document.
type File struct {
	Path     string // slash-separated, relative to the root
	Size     int    // target size in bytes
	Lang     string // en, de, ru, zh, ko
	Template bool
	index    int
}

// Plan lays out the tree: which documents, where, in which language and of what size.
func Plan(o Options) []File {
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed_f01de5))
	folders := planFolders(rng, o.Docs)

	// Folder sizes follow a capped Pareto law: most folders hold tens of documents, a
	// few hold hundreds or more.
	cum := make([]float64, len(folders))
	total := 0.0
	for i := range folders {
		w := math.Min(1/math.Pow(1-rng.Float64(), 1/1.2), 80)
		if i == 0 {
			w = 0.3 // the root holds a few documents, as real trees do
		}
		total += w
		cum[i] = total
	}
	names := make(map[string]map[string]bool, len(folders))
	files := make([]File, o.Docs)
	for i := range files {
		fi, _ := slices.BinarySearch(cum, rng.Float64()*total)
		fi = min(fi, len(folders)-1)
		dir := folders[fi]
		f := File{index: i, Lang: pickLang(rng), Size: pickSize(rng)}
		f.Template = rng.IntN(40) == 0
		if names[dir] == nil {
			names[dir] = map[string]bool{}
		}
		name := fileName(rng, len(names[dir]) == 0)
		if f.Template {
			name += ".md.mustache"
		} else {
			name += ".md"
		}
		name = unique(names[dir], name)
		f.Path = path.Join(dir, name)
		files[i] = f
	}
	return files
}

// planFolders returns folder paths; the first is the root, "".
func planFolders(rng *rand.Rand, docs int) []string {
	n := max(3, docs/45)
	top := min(25, max(5, docs/4000+5))
	// Share of folders at each depth, 1 to 6.
	depthCum := []int{10, 40, 75, 92, 98, 100}
	byDepth := [][]string{{""}}
	all := []string{""}
	names := map[string]map[string]bool{}
	for len(all) < n+1 {
		d := 1
		if len(byDepth) > 1 && len(byDepth[1]) >= top {
			r := rng.IntN(100)
			d, _ = slices.BinarySearch(depthCum, r+1)
			d = max(d+1, 2)
		}
		for d-1 >= len(byDepth) || len(byDepth[d-1]) == 0 {
			d--
		}
		parents := byDepth[d-1]
		parent := parents[rng.IntN(len(parents))]
		if names[parent] == nil {
			names[parent] = map[string]bool{}
		}
		name := unique(names[parent], folderName(rng))
		p := path.Join(parent, name)
		for len(byDepth) <= d {
			byDepth = append(byDepth, nil)
		}
		byDepth[d] = append(byDepth[d], p)
		all = append(all, p)
	}
	return all
}

func folderName(rng *rand.Rand) string {
	w := folderWords[rng.IntN(len(folderWords))]
	switch r := rng.IntN(100); {
	case r < 25:
		return w + "-" + english[40+rng.IntN(len(english)-40)]
	case r < 30:
		return w + " " + english[40+rng.IntN(len(english)-40)]
	case r < 35:
		return capitalize(w)
	}
	return w
}

func fileName(rng *rand.Rand, first bool) string {
	if first && rng.IntN(3) == 0 {
		return []string{"README", "index", "overview"}[rng.IntN(3)]
	}
	if rng.IntN(50) == 0 {
		// A name in another script, as in real trees.
		ws := [][]string{german, russian, chinese, korean}[rng.IntN(4)]
		return ws[rng.IntN(len(ws))] + "-" + ws[rng.IntN(len(ws))]
	}
	n := 1 + rng.IntN(4)
	sep := "-"
	switch rng.IntN(10) {
	case 0:
		sep = " "
	case 1:
		sep = "_"
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strings.ReplaceAll(english[40+rng.IntN(len(english)-40)], "'", "")
	}
	name := strings.Join(parts, sep)
	if rng.IntN(8) == 0 {
		name = fmt.Sprintf("%02d-%s", rng.IntN(60), name)
	}
	return name
}

func unique(taken map[string]bool, name string) string {
	base, ext := name, ""
	if i := strings.IndexByte(name, '.'); i > 0 {
		base, ext = name[:i], name[i:]
	}
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d%s", base, i, ext)
	}
	taken[name] = true
	return name
}

func pickLang(rng *rand.Rand) string {
	switch r := rng.IntN(1000); {
	case r < 40:
		return "de"
	case r < 70:
		return "ru"
	case r < 85:
		return "zh"
	case r < 100:
		return "ko"
	}
	return "en"
}

// pickSize draws from a log-normal law (median 2 kB), clamped to the bounds.
func pickSize(rng *rand.Rand) int {
	s := medianSize * math.Exp(1.0*rng.NormFloat64())
	return int(math.Max(MinSize, math.Min(MaxSize, s)))
}

// Generate writes the tree under dir, which must be empty or absent.
func Generate(dir string, o Options) (Stats, error) {
	if o.Docs <= 0 {
		return Stats{}, errors.New("corpus: no documents asked for")
	}
	files := Plan(o)
	var st Stats
	dirs := map[string]int{}
	for _, f := range files {
		d := path.Dir(f.Path)
		dirs[d]++
		st.LargestFolder = max(st.LargestFolder, dirs[d])
		if d != "." {
			st.MaxDepth = max(st.MaxDepth, strings.Count(d, "/")+1)
		}
		if f.Template {
			st.Templates++
		}
	}
	st.Docs, st.Folders = len(files), len(dirs)
	if _, ok := dirs["."]; !ok {
		st.Folders++
	}
	for d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			return st, err
		}
	}
	var mu sync.Mutex
	var firstErr error
	work := make(chan File)
	var wg sync.WaitGroup
	for range max(2, runtime.NumCPU()) {
		wg.Go(func() {
			var buf bytes.Buffer
			for f := range work {
				buf.Reset()
				Content(&buf, o.Seed, f)
				err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f.Path)), buf.Bytes(), 0o644)
				mu.Lock()
				st.Bytes += int64(buf.Len())
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	return st, firstErr
}

// Content writes the document f of the corpus with seed to buf.
func Content(buf *bytes.Buffer, seed uint64, f File) {
	rng := rand.New(rand.NewPCG(seed, uint64(f.index)*0x9e3779b97f4a7c15+1))
	g := &writer{rng: rng, buf: buf, lang: f.Lang, words: wordsOf(f.Lang)}
	title := g.phrase(2, 6)
	if rng.IntN(5) == 0 {
		fmt.Fprintf(buf, "---\ntitle: %q\ntags: [%s, %s]\nowner: %s\n---\n\n", title,
			folderWords[rng.IntN(len(folderWords))], folderWords[rng.IntN(len(folderWords))], english[40+rng.IntN(len(english)-40)])
	}
	fmt.Fprintf(buf, "# %s\n\n", title)
	if f.Template {
		fmt.Fprintf(buf, "Hello {{name}}, this is the {{project}} %s.\n\n", g.phrase(1, 3))
	}
	for buf.Len() < f.Size {
		switch r := rng.IntN(100); {
		case r < 14:
			fmt.Fprintf(buf, "%s %s\n\n", strings.Repeat("#", 2+rng.IntN(2)), g.phrase(2, 7))
		case r < 58:
			g.paragraph()
		case r < 72:
			g.list(false)
		case r < 78:
			g.list(true)
		case r < 88:
			g.code()
		case r < 93:
			fmt.Fprintf(buf, "> %s\n\n", g.sentence())
		case r < 96:
			g.table()
		default:
			if f.Template {
				fmt.Fprintf(buf, "{{#%s}}\n- {{title}}: {{summary}}\n{{/%s}}\n\n", "items", "items")
			} else {
				fmt.Fprintf(buf, "See [%s](../%s.md) and `%s`.\n\n", g.phrase(1, 3),
					english[40+rng.IntN(len(english)-40)], english[40+rng.IntN(len(english)-40)])
			}
		}
	}
	if buf.Len() > MaxSize {
		b := buf.Bytes()[:MaxSize]
		if i := bytes.LastIndexByte(b, '\n'); i > 0 {
			b = b[:i+1]
		}
		buf.Truncate(len(b))
	}
}

func wordsOf(lang string) []string {
	switch lang {
	case "de":
		return german
	case "ru":
		return russian
	case "zh":
		return chinese
	case "ko":
		return korean
	}
	return english
}

type writer struct {
	rng   *rand.Rand
	buf   *bytes.Buffer
	lang  string
	words []string
}

func (g *writer) word() string {
	// An English document now and then quotes a word of another language.
	if g.lang == "en" && g.rng.IntN(400) == 0 {
		ws := [][]string{german, russian, chinese, korean}[g.rng.IntN(4)]
		return ws[g.rng.IntN(len(ws))]
	}
	// Zipf-like: the first words of a list (the common ones) come up far more often.
	n := len(g.words)
	i := int(float64(n) * math.Pow(g.rng.Float64(), 2.2))
	return g.words[min(i, n-1)]
}

func (g *writer) phrase(lo, hi int) string {
	n := lo + g.rng.IntN(hi-lo+1)
	var b strings.Builder
	for i := range n {
		if i > 0 && g.lang != "zh" {
			b.WriteByte(' ')
		}
		b.WriteString(g.word())
	}
	return capitalize(b.String())
}

func (g *writer) sentence() string {
	s := g.phrase(5, 18)
	if g.lang == "zh" {
		return s + "。"
	}
	if g.rng.IntN(6) == 0 {
		s += ", " + strings.ToLower(g.phrase(2, 6))
	}
	return s + "."
}

func (g *writer) paragraph() {
	n := 2 + g.rng.IntN(5)
	for i := range n {
		if i > 0 && g.lang != "zh" {
			g.buf.WriteByte(' ')
		}
		g.buf.WriteString(g.sentence())
	}
	g.buf.WriteString("\n\n")
}

func (g *writer) list(numbered bool) {
	n := 2 + g.rng.IntN(6)
	for i := range n {
		if numbered {
			fmt.Fprintf(g.buf, "%d. %s\n", i+1, g.phrase(3, 10))
		} else {
			fmt.Fprintf(g.buf, "- %s\n", g.phrase(2, 10))
			if g.rng.IntN(5) == 0 {
				fmt.Fprintf(g.buf, "  - %s\n", g.phrase(2, 6))
			}
		}
	}
	g.buf.WriteByte('\n')
}

func (g *writer) ident() string {
	w := english[40+g.rng.IntN(len(english)-40)]
	w = strings.NewReplacer("-", "", "'", "").Replace(w)
	if g.rng.IntN(2) == 0 {
		return capitalize(w)
	}
	return w
}

func (g *writer) code() {
	lang := codeLangs[g.rng.IntN(len(codeLangs))]
	snips := codeSnippets[lang]
	s := snips[g.rng.IntN(len(snips))]
	args := make([]any, strings.Count(s, "%s"))
	for i := range args {
		args[i] = g.ident()
	}
	fmt.Fprintf(g.buf, "```%s\n%s\n```\n\n", lang, fmt.Sprintf(s, args...))
}

func (g *writer) table() {
	cols := 2 + g.rng.IntN(3)
	row := func(cell func() string) {
		g.buf.WriteByte('|')
		for range cols {
			fmt.Fprintf(g.buf, " %s |", cell())
		}
		g.buf.WriteByte('\n')
	}
	row(func() string { return g.phrase(1, 2) })
	row(func() string { return "---" })
	for range 2 + g.rng.IntN(5) {
		row(func() string {
			if g.rng.IntN(3) == 0 {
				return fmt.Sprint(g.rng.IntN(10000))
			}
			return g.phrase(1, 3)
		})
	}
	g.buf.WriteByte('\n')
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
