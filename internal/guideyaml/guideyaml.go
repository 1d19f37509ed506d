// Package guideyaml is the vocabulary of a project's configuration, guide.yaml: categories
// (a folder and default patterns) and collections (named groups of categories). It parses
// and validates the file, and derives the default used when there is none.
package guideyaml

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/guide/guide/internal/glob"
)

// FileName is the configuration file looked for at the content root.
const FileName = "guide.yaml"

// MaxFileBytes bounds a configuration file. Its content travels in one event on the
// stream, and every answer about the categories reads it: a larger file is refused, as an
// invalid one is, and the documents are still indexed.
const MaxFileBytes = 1 << 20

// DefaultPattern is a category's pattern when it names none: every document below its folder.
const DefaultPattern = "**/*"

// AllCollection is the collection of every category in the default configuration.
const AllCollection = "all"

// Config is a project's configuration.
type Config struct {
	// Source is the file it came from, relative to the content root when inside it;
	// "" for the built-in default.
	Source      string                 `json:"source,omitempty"`
	Categories  map[string]*Category   `json:"categories"`
	Collections map[string]*Collection `json:"collections"`
}

// Category is a folder of the tree and the patterns that select its content.
type Category struct {
	Dir         string   `json:"dir"` // relative to the root, "" for the root itself
	Patterns    []string `json:"patterns"`
	Description string   `json:"description,omitempty"`
}

// Collection is a named group of categories.
type Collection struct {
	Categories  []string `json:"categories"`
	Description string   `json:"description,omitempty"`
}

// Error is a problem with a configuration file, at a line when known.
type Error struct {
	File    string
	Line    int
	Problem string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Problem)
	}
	return e.File + ": " + e.Problem
}

// TooLarge is the error for a configuration file of size bytes, over MaxFileBytes.
func TooLarge(file string, size int64) *Error {
	return &Error{File: file, Problem: fmt.Sprintf("the file is %d bytes; the limit is %d bytes (%d KiB)", size, MaxFileBytes, MaxFileBytes>>10)}
}

// IsDefault reports whether c is the built-in default rather than a file's.
func (c *Config) IsDefault() bool { return c.Source == "" }

// Names returns the category and collection names, each sorted.
func (c *Config) Names() (categories, collections []string) {
	for n := range c.Categories {
		categories = append(categories, n)
	}
	for n := range c.Collections {
		collections = append(collections, n)
	}
	slices.Sort(categories)
	slices.Sort(collections)
	return categories, collections
}

// Canonical is the configuration's canonical JSON: the body of a config event, and what
// its hash is taken over, so that reformatting the file publishes nothing.
func (c *Config) Canonical() []byte {
	b, err := json.Marshal(c) // map keys come out sorted
	if err != nil {
		panic("project: config does not encode: " + err.Error())
	}
	return b
}

// Hash is the hex SHA-256 of Canonical.
func (c *Config) Hash() string {
	sum := sha256.Sum256(c.Canonical())
	return hex.EncodeToString(sum[:])
}

// Decode reads a configuration from its canonical JSON.
func Decode(b []byte) (*Config, error) {
	c := &Config{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, err
	}
	if c.Categories == nil {
		c.Categories = map[string]*Category{}
	}
	if c.Collections == nil {
		c.Collections = map[string]*Collection{}
	}
	return c, nil
}

// Default is the configuration of a project without guide.yaml: each top-level folder
// (not hidden) is a category of the same name with every document below it, and the
// collection "all" holds every category.
func Default(topFolders []string) *Config {
	c := &Config{Categories: map[string]*Category{}, Collections: map[string]*Collection{}}
	all := &Collection{Description: "every category", Categories: []string{}}
	for _, f := range topFolders {
		if strings.HasPrefix(f, ".") || CheckName(f) != nil {
			continue
		}
		c.Categories[f] = &Category{Dir: f, Patterns: []string{DefaultPattern}}
		all.Categories = append(all.Categories, f)
	}
	slices.Sort(all.Categories)
	c.Collections[AllCollection] = all
	return c
}

// CheckName checks a category or collection name: it becomes a guide:// URI segment.
func CheckName(n string) error {
	switch {
	case n == "":
		return errors.New("empty name")
	case !utf8.ValidString(n):
		return errors.New("name is not valid UTF-8")
	case strings.ContainsAny(n, "/\\%?#"):
		return fmt.Errorf("name %q contains one of / \\ %% ? #", n)
	case strings.ContainsFunc(n, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }):
		return fmt.Errorf("name %q contains white space or a control character", n)
	case n == "." || n == ".." || n == "_status" || n == "category":
		return fmt.Errorf("name %q is reserved", n)
	}
	return nil
}

