package text

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFrontMatter bounds the YAML front matter read at the top of a document.
const MaxFrontMatter = 16 << 10

// FrontMatter is the one reader of YAML front matter: the lines between a "---" first line
// and the next "---" or "..." line, within MaxFrontMatter bytes. It returns them (without
// the delimiters) and where the body starts; ok is false when b opens with none.
func FrontMatter(b []byte) (yaml []byte, body int, ok bool) {
	if !bytes.HasPrefix(b, []byte("---\n")) && !bytes.HasPrefix(b, []byte("---\r\n")) {
		return nil, 0, false
	}
	first := bytes.IndexByte(b, '\n') + 1
	Lines(b, first, func(line []byte, start, end int) bool {
		if start-first >= MaxFrontMatter {
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
	raw, body, ok := FrontMatter(b)
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
