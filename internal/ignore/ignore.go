// Package ignore decides which paths of a content tree are not documents: VCS folders,
// editors' temporary files, and the rules of a .guideignore file and --ignore flags,
// which follow the syntax of .gitignore.
package ignore

import (
	"bufio"
	"fmt"
	"path"
	"slices"
	"strings"
)

// File is the name of the ignore file at the root of a content tree.
const File = ".guideignore"

// Defaults are always in force: VCS folders, and the temporary and swap files editors
// write next to a file while saving it.
var Defaults = []string{
	".git/", ".hg/", ".svn/", ".bzr/", "_darcs/", ".jj/", ".fossil/",
	"*.swp", "*.swo", "*.swx", ".*.sw?", "*~", ".#*", "#*#", "4913",
	"*.tmp", ".goutputstream-*", "*___jb_tmp___", "*___jb_old___", "*.crdownload", ".~lock.*#",
}

type rule struct {
	segs     []string // pattern split on '/'; "**" is a segment of its own
	negate   bool
	dirOnly  bool
	anchored bool
	src      string // the line, for errors and String
}

// Matcher holds compiled rules; the last rule that matches a path decides.
type Matcher struct {
	rules []rule
}

// Error is a line that cannot be a rule.
type Error struct {
	Source string
	Line   int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Msg) }

// DefaultSource is the Defaults as a Source.
func DefaultSource() Source { return Source{Name: "built-in defaults", Lines: Defaults} }

// New compiles each set of lines in order (later ones override earlier ones).
func New(sources ...Source) (*Matcher, error) {
	m := &Matcher{}
	for _, s := range sources {
		if err := m.add(s); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Source is a named set of rule lines: a file's, or the --ignore flags.
type Source struct {
	Name  string
	Lines []string
}

// Parse splits the text of an ignore file into a Source.
func Parse(name, text string) Source {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return Source{Name: name, Lines: lines}
}

func (m *Matcher) add(s Source) error {
	for i, line := range s.Lines {
		r, ok, err := compile(line)
		if err != nil {
			return &Error{Source: s.Name, Line: i + 1, Msg: err.Error()}
		}
		if ok {
			m.rules = append(m.rules, r)
		}
	}
	return nil
}

func compile(line string) (rule, bool, error) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || strings.HasPrefix(line, "#") {
		return rule{}, false, nil
	}
	// Trailing spaces are ignored unless escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" {
		return rule{}, false, nil
	}
	r := rule{src: line}
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return rule{}, false, nil
	}
	if strings.HasPrefix(line, "/") {
		r.anchored = true
		line = strings.TrimLeft(line, "/")
	} else if strings.Contains(line, "/") {
		r.anchored = true // a slash in the middle anchors the pattern, as in git
	}
	for _, seg := range strings.Split(line, "/") {
		if seg == "" {
			continue
		}
		if seg != "**" {
			// fnmatch's negated class [!a] is Go's [^a]; escaped spaces are spaces.
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "[!", "[^"), `\ `, " ")
			if _, err := path.Match(seg, ""); err != nil {
				return rule{}, false, fmt.Errorf("bad pattern %q: %v", line, err)
			}
		}
		r.segs = append(r.segs, seg)
	}
	if !r.anchored {
		r.segs = append([]string{"**"}, r.segs...)
	}
	return r, true, nil
}

// matchSegs reports whether the rule's segments match all of parts.
func matchSegs(segs, parts []string) bool {
	for len(segs) > 0 {
		if segs[0] == "**" {
			rest := segs[1:]
			if len(rest) == 0 {
				return true // a trailing "**" matches everything inside
			}
			if !slices.Contains(rest, "**") {
				// Without another "**", only one alignment can match: the last len(rest)
				// parts. (Every unanchored rule is "**/…": this is the common case.)
				return len(parts) >= len(rest) && matchSegs(rest, parts[len(parts)-len(rest):])
			}
			for i := 0; i <= len(parts); i++ {
				if matchSegs(rest, parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 || !matchSeg(segs[0], parts[0]) {
			return false
		}
		segs, parts = segs[1:], parts[1:]
	}
	return len(parts) == 0
}

// matchSeg matches one segment; a segment without wildcards is compared as it is.
func matchSeg(pat, name string) bool {
	if !strings.ContainsAny(pat, `*?[\`) {
		return pat == name
	}
	ok, _ := path.Match(pat, name)
	return ok
}

// decide applies the rules to one path, itself, not its ancestors.
func (m *Matcher) decide(parts []string, dir bool) bool {
	ignored := false
	for i := range m.rules {
		r := &m.rules[i]
		if r.dirOnly && !dir {
			continue
		}
		if matchSegs(r.segs, parts) {
			ignored = !r.negate
		}
	}
	return ignored
}

// Ignored reports whether rel (a clean slash path relative to the root) is left out,
// because it or one of its folders is: as in git, a file in an ignored folder cannot be
// brought back by a negated rule.
func (m *Matcher) Ignored(rel string, dir bool) bool {
	if rel == "" || rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if m.decide(parts[:i], true) {
			return true
		}
	}
	return m.decide(parts, dir)
}

// Self reports whether rel itself is left out, assuming its folders are not: for a walk
// that has already skipped ignored folders.
func (m *Matcher) Self(rel string, dir bool) bool {
	return m.decide(strings.Split(rel, "/"), dir)
}
