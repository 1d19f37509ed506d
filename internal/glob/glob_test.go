package glob

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"*.md", "intro.md", true},
		{"*.md", "sub/intro.md", false},
		{"*.md", ".md", true},
		{"intro.md", "intro.md", true},
		{"intro.md", "intro.mdx", false},
		{"?ntro.md", "intro.md", true},
		{"?ntro.md", "/ntro.md", false},
		{"[abc].md", "b.md", true},
		{"[abc].md", "d.md", false},
		{"[a-c].md", "c.md", true},
		{"[!a-c].md", "c.md", false},
		{"[!a-c].md", "d.md", true},
		{"[]].md", "].md", true},
		{"**/*.py", "a.py", true},
		{"**/*.py", "x/a.py", true},
		{"**/*.py", "x/y/z/a.py", true},
		{"**/*.py", "x/y/z/a.pyc", false},
		{"**/*.py", "ax.py", true},
		{"**/x.py", "ax.py", false},
		{"**/x.py", "a/x.py", true},
		{"docs/**", "docs/a/b.md", true},
		{"docs/**", "docsa/b.md", false},
		{"docs/**/*.md", "docs/a.md", true},
		{"docs/**/*.md", "docs/a/b/c.md", true},
		{"**.md", "a/b/c.md", true},
		{"a**b", "a/x/b", true},
		{"*", "a/b", false},
		{"**", "a/b", true},
		{`\*.md`, "*.md", true},
		{`\*.md`, "a.md", false},
		{"é*.md", "éa.md", true},
		{"?.md", "é.md", true},
		{"a*b*c*d", "aXbYcZd", true},
		{"a*b*c*d", "aXbYcZ", false},
	}
	for _, c := range cases {
		m, err := Compile(c.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.pattern, err)
		}
		if got := m.Match(c.name); got != c.want {
			t.Errorf("%q.Match(%q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, p := range []string{"[abc", "abc]", `abc\`, "[z-a]", "a\x00b", "[a/b]", "\xff", strings.Repeat("a", MaxLen+1)} {
		if _, err := Compile(p); !errors.Is(err, ErrSyntax) {
			t.Errorf("Compile(%q) = %v, want ErrSyntax", p, err)
		}
	}
}

// FuzzPattern checks that any pattern compiles or fails cleanly, and that a pattern without
// '**' agrees with path.Match segment by segment. path.Match writes a negated class as
// "[^…]" only; ours also takes "[!…]", as gitignore does, so the oracle is given the "^" form.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"*.md", "**/*.py", "[abc]?", "a/b/*", `\*`, "[!x]", "x/**/y"} {
		f.Add(s, "a/b.md")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		m, err := Compile(pattern)
		if err != nil {
			return
		}
		got := m.Match(name)
		if strings.Contains(pattern, "**") || strings.Contains(pattern, "^") || strings.ContainsAny(pattern, "\\") {
			return
		}
		want, perr := matchSegments(pathMatchSyntax(pattern), name)
		if perr != nil {
			return
		}
		if got != want {
			t.Fatalf("%q.Match(%q) = %v, path.Match says %v", pattern, name, got, want)
		}
	})
}

// matchSegments is path.Match applied segment by segment: in a path pattern no wildcard,
// class included, matches a '/', whereas path.Match lets a class match one.
func matchSegments(pattern, name string) (bool, error) {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	match := len(ps) == len(ns)
	for i, p := range ps {
		n := ""
		if match {
			n = ns[i]
		}
		ok, err := path.Match(p, n)
		if err != nil {
			return false, err
		}
		match = match && ok
	}
	return match, nil
}

// pathMatchSyntax rewrites each class that opens with "[!" as "[^", the only negation that
// path.Match knows; patterns with escapes are not given to the oracle.
func pathMatchSyntax(pattern string) string {
	b := []byte(pattern)
	for i := 0; i < len(b); i++ {
		if b[i] != '[' {
			continue
		}
		i++
		if i < len(b) && (b[i] == '!' || b[i] == '^') {
			b[i] = '^'
			i++
		}
		// The class's first character is literal, even a ']'; the next ']' closes it.
		for i++; i < len(b) && b[i] != ']'; i++ {
		}
	}
	return string(b)
}
