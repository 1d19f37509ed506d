// Package ignore decides which paths of a content tree are not documents: VCS folders,
// editors' temporary files, a repository's ignore rules (every .gitignore, git's exclude
// files), and the rules of a .guideignore file and --ignore flags, which follow the
// syntax of .gitignore.
package ignore

import (
	"bufio"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

// File is the name of the ignore file at the root of a content tree.
const File = ".guideignore"

// GitFile is the name of git's per-folder ignore file.
const GitFile = ".gitignore"

// Defaults are always in force: VCS folders, and the temporary and swap files editors
// write next to a file while saving it.
var Defaults = []string{
	".git/", ".hg/", ".svn/", ".bzr/", "_darcs/", ".jj/", ".fossil/",
	"*.swp", "*.swo", "*.swx", ".*.sw?", "*~", ".#*", "#*#", "4913",
	"*.tmp", ".goutputstream-*", "*___jb_tmp___", "*___jb_old___", "*.crdownload", ".~lock.*#",
}

// RuleFile reports whether rel (a slash path relative to the root) is a file of ignore
// rules: a .gitignore at any level, or the root's .guideignore. Such files are
// configuration, not documents, and a change to one changes what the documents are.
func RuleFile(rel string) bool {
	return rel == File || path.Base(rel) == GitFile
}

type rule struct {
	segs     []segment // pattern split on '/'; "**" is a segment of its own
	negate   bool
	dirOnly  bool
	anchored bool
	src      string // the line, for errors and String
}

// ruleSet is the compiled rules of one source, with the folder they are relative to.
type ruleSet struct {
	rules []rule
	depth int      // the rules are relative to a folder this many levels below the root
	above []string // or to a folder above the root: the root's path from there
}

// match applies the set to the path parts (relative to the root): whether the last rule
// that matches ignores it, and whether any matched.
func (s *ruleSet) match(parts []string, dir bool) (ignored, matched bool) {
	if len(s.above) > 0 {
		parts = append(slices.Clip(s.above), parts...)
	} else {
		parts = parts[s.depth:]
	}
	for i := len(s.rules) - 1; i >= 0; i-- {
		r := &s.rules[i]
		if r.dirOnly && !dir {
			continue
		}
		if matchSegs(r.segs, parts) {
			return !r.negate, true
		}
	}
	return false, false
}

// Matcher decides whether a path is left out. Rules are in precedence order: of all the
// rules that match a path, the last one decides. A Matcher made by Load also reads the
// .gitignore of each folder the first time it decides on a path in it.
type Matcher struct {
	low  []*ruleSet // before the per-folder files: defaults, git's exclude files
	high []*ruleSet // after them: .guideignore, --ignore

	// root is the tree whose folders' .gitignore files are read; "" for none.
	root string
	mu   sync.RWMutex
	dirs map[string]*ruleSet // folder (slash path, "" for the root) → its .gitignore; nil for none
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
		set, err := compileSource(s)
		if err != nil {
			return nil, err
		}
		m.low = append(m.low, set)
	}
	return m, nil
}

// Source is a named set of rule lines: a file's, or the --ignore flags.
type Source struct {
	Name  string
	Lines []string
	// Dir is the folder the rules are relative to, a slash path from the root ("" for the
	// root), as a .gitignore's rules are relative to its own folder.
	Dir string
	// Above, for rules of a folder above the root (a .gitignore higher up in the
	// repository, or git's exclude files when the root is a folder of a repository), is
	// the root's slash path from that folder.
	Above string
	// Lenient skips a line that is not a valid pattern, as git does, instead of failing.
	Lenient bool
}

// Parse splits the text of an ignore file into a Source.
func Parse(name, text string) Source {
	var lines []string
	text = strings.TrimPrefix(text, "\ufeff") // a byte order mark, as git skips it
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return Source{Name: name, Lines: lines}
}

func compileSource(s Source) (*ruleSet, error) {
	set := &ruleSet{}
	if s.Dir != "" {
		set.depth = strings.Count(s.Dir, "/") + 1
	}
	if s.Above != "" {
		set.above = strings.Split(s.Above, "/")
	}
	for i, line := range s.Lines {
		r, ok, err := compile(line)
		if err != nil {
			if s.Lenient {
				continue
			}
			return nil, &Error{Source: s.Name, Line: i + 1, Msg: err.Error()}
		}
		if ok {
			set.rules = append(set.rules, r)
		}
	}
	return set, nil
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
		if seg == "**" && len(r.segs) > 0 && r.segs[len(r.segs)-1].pat == "**" {
			continue // "**/**" is "**"
		}
		r.segs = append(r.segs, newSegment(seg))
	}
	if !r.anchored && (len(r.segs) == 0 || r.segs[0].pat != "**") {
		r.segs = append([]segment{newSegment("**")}, r.segs...)
	}
	return r, true, nil
}

// matchSegs reports whether the rule's segments match all of parts. A "**" is zero or more
// parts, except at the end, where it is one or more (everything inside, not the folder
// itself). It runs in time proportional to len(segs) × len(parts) whatever the rule: a
// line of many "**" must not try every way of placing them.
func matchSegs(segs []segment, parts []string) bool {
	ok, _ := matchSegsSteps(segs, parts)
	return ok
}

