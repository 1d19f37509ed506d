package query

import (
	"context"
	"fmt"
	"strings"

	"github.com/guide/guide/internal/glob"
	"github.com/guide/guide/internal/projection"
)

// syntaxHelp is shown with every invalid_pattern error.
const syntaxHelp = "Pattern syntax: * matches within a name, ** across folders, ? one character, " +
	"[abc] or [a-z] one character of a set, \\ escapes; a pattern without an extension matches every " +
	"extension. Examples: \"*.md\", \"intro\", \"guides/*.md\", \"**/*.py\"."

// compiledPattern is a pattern split on '/', matched folder by folder over the catalog.
type compiledPattern struct {
	src  string
	segs []segment
}

type segment struct {
	m        *glob.Matcher
	alt      *glob.Matcher // for the last segment without an extension: m + ".*"
	globstar bool          // "**" alone: zero or more folders
	// rest is set on a segment holding "**" inside it: the pattern from here on is
	// matched against whole relative paths below the folder.
	rest, restAlt *glob.Matcher
}

func compilePattern(p string) (*compiledPattern, *Error) {
	bad := func(format string, args ...any) *Error {
		return Errorf(ErrInvalidPattern, "invalid pattern %q: %s. %s", p, fmt.Sprintf(format, args...), syntaxHelp)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return nil, bad("it contains a NUL byte")
	}
	if strings.HasPrefix(p, "/") || hasDrive(p) || strings.HasPrefix(p, "~") {
		return nil, bad("patterns are relative to the category's folder")
	}
	raw := strings.Split(p, "/")
	var parts []string
	for _, s := range raw {
		switch s {
		case "", ".":
			continue
		case "..":
			return nil, bad("'..' would leave the category's folder")
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return nil, bad("it is empty")
	}
	if _, err := glob.Compile(strings.Join(parts, "/")); err != nil {
		return nil, bad("%s", strings.TrimPrefix(err.Error(), glob.ErrSyntax.Error()+": "))
	}
	cp := &compiledPattern{src: p}
	var cerr error
	compile := func(s string) *glob.Matcher {
		m, err := glob.Compile(s)
		if err != nil && cerr == nil {
			cerr = err
		}
		return m
	}
	extensionless := !strings.Contains(parts[len(parts)-1], ".")
	for i, s := range parts {
		if strings.Trim(s, "*") == "" && len(s) >= 2 {
			if n := len(cp.segs); n > 0 && cp.segs[n-1].globstar {
				continue // "**/**" is "**"
			}
			cp.segs = append(cp.segs, segment{globstar: true})
			continue
		}
		if strings.Contains(s, "**") {
			rest := strings.Join(parts[i:], "/")
			seg := segment{rest: compile(rest)}
			if extensionless {
				seg.restAlt = compile(rest + ".*")
			}
			cp.segs = append(cp.segs, seg)
			break
		}
		seg := segment{m: compile(s)}
		if i == len(parts)-1 && extensionless {
			seg.alt = compile(s + ".*")
		}
		cp.segs = append(cp.segs, seg)
	}
	if cerr != nil {
		// '/' always separates folders: "a\\/b" escapes nothing across it.
		return nil, bad("%s", strings.TrimPrefix(cerr.Error(), glob.ErrSyntax.Error()+": "))
	}
	return cp, nil
}

// matchNames reports whether a document answers to m (or alt): by its name, or for a
// template by its basename too. rel is the document's path relative to where m applies.
func matchNames(m, alt *glob.Matcher, rel string, d *projection.Document) bool {
	try := func(s string) bool { return m.Match(s) || alt != nil && alt.Match(s) }
	if try(rel) {
		return true
	}
	return d.Template() && try(strings.TrimSuffix(rel, projection.TemplateExt))
}

// checkEvery is how many steps a walk takes between looks at its context.
const checkEvery = 256

// walker matches one pattern over a folder tree. Each (segment, folder) pair is visited
// at most once, so a walk costs at most the pattern's segments times the folders below,
// whatever the pattern: "**/**/…" or "**/a*/**/a*/…" over a deep chain of folders would
// otherwise reach the same pair along every way of placing the "**".
type walker struct {
	ctx   context.Context
	s     *projection.Snapshot
	cp    *compiledPattern
	emit  func(*projection.Document)
	seen  map[walkState]bool
	steps int   // pairs visited and documents matched: the work done
	err   error // the context's error once it ends
}

type walkState struct {
	seg    int
	folder *projection.Folder
}

// match emits the documents below f that match cp; it stops early with the context's
// error when ctx ends. steps is the work done.
func (cp *compiledPattern) match(ctx context.Context, s *projection.Snapshot, f *projection.Folder, emit func(*projection.Document)) (steps int, err error) {
	w := &walker{ctx: ctx, s: s, cp: cp, emit: emit, seen: map[walkState]bool{}}
	w.walk(f, 0)
	return w.steps, w.err
}

// step counts one unit of work and reports whether to go on. The context is looked at
// on the first step, so an ended call does no work at all, then every checkEvery.
func (w *walker) step() bool {
	w.steps++
	if w.err == nil && w.steps%checkEvery == 1 {
		w.err = w.ctx.Err()
	}
	return w.err == nil
}

// walk emits the documents below f that match the pattern from segment i on.
func (w *walker) walk(f *projection.Folder, i int) {
	k := walkState{i, f}
	if w.seen[k] || !w.step() {
		return
	}
	w.seen[k] = true
	cp, s := w.cp, w.s
	seg := &cp.segs[i]
	last := i == len(cp.segs)-1
	switch {
	case seg.globstar:
		if last {
			f.EachDoc(func(d *projection.Document) {
				if w.step() {
					w.emit(d)
				}
			})
			return
		}
		w.walk(f, i+1)
		for _, sub := range f.Folders() {
			w.walk(sub, i)
		}
	case seg.rest != nil:
		f.EachDoc(func(d *projection.Document) {
			if w.step() && matchNames(seg.rest, seg.restAlt, relTo(f.Path, d.Path), d) {
				w.emit(d)
			}
		})
	case last:
		if lit, ok := seg.m.Literal(); ok && seg.alt == nil {
			for _, name := range []string{lit, lit + projection.TemplateExt} {
				if d, ok := s.Document(joinPath(f.Path, name)); ok {
					w.emit(d)
				}
			}
			return
		}
		for _, d := range f.Docs() {
			if w.step() && matchNames(seg.m, seg.alt, d.Name(), d) {
				w.emit(d)
			}
		}
	default:
		if lit, ok := seg.m.Literal(); ok {
			if sub, ok := s.Folder(joinPath(f.Path, lit)); ok {
				w.walk(sub, i+1)
			}
			return
		}
		for _, sub := range f.Folders() {
			if seg.m.Match(sub.Name()) {
				w.walk(sub, i+1)
			}
		}
	}
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func relTo(dir, p string) string {
	if dir == "" {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}
