// Package projection folds the event stream into the read models the queries use: the
// catalog (path → metadata and content, the folder tree, the basename/template view), and
// the runner that feeds every projection from the stream and records how far each got.
package projection

import (
	"bufio"
	"bytes"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/guide/guide/internal/events"
)

// TemplateExt marks a template: "doc.md.mustache" is a template whose basename is "doc.md".
const TemplateExt = ".mustache"

// Document is the catalog's record of one file of the tree.
type Document struct {
	Path   string        `json:"path"`
	Size   int64         `json:"size"`
	Mtime  time.Time     `json:"mtime"`
	Hash   string        `json:"hash,omitempty"`
	Status events.Status `json:"status"`
	Reason string        `json:"reason,omitempty"`
	Words  int           `json:"words"`
	Title  string        `json:"title,omitempty"`
	Seq    uint64        `json:"seq"` // the stream sequence of the event that wrote this record
}

// Name is the file name, the last element of the path.
func (d *Document) Name() string {
	// Paths in the catalog are clean, so the base is what follows the last slash; this is
	// the hot comparison of folder sorts, where path.Base's trimming costs a catch-up.
	if i := strings.LastIndexByte(d.Path, '/'); i >= 0 {
		return d.Path[i+1:]
	}
	return d.Path
}

// Dir is the folder holding the document ("" for the root).
func (d *Document) Dir() string { return parentOf(d.Path) }

// Template reports whether the document is a template.
func (d *Document) Template() bool { return strings.HasSuffix(d.Path, TemplateExt) }

// Basename is the name the document answers to: its name less any ".mustache".
func (d *Document) Basename() string { return strings.TrimSuffix(d.Name(), TemplateExt) }

// Readable reports whether the catalog holds the document's content.
func (d *Document) Readable() bool { return d.Status == events.StatusOK }

func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// CountWords counts words as a reader would: runs of letters and digits (with inner
// apostrophes and hyphens), and each Han, Hiragana or Katakana character as a word of its
// own, since those scripts do not separate words by spaces.
func CountWords(b []byte) int {
	n := 0
	in := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			n++
			in = false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if !in {
				n++
				in = true
			}
		case in && (r == '\'' || r == '’' || r == '-') && len(b) > 0:
			// Keep "don't" and "well-known" one word when a letter follows.
			next, _ := utf8.DecodeRune(b)
			in = unicode.IsLetter(next) || unicode.IsDigit(next)
		default:
			in = false
		}
	}
	return n
}

// Title finds a document's title: a "title:" in YAML front matter, else the first
// Markdown heading, else "".
func Title(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line := 0
	front := false
	for sc.Scan() && line < 200 {
		t := strings.TrimSpace(sc.Text())
		line++
		if line == 1 && t == "---" {
			front = true
			continue
		}
		if front {
			if t == "---" || t == "..." {
				front = false
				continue
			}
			if v, ok := strings.CutPrefix(t, "title:"); ok {
				return strings.Trim(strings.TrimSpace(v), `"'`)
			}
			continue
		}
		if strings.HasPrefix(t, "#") {
			h := strings.TrimLeft(t, "#")
			if len(t)-len(h) <= 6 && (h == "" || h[0] == ' ' || h[0] == '\t') {
				if h = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#")); h != "" {
					return h
				}
			}
		}
	}
	return ""
}
