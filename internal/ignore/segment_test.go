package ignore

import (
	"path"
	"strings"
	"testing"
)

// segmentCases are names matched against one segment of a pattern, with path.Match's
// answer: the compiled segment must give the same.
var segmentCases = []struct{ pat, name string }{
	{"*.swp", "a.swp"}, {"*.swp", ".swp"}, {"*.swp", "a.swpx"}, {"*~", "notes~"}, {"*~", "~"},
	{".#*", ".#lock"}, {".#*", "x.#"}, {"#*#", "#"}, {"#*#", "##"}, {"#*#", "#a#"},
	{".~lock.*#", ".~lock.doc#"}, {".~lock.*#", ".~lock.#"}, {".~lock.*#", ".~lock#"},
	{"a*b*c", "abc"}, {"a*b*c", "aXbYc"}, {"a*b*c", "acb"}, {"a*b*c", "abcbc"}, {"a*b*c", "ab"},
	{"*ab*ab*", "abab"}, {"*ab*ab*", "aab"}, {"a**b", "ab"}, {"a**b", "axxb"}, {"*", ""}, {"*", "x"},
	{"x", "x"}, {"x", "y"}, {"4913", "4913"}, {"*___jb_tmp___", "f___jb_tmp___"}, {"*aa", "a"},
	{"a?c", "abc"}, {"[ab]x", "bx"}, {"[^a]*", "b.md"}, {`\*`, "*"},
}

func TestSegmentMatchesPathMatch(t *testing.T) {
	for _, c := range segmentCases {
		want, _ := path.Match(c.pat, c.name)
		s := newSegment(c.pat)
		if got := s.match(c.name); got != want {
			t.Errorf("segment %q against %q: %v, path.Match says %v", c.pat, c.name, got, want)
		}
	}
}

// FuzzSegment compares a compiled segment with path.Match for any pattern path.Match
// accepts and any name a path segment can be.
func FuzzSegment(f *testing.F) {
	for _, c := range segmentCases {
		f.Add(c.pat, c.name)
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		if strings.Contains(pat, "/") || strings.Contains(name, "/") || pat == "**" {
			return
		}
		want, err := path.Match(pat, name)
		if err != nil {
			return // not a pattern compile accepts
		}
		s := newSegment(pat)
		if got := s.match(name); got != want {
			t.Fatalf("segment %q against %q: %v, path.Match says %v", pat, name, got, want)
		}
	})
}