// matchSegsSteps is matchSegs, also counting the segments it matched against a part:
// the work done, which tests bound.
func matchSegsSteps(segs []segment, parts []string) (ok bool, steps int) {
	if len(segs) > 0 && segs[0].pat == "**" && !slices.ContainsFunc(segs[1:], isGlobstar) {
		// Without another "**", only one alignment can match: the last len(rest) parts.
		// (Every unanchored rule is "**/…": this is the common case.)
		rest := segs[1:]
		if len(rest) == 0 {
			return len(parts) > 0, 0
		}
		if len(parts) < len(rest) {
			return false, 0
		}
		return matchFixed(rest, parts[len(parts)-len(rest):])
	}
	if !slices.ContainsFunc(segs, isGlobstar) {
		if len(parts) != len(segs) {
			return false, 0
		}
		return matchFixed(segs, parts)
	}
	// next[j]: segs[i+1:] matches parts[j:]; cur[j]: segs[i:] does. Filled from the last
	// segment back, each row from the last part back.
	m := len(parts)
	next := make([]bool, m+1)
	cur := make([]bool, m+1)
	next[m] = true
	for i := len(segs) - 1; i >= 0; i-- {
		s := &segs[i]
		switch {
		case s.pat == "**" && i == len(segs)-1:
			for j := 0; j <= m; j++ {
				cur[j] = j < m
			}
		case s.pat == "**":
			cur[m] = next[m]
			for j := m - 1; j >= 0; j-- {
				cur[j] = next[j] || cur[j+1]
			}
		default:
			cur[m] = false
			for j := m - 1; j >= 0; j-- {
				cur[j] = false
				if next[j+1] {
					steps++
					cur[j] = s.match(parts[j])
				}
			}
		}
		cur, next = next, cur
	}
	return next[0], steps
}

// matchFixed matches segments without "**" to as many parts, one by one.
func matchFixed(segs []segment, parts []string) (ok bool, steps int) {
	for i := range segs {
		steps++
		if !segs[i].match(parts[i]) {
			return false, steps
		}
	}
	return true, steps
}

func isGlobstar(s segment) bool { return s.pat == "**" }

// segment is one segment of a pattern, compiled for the name it is matched against:
// every path of a tree meets every rule, so the common shapes skip path.Match.
type segment struct {
	pat   string
	stars []string // the pattern split on '*', when '*' is its only wildcard
	glob  bool     // it has other wildcards: path.Match decides
}

func newSegment(pat string) segment {
	switch {
	case strings.ContainsAny(pat, `?[\`):
		return segment{pat: pat, glob: true}
	case strings.Contains(pat, "*") && pat != "**":
		return segment{pat: pat, stars: strings.Split(pat, "*")}
	}
	return segment{pat: pat}
}

// match matches one name (no slash); a segment without wildcards is compared as it is.
func (s *segment) match(name string) bool {
	switch {
	case s.glob:
		ok, _ := path.Match(s.pat, name)
		return ok
	case s.stars != nil:
		// What the stars leave: a prefix, a suffix, and the pieces between, in order
		// (leftmost first is enough when '*' is the only wildcard).
		first, last := s.stars[0], s.stars[len(s.stars)-1]
		if len(name) < len(first)+len(last) || !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) {
			return false
		}
		mid := name[len(first) : len(name)-len(last)]
		for _, piece := range s.stars[1 : len(s.stars)-1] {
			i := strings.Index(mid, piece)
			if i < 0 {
				return false
			}
			mid = mid[i+len(piece):]
		}
		return true
	}
	return s.pat == name
}

// decide applies the rules to one path, itself, not its ancestors: the most precedent
// source with a matching rule decides.
func (m *Matcher) decide(rel string, parts []string, dir bool) bool {
	for i := len(m.high) - 1; i >= 0; i-- {
		if ignored, ok := m.high[i].match(parts, dir); ok {
			return ignored
		}
	}
	if m.root != "" {
		// The .gitignore of the deepest folder first: its rules override its parents'.
		end := len(rel)
		for k := len(parts) - 1; k >= 0; k-- {
			end = strings.LastIndexByte(rel[:end], '/')
			folder := ""
			if end > 0 {
				folder = rel[:end]
			}
			if set := m.folder(folder, k); set != nil {
				if ignored, ok := set.match(parts, dir); ok {
					return ignored
				}
			}
			if end < 0 {
				break
			}
		}
	}
	for i := len(m.low) - 1; i >= 0; i-- {
		if ignored, ok := m.low[i].match(parts, dir); ok {
			return ignored
		}
	}
	return false
}

// Ignored reports whether rel (a clean slash path relative to the root) is left out,
// because it or one of its folders is: as in git, a file in an ignored folder cannot be
// brought back by a negated rule.
func (m *Matcher) Ignored(rel string, dir bool) bool {
	if rel == "" || rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for i, end := 1, 0; i < len(parts); i++ {
		end += len(parts[i-1])
		if m.decide(rel[:end], parts[:i], true) {
			return true
		}
		end++ // the slash
	}
	return m.decide(rel, parts, dir)
}

// Self reports whether rel itself is left out, assuming its folders are not: for a walk
// that has already skipped ignored folders.
func (m *Matcher) Self(rel string, dir bool) bool {
	return m.decide(rel, strings.Split(rel, "/"), dir)
}