// Parse reads and validates guide.yaml. file names the file in errors and becomes Source.
// An empty file is a configuration without categories.
func Parse(file string, data []byte) (*Config, error) {
	if len(data) > MaxFileBytes {
		return nil, TooLarge(file, int64(len(data)))
	}
	c := &Config{Source: file, Categories: map[string]*Category{}, Collections: map[string]*Collection{}}
	fail := func(n *yaml.Node, format string, args ...any) error {
		e := &Error{File: file, Problem: fmt.Sprintf(format, args...)}
		if n != nil {
			e.Line = n.Line
		}
		return e
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // an empty file, or only comments
		}
		return nil, yamlError(file, err)
	}
	if len(doc.Content) == 0 {
		return c, nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return c, nil
	}
	if top.Kind != yaml.MappingNode {
		return nil, fail(top, "the file must be a mapping with the keys categories and collections")
	}
	var collNode *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "categories":
			if err := parseCategories(c, v, fail); err != nil {
				return nil, err
			}
		case "collections":
			collNode = v
		default:
			return nil, fail(k, "unknown key %q; the keys are categories and collections", k.Value)
		}
	}
	if collNode != nil {
		if err := parseCollections(c, collNode, fail); err != nil {
			return nil, err
		}
	}
	return c, nil
}

type failFunc func(n *yaml.Node, format string, args ...any) error

func mapping(n *yaml.Node, what string, fail failFunc) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fail(n, "%s must be a mapping", what)
	}
	return nil
}

func scalar(n *yaml.Node, what string, fail failFunc) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fail(n, "%s must be a string", what)
	}
	return n.Value, nil
}

// stringList accepts a string or a list of strings.
func stringList(n *yaml.Node, what string, fail failFunc) ([]*yaml.Node, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return []*yaml.Node{n}, nil
	case yaml.SequenceNode:
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode {
				return nil, fail(e, "each of %s must be a string", what)
			}
		}
		return n.Content, nil
	}
	return nil, fail(n, "%s must be a string or a list of strings", what)
}

func parseCategories(c *Config, n *yaml.Node, fail failFunc) error {
	if err := mapping(n, "categories", fail); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if err := CheckName(name); err != nil {
			return fail(k, "category: %v", err)
		}
		if _, dup := c.Categories[name]; dup {
			return fail(k, "category %q is defined twice", name)
		}
		cat := &Category{Dir: name}
		if err := mapping(v, "category "+name, fail); err != nil {
			return err
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			switch fk.Value {
			case "dir":
				d, err := scalar(fv, "dir", fail)
				if err != nil {
					return err
				}
				if cat.Dir, err = cleanDir(d); err != nil {
					return fail(fv, "category %q: dir %v", name, err)
				}
			case "patterns", "pattern":
				list, err := stringList(fv, "patterns", fail)
				if err != nil {
					return err
				}
				for _, p := range list {
					if _, err := glob.Compile(p.Value); err != nil {
						return fail(p, "category %q: pattern %q: %v", name, p.Value, err)
					}
					if p.Value == "" || strings.HasPrefix(p.Value, "/") || slices.Contains(strings.Split(p.Value, "/"), "..") {
						return fail(p, "category %q: pattern %q must be a relative pattern inside the category's dir", name, p.Value)
					}
					cat.Patterns = append(cat.Patterns, p.Value)
				}
			case "description":
				d, err := scalar(fv, "description", fail)
				if err != nil {
					return err
				}
				cat.Description = d
			default:
				return fail(fk, "category %q: unknown key %q; the keys are dir, patterns and description", name, fk.Value)
			}
		}
		if len(cat.Patterns) == 0 {
			cat.Patterns = []string{DefaultPattern}
		}
		c.Categories[name] = cat
	}
	return nil
}

func parseCollections(c *Config, n *yaml.Node, fail failFunc) error {
	if err := mapping(n, "collections", fail); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if err := CheckName(name); err != nil {
			return fail(k, "collection: %v", err)
		}
		if _, dup := c.Collections[name]; dup {
			return fail(k, "collection %q is defined twice", name)
		}
		col := &Collection{Categories: []string{}}
		if err := mapping(v, "collection "+name, fail); err != nil {
			return err
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			switch fk.Value {
			case "categories":
				list, err := stringList(fv, "categories", fail)
				if err != nil {
					return err
				}
				for _, e := range list {
					if _, ok := c.Categories[e.Value]; !ok {
						return fail(e, "collection %q: no category %q", name, e.Value)
					}
					if !slices.Contains(col.Categories, e.Value) {
						col.Categories = append(col.Categories, e.Value)
					}
				}
			case "description":
				d, err := scalar(fv, "description", fail)
				if err != nil {
					return err
				}
				col.Description = d
			default:
				return fail(fk, "collection %q: unknown key %q; the keys are categories and description", name, fk.Value)
			}
		}
		if len(col.Categories) == 0 {
			return fail(k, "collection %q has no categories", name)
		}
		c.Collections[name] = col
	}
	return nil
}

// cleanDir returns a category folder in the catalog's form: relative, slash-separated, "" for the root.
func cleanDir(d string) (string, error) {
	if strings.HasPrefix(d, "/") || strings.Contains(d, "\\") || strings.IndexByte(d, 0) >= 0 {
		return "", fmt.Errorf("%q must be a relative path with forward slashes", d)
	}
	if slices.Contains(strings.Split(d, "/"), "..") {
		return "", fmt.Errorf("%q leaves the content root", d)
	}
	d = path.Clean("/" + d)[1:]
	return d, nil
}

// yamlError turns a YAML library error ("yaml: line 3: ...") into file:line: problem.
func yamlError(file string, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	e := &Error{File: file, Problem: msg}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			var line int
			if _, err := fmt.Sscanf(rest[:i], "%d", &line); err == nil {
				e.Line, e.Problem = line, rest[i+2:]
			}
		}
	}
	return e
}
