package text

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxFrontMatter bounds the YAML front matter read at the top of a document.
const maxFrontMatter = 16 << 10

// frontMatter is the one reader of front matter: the lines between a "---" first line and
// the next "---" or "..." line, within maxFrontMatter bytes. It returns them (without the
// delimiters) and where the body starts; ok is false when b opens with none. What lies
// between the delimiters is front matter whether or not it is YAML: no reader shows it as
// the document's text, and only YAML gives it fields (a title, a description, tags).
func frontMatter(b []byte) (yaml []byte, body int, ok bool) {
	if !bytes.HasPrefix(b, []byte("---\n")) && !bytes.HasPrefix(b, []byte("---\r\n")) {
		return nil, 0, false
	}
	first := bytes.IndexByte(b, '\n') + 1
	lines(b, first, func(line []byte, start, end int) bool {
		if start-first >= maxFrontMatter {
			return false
		}
		if t := string(line); t == "---" || t == "..." {
			yaml, body, ok = b[first:start], min(end+1, len(b)), true
			return false
		}
		return true
	})
	return yaml, body, ok
}

// front is what a document's front matter says it is about: the text of its title,
// description (or summary) and tags (or keywords). A value is a YAML string — its text as
// the YAML means it: a folded or quoted title is its words — or a list of them; numbers
// and dates say nothing of what a document is about.
type front struct {
	title []string
	about []string // description, summary, tags and keywords, in that order
}

// frontFields are the fields of front matter that front holds.
type frontFields struct {
	Title       any `yaml:"title"`
	Description any `yaml:"description"`
	Summary     any `yaml:"summary"`
	Tags        any `yaml:"tags"`
	Keywords    any `yaml:"keywords"`
}

// parseFront reads the fields of front matter (frontMatter's yaml); ok is false when it
// is not a YAML mapping.
func parseFront(raw []byte) (f front, ok bool) {
	var ff frontFields
	if yaml.Unmarshal(raw, &ff) != nil {
		return front{}, false
	}
	f.title = yamlText(ff.Title)
	for _, v := range []any{ff.Description, ff.Summary, ff.Tags, ff.Keywords} {
		f.about = append(f.about, yamlText(v)...)
	}
	return f, true
}

// yamlText flattens a YAML string, or a list of them, to its strings.
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

// titleText is the front matter's title on one line, at most maxFieldBytes.
func (f front) titleText() string {
	return oneLine(clipBytes(strings.Join(f.title, " "), maxFieldBytes))
}

// meta is the front matter's description and tags, one a line, at most maxFieldBytes.
func (f front) meta() string {
	return clipBytes(strings.Join(f.about, "\n"), maxFieldBytes)
}
