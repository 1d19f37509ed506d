package text

import (
	"bytes"
	"strings"
)

// maxFieldBytes bounds the title, the front matter's description and tags, and the
// paragraphs a Markdown document is read for: each says what the document is about in a
// few words, whatever the document.
const maxFieldBytes = 2000

// Markdown is what a document's Markdown says about it beyond its words, read in one pass
// over its lines (ParseMarkdown). The catalog shows its title, outline and first
// paragraph; the index ranks its title, front matter, headings and lead above its body. A
// plain-text document has paragraphs and nothing else.
type Markdown struct {
	// Body is where the text after the front matter starts (0 without front matter).
	Body int
	// Title is the front matter's title, else the first heading that has some plain text
	// (PlainText) — a heading of badges or a logo is none — as written; one line of at
	// most maxFieldBytes. A search ranks its plain text.
	Title string
	// Meta is the front matter's description (or summary) and tags (or keywords), one a
	// line, at most maxFieldBytes.
	Meta string
	// Headings are the ATX headings outside front matter and fenced code, in order.
	Headings []Heading
	// Lead is the first paragraph of prose, as plain text, when more text follows it: the
	// opening that says what the document is, not the badges, logos or HTML above it; at
	// most maxFieldBytes. A document of one paragraph has none: it is no opening to rank
	// above the rest.
	Lead string
	// FirstParagraph is the first paragraph as written, HTML comments left out, its lines
	// joined by spaces; at most maxFieldBytes.
	FirstParagraph string
}

// Heading is an ATX heading ("## Text") of a document: its level (1 to 6), its text as
// written, and the byte offset where its line starts.
type Heading struct {
	Level int
	Text  string
	Start int
}

// Section is a part of a document that starts at a heading; Start is the byte offset of
// the heading's line. Text before the first heading is a section with Level 0.
type Section struct {
	Level   int
	Heading string
	Start   int
}

// ParseMarkdown is the one reader of a document's Markdown: in one pass over its lines it
// finds the front matter (frontMatter, its fields read as YAML), the ATX headings outside
// fenced code, the first paragraph and the first paragraph that is prose rather than
// badges, images or HTML.
func ParseMarkdown(b []byte) Markdown {
	var md Markdown
	if raw, body, ok := frontMatter(b); ok {
		md.Body = body
		if f, ok := parseFront(raw); ok {
			md.Title, md.Meta = f.titleText(), f.meta()
		}
	}
	var lead leadReader
	var first firstReader
	blocks(b, md.Body, func(l line) {
		lead.read(l)
		first.read(l)
		if l.level == 0 {
			return
		}
		md.Headings = append(md.Headings, Heading{Level: l.level, Text: l.heading, Start: l.start})
		if md.Title == "" && PlainText(l.heading) != "" {
			md.Title = clipBytes(l.heading, maxFieldBytes)
		}
	})
	md.Lead, md.FirstParagraph = lead.end(), first.end()
	return md
}

// Sections returns the sections of a document: one at each heading ParseMarkdown finds,
// and one of the text before the first heading, if any. A search names the best section
// of each hit from these; they are read without the front matter's fields, which a
// section does not need.
func Sections(b []byte) []Section {
	secs := []Section{{Start: 0}}
	body := 0
	if _, end, ok := frontMatter(b); ok {
		body = end
	}
	blocks(b, body, func(l line) {
		if l.level > 0 {
			secs = append(secs, Section{Level: l.level, Heading: l.heading, Start: l.start})
		}
	})
	if len(secs) > 1 && len(bytes.TrimSpace(b[body:secs[1].Start])) == 0 {
		secs = secs[1:] // the document opens with a heading: no untitled section before it
	}
	return secs
}

// line is one line of a document's body as blocks reads it.
type line struct {
	text  []byte // without its surrounding space; a slice of the document
	start int    // the byte offset where it starts
	// code is set for a line of fenced code, the fences included.
	code bool
	// level is a heading's level, 0 for any other line; heading its text.
	level   int
	heading string
}

