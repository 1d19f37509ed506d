package text

import (
	"bytes"
	"strings"
)

// Bounds of what the Markdown fields hold: a field is ranked on a few words, whatever the
// document.
const (
	maxFieldBytes    = 2000 // title, description and tags, lead paragraph
	maxHeadingsBytes = 8000
)

// Markdown is what a document's Markdown says about it, beyond its words: the fields
// ranked above its body. A plain-text document has a lead paragraph and nothing else.
type Markdown struct {
	Title    string // front matter title, else the first heading
	Headings string // every heading, one a line
	Meta     string // front matter description (or summary) and tags (or keywords)
	Lead     string // the first paragraph of prose, when more text follows it
}

// Section is a part of a document that starts at a heading; Start is the byte offset of
// the heading's line. Text before the first heading is a section with Level 0.
type Section struct {
	Level   int
	Heading string
	Start   int
}

// ParseMarkdown derives a document's Markdown fields in one pass over its lines: front
// matter (YAML between "---" lines at the top), ATX headings outside fenced code, and the
// first paragraph that is prose rather than badges, images or HTML.
func ParseMarkdown(b []byte) Markdown {
	var md Markdown
	body := 0
	if fm, end, ok := frontMatter(b); ok {
		md.Title, md.Meta = fm.fields()
		body = end
	}
	var heads, para strings.Builder
	fence := ""
	leadDone, more := false, false
	flush := func() {
		if p := plainText(para.String()); !leadDone && isProse(p) {
			md.Lead = clipBytes(p, maxFieldBytes)
			leadDone = true
		}
		para.Reset()
	}
	Lines(b, body, func(l []byte, _, _ int) bool {
		line := string(l)
		if leadDone && line != "" {
			more = true
		}
		if fence != "" {
			if strings.HasPrefix(line, fence) {
				fence = ""
			}
			return true
		}
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			flush()
			fence = line[:3]
			return true
		}
		if _, text, ok := ParseHeading(line); ok {
			flush()
			text = plainText(text)
			if md.Title == "" {
				md.Title = clipBytes(text, maxFieldBytes)
			}
			if heads.Len()+len(text) < maxHeadingsBytes {
				heads.WriteString(text)
				heads.WriteByte('\n')
			}
			return true
		}
		if line == "" {
			flush()
			return true
		}
		if !leadDone && para.Len() < maxFieldBytes {
			para.WriteString(line)
			para.WriteByte(' ')
		}
		return true
	})
	flush()
	if !more {
		// The lead paragraph is the whole text: it is no opening to rank above the rest.
		md.Lead = ""
	}
	md.Headings = heads.String()
	return md
}

// Sections returns the sections of a document: one at each heading its outline lists
// (Headings: ATX headings outside fenced code and front matter, front matter
// being what lies between its delimiters, YAML or not), and one of the text before the
// first heading, if any. A search names the best section of each hit from these.
func Sections(b []byte) []Section {
	secs := []Section{{Start: 0}}
	Headings(b, func(lvl int, text string, start int) bool {
		secs = append(secs, Section{Level: lvl, Heading: text, Start: start})
		return true
	})
	body := 0
	if _, end, ok := FrontMatter(b); ok {
		body = end
	}
	if len(secs) > 1 && len(bytes.TrimSpace(b[body:secs[1].Start])) == 0 {
		secs = secs[1:] // the document opens with a heading: no untitled section before it
	}
	return secs
}

// maxHeadingScanLine is the longest line Headings reads past: like every line reader
// here, it stops at a longer one.
const maxHeadingScanLine = 1 << 20

// Headings calls fn with every ATX heading of b outside front matter and fenced code —
// its level, its text and the byte offset where its line starts — until fn returns false
// or a line is longer than maxHeadingScanLine. It is the one reader of a document's
// headings: its outline, and the sections a search names. It reads the bytes in place and
// makes a string of heading lines only, since a search runs it on every hit.
func Headings(b []byte, fn func(level int, text string, start int) bool) {
	off := 0
	if _, body, ok := FrontMatter(b); ok {
		off = body
	}
	var fence []byte
	Lines(b, off, func(line []byte, start, end int) bool {
		if end-start > maxHeadingScanLine {
			return false
		}
		switch {
		case fence != nil:
			if bytes.HasPrefix(line, fence) {
				fence = nil
			}
		case bytes.HasPrefix(line, []byte("```")) || bytes.HasPrefix(line, []byte("~~~")):
			fence = line[:3]
		case len(line) > 0 && line[0] == '#':
			if lvl, text, ok := ParseHeading(string(line)); ok && !fn(lvl, text, start) {
				return false
			}
		}
		return true
	})
}

// ParseHeading reads an ATX heading line ("## Text"): its level and text.
func ParseHeading(line string) (int, string, bool) {
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

// Lines calls fn with every line of b from byte off on — without its surrounding space,
// with the offsets where it starts and where it ends, before its newline — until fn
// returns false. It reads b in place: the line is a slice of it.
func Lines(b []byte, off int, fn func(line []byte, start, end int) bool) {
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
