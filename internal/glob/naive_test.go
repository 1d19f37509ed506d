package glob

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveMatch is the plain backtracking reading of a pattern without classes or escapes:
// "**/" at the start of a segment is nothing or any run ending in '/', another "**" any
// run, '*' any run without '/', '?' one character but '/'. Exponential, but obviously
// right: the reference for small inputs.
func naiveMatch(p, s string, atStart bool) bool {
	if p == "" {
		return s == ""
	}
	if strings.HasPrefix(p, "**") {
		j := 2
		for j < len(p) && p[j] == '*' {
			j++
		}
		if atStart && j < len(p) && p[j] == '/' {
			rest := p[j+1:]
			if naiveMatch(rest, s, true) {
				return true
			}
			for i := 0; i < len(s); i++ {
				if s[i] == '/' && naiveMatch(rest, s[i+1:], true) {
					return true
				}
			}
			return false
		}
		for i := 0; i <= len(s); i++ {
			if naiveMatch(p[j:], s[i:], false) {
				return true
			}
		}
		return false
	}
	switch p[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if naiveMatch(p[1:], s[i:], false) {
				return true
			}
			if i < len(s) && s[i] == '/' {
				break
			}
		}
		return false
	case '?':
		return s != "" && s[0] != '/' && naiveMatch(p[1:], s[1:], false)
	}
	return s != "" && s[0] == p[0] && naiveMatch(p[1:], s[1:], p[0] == '/')
}

// TestMatchAgreesWithNaive: on small patterns of every wildcard, '**' included, and small
// paths, Match gives the reference's answer.
func TestMatchAgreesWithNaive(t *testing.T) {
	pieces := []string{"a", "b", "/", "*", "**", "?", "**/", "/**", "a*"}
	chars := []string{"a", "b", "/", "ab"}
	r := rand.New(rand.NewPCG(5, 6))
	for range 50000 {
		var p, s strings.Builder
		for range 1 + r.IntN(5) {
			p.WriteString(pieces[r.IntN(len(pieces))])
		}
		for range r.IntN(6) {
			s.WriteString(chars[r.IntN(len(chars))])
		}
		m, err := Compile(p.String())
		if err != nil {
			t.Fatalf("Compile(%q): %v", p.String(), err)
		}
		if got, want := m.Match(s.String()), naiveMatch(p.String(), s.String(), true); got != want {
			t.Fatalf("%q.Match(%q) = %v; the reference says %v", p.String(), s.String(), got, want)
		}
	}
}

// TestManyGlobstarsOverADeepPath: a pattern of many "**" against a deep path answers; Match
// is an automaton, so its work is the pattern's length times the path's.
func TestManyGlobstarsOverADeepPath(t *testing.T) {
	var deep []string
	for range 30 {
		deep = append(deep, "dir")
	}
	path := strings.Join(deep, "/") + "/bottom.md"
	for p, want := range map[string]bool{
		strings.Repeat("**/", 30) + "nomatch":  false,
		strings.Repeat("**/d*/", 12) + "**/x":  false,
		strings.Repeat("**/d*/", 12) + "**/b*": true,
		strings.Repeat("**", 40) + "nomatch":   false,
	} {
		m, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Match(path); got != want {
			t.Errorf("%q.Match = %v, want %v", p, got, want)
		}
	}
}