// blocks calls fn with every line of b from body on, saying which lie in fenced code
// ("```" or "~~~" to a line that starts with the same three characters) and which are
// ATX headings. It reads b in place and makes a string of heading lines only, since a
// search runs it on every hit.
func blocks(b []byte, body int, fn func(line)) {
	var fence []byte
	lines(b, body, func(text []byte, start, _ int) bool {
		l := line{text: text, start: start}
		switch {
		case fence != nil:
			l.code = true
			if bytes.HasPrefix(text, fence) {
				fence = nil
			}
		case bytes.HasPrefix(text, []byte("```")) || bytes.HasPrefix(text, []byte("~~~")):
			l.code = true
			fence = text[:3]
		case len(text) > 0 && text[0] == '#':
			l.level, l.heading, _ = parseHeading(string(text))
		}
		fn(l)
		return true
	})
}

// leadReader finds the lead paragraph (Markdown.Lead) line by line: paragraphs end at a
// blank line, a heading or fenced code, and each is read up to maxFieldBytes for its
// plain text.
type leadReader struct {
	para []byte // the paragraph read so far, its lines joined by spaces
	lead string
	done bool // the lead is found
	more bool // text follows it
}

func (r *leadReader) read(l line) {
	switch {
	case r.done:
		r.more = r.more || len(l.text) > 0
	case l.code || l.level > 0 || len(l.text) == 0:
		r.flush()
	case len(r.para) < maxFieldBytes:
		r.para = append(append(r.para, l.text...), ' ')
	}
}

// flush ends a paragraph: the lead, if it is prose.
func (r *leadReader) flush() {
	if len(r.para) == 0 {
		return
	}
	if p := PlainText(string(r.para)); isProse(p) {
		r.lead, r.done = clipBytes(p, maxFieldBytes), true
	}
	r.para = r.para[:0]
}

func (r *leadReader) end() string {
	if !r.done {
		r.flush()
		return "" // the last paragraph, or none: nothing follows it
	}
	if !r.more {
		return ""
	}
	return r.lead
}

// firstReader finds the first paragraph (Markdown.FirstParagraph) line by line: its first
// run of lines that are not blank, headings, fenced code or HTML comments.
type firstReader struct {
	para    strings.Builder
	comment bool // inside an HTML comment
	done    bool
}

func (r *firstReader) read(l line) {
	if r.done {
		return
	}
	t := l.text
	switch {
	case r.comment:
		r.comment = !bytes.Contains(t, []byte("-->"))
		return
	case l.code:
	case bytes.HasPrefix(t, []byte("<!--")):
		r.comment = !bytes.Contains(t, []byte("-->"))
	case len(t) == 0 || l.level > 0:
	default:
		if r.para.Len() <= maxFieldBytes {
			if r.para.Len() > 0 {
				r.para.WriteByte(' ')
			}
			r.para.Write(t)
		}
		return
	}
	r.done = r.para.Len() > 0
}

func (r *firstReader) end() string { return clipBytes(r.para.String(), maxFieldBytes) }

// parseHeading reads an ATX heading line ("## Text"): its level and text.
func parseHeading(line string) (int, string, bool) {
	// A carriage return ends a line, as in CommonMark, even without a newline after it:
	// a heading's text is never more than a line.
	if i := strings.IndexByte(line, '\r'); i >= 0 {
		line = line[:i]
	}
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "#") {
		return 0, "", false
	}
	h := strings.TrimLeft(t, "#")
	lvl := len(t) - len(h)
	if lvl > 6 || h != "" && h[0] != ' ' && h[0] != '\t' {
		return 0, "", false
	}
	h = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
	if h == "" {
		return 0, "", false
	}
	return lvl, h, true
}

// lines calls fn with every line of b from byte off on — without its surrounding space,
// with the offsets where it starts and where it ends, before its newline — until fn
// returns false. It reads b in place: the line is a slice of it.
func lines(b []byte, off int, fn func(line []byte, start, end int) bool) {
	for off < len(b) {
		end := bytes.IndexByte(b[off:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += off
		}
		if !fn(bytes.TrimSpace(b[off:end]), off, end) {
			return
		}
		off = end + 1
	}
}
