package index

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/text"

	"go.yaml.in/yaml/v3"
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
	projection.Lines(b, body, func(l []byte, _, _ int) bool {
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
		if _, text, ok := projection.ParseHeading(line); ok {
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
// (projection.Headings: ATX headings outside fenced code and front matter, front matter
// being what lies between its delimiters, YAML or not), and one of the text before the
// first heading, if any. A search names the best section of each hit from these.
func Sections(b []byte) []Section {
	secs := []Section{{Start: 0}}
	projection.Headings(b, func(lvl int, text string, start int) bool {
		secs = append(secs, Section{Level: lvl, Heading: text, Start: start})
		return true
	})
	body := 0
	if _, end, ok := projection.FrontMatter(b); ok {
		body = end
	}
	if len(secs) > 1 && len(bytes.TrimSpace(b[body:secs[1].Start])) == 0 {
		secs = secs[1:] // the document opens with a heading: no untitled section before it
	}
	return secs
}

// isProse reports a paragraph of at least three words (of its plain text): READMEs open
// with badges and logos, not with what they are.
func isProse(p string) bool {
	n := 0
	text.Words([]byte(p), func(text.Span) bool { n++; return n < 3 })
	return n >= 3
}

// plainText is the text a reader sees of a line of Markdown: HTML tags, images and
// badges left out, a link's text kept and its target left out. A title such as
// "YAML <a href=…><img src=…/></a>" ranks as "YAML", and a paragraph of badges has no
// words at all.
func plainText(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '<':
			// an HTML tag or comment: skip to its end
			j := strings.IndexByte(p[i:], '>')
			if j < 0 {
				i = len(p)
				break
			}
			i += j
			b.WriteByte(' ')
		case c == '!' && i+1 < len(p) && p[i+1] == '[':
			// an image, or a badge (an image inside a link): no text of the reader's
			i = skipLinkTail(p, closeBracket(p, i+1))
			b.WriteByte(' ')
		case c == ']':
			// the end of a link's text: skip its target, "(url)" or "[ref]"
			i = skipLinkTail(p, i)
			b.WriteByte(' ')
		case c == '[':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// closeBracket returns the index of the "]" that closes the "[" at i, counting nested
// brackets, or len(p)-1 when there is none.
func closeBracket(p string, i int) int {
	depth := 0
	for j := i; j < len(p); j++ {
		switch p[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(p) - 1
}

// skipLinkTail returns the index of the last byte of a link's target that follows the
// "]" at i: "(…)" or "[…]", or i when none follows.
func skipLinkTail(p string, i int) int {
	if i+1 >= len(p) {
		return i
	}
	var end byte
	switch p[i+1] {
	case '(':
		end = ')'
	case '[':
		end = ']'
	default:
		return i
	}
	if j := strings.IndexByte(p[i+2:], end); j >= 0 {
		return i + 2 + j
	}
	return i
}

// front is the front matter fields that rank.
type front struct {
	Title       any `yaml:"title"`
	Description any `yaml:"description"`
	Summary     any `yaml:"summary"`
	Tags        any `yaml:"tags"`
	Keywords    any `yaml:"keywords"`
}

// frontMatter parses YAML front matter at the top of b, and returns where the body starts.
// Front matter that is not YAML is the body's text, as it is to a reader.
func frontMatter(b []byte) (front, int, bool) {
	var f front
	raw, body, ok := projection.FrontMatter(b)
	if !ok || yaml.Unmarshal(raw, &f) != nil {
		return front{}, 0, false
	}
	return f, body, true
}

// fields returns the title and the description and tags, as text.
func (f front) fields() (title, meta string) {
	var parts []string
	for _, v := range []any{f.Description, f.Summary, f.Tags, f.Keywords} {
		parts = append(parts, yamlText(v)...)
	}
	t := yamlText(f.Title)
	return clipBytes(strings.Join(t, " "), maxFieldBytes), clipBytes(strings.Join(parts, "\n"), maxFieldBytes)
}

// yamlText flattens a YAML scalar or list to its strings.
func yamlText(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, yamlText(e)...)
		}
		return out
	case nil:
		return nil
	default:
		if s, ok := v.(interface{ String() string }); ok {
			return []string{s.String()}
		}
		return nil
	}
}

// clipBytes shortens s to at most n bytes on a character boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return strings.TrimSpace(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}
