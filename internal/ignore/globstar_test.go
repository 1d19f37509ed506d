package ignore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// chain is a path of n folders d01/d02/…, then a file.
func chain(n int) []string {
	var parts []string
	for i := 1; i <= n; i++ {
		parts = append(parts, fmt.Sprintf("d%02d", i))
	}
	return append(parts, "bottom.md")
}

// TestManyGlobstarsStayLinear: a rule of many "**" over a deep path does work proportional
// to the rule's segments times the path's parts, not one try per way of placing them.
func TestManyGlobstarsStayLinear(t *testing.T) {
	parts := chain(30)
	for _, line := range []string{
		strings.Repeat("**/", 11) + "nomatch",
		strings.Repeat("**/d*/", 8) + "**/nomatch",
		strings.Repeat("**/*/", 10) + "**/*.txt",
		strings.Repeat("**/d*/", 8) + "**/bottom.md", // matches
	} {
		r, ok, err := compile(line)
		if !ok || err != nil {
			t.Fatalf("compile %q: %v", line, err)
		}
		got, steps := matchSegsSteps(r.segs, parts)
		t.Logf("%q: %d segment matches", line, steps)
		if want := strings.HasSuffix(line, "bottom.md"); got != want {
			t.Errorf("%q: matched %v, want %v", line, got, want)
		}
		if bound := len(r.segs) * len(parts); steps > bound {
			t.Errorf("%q: %d segment matches over %d parts; want at most %d", line, steps, len(parts), bound)
		}
	}
}

// TestGitignoreOfManyGlobstars: the same rule in a .gitignore answers for every folder of
// a deep tree, as the first scan asks it.
func TestGitignoreOfManyGlobstars(t *testing.T) {
	m, err := New(Source{Name: ".gitignore", Lines: []string{strings.Repeat("**/", 11) + "nomatch",
		strings.Repeat("**/d*/", 10) + "**/x"}})
	if err != nil {
		t.Fatal(err)
	}
	parts := chain(30)
	for i := 1; i <= len(parts); i++ {
		if m.Ignored(strings.Join(parts[:i], "/"), i < len(parts)) {
			t.Fatalf("%s ignored", strings.Join(parts[:i], "/"))
		}
	}
}

// naiveMatchSegs is the plain recursive reading of a rule: try every number of parts for
// each "**". Exponential, but obviously right: the reference for small inputs.
func naiveMatchSegs(segs []segment, parts []string) bool {
	if len(segs) == 0 {
		return len(parts) == 0
	}
	if segs[0].pat == "**" {
		if len(segs) == 1 {
			return len(parts) > 0
		}
		for i := 0; i <= len(parts); i++ {
			if naiveMatchSegs(segs[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	return len(parts) > 0 && segs[0].match(parts[0]) && naiveMatchSegs(segs[1:], parts[1:])
}

var refSegs = []string{"**", "**", "a", "b", "*", "a*", "?", "[ab]"}
var refParts = []string{"a", "b", "ab", "c", "aa"}

// checkAgainstNaive compares matchSegs with the reference on a rule and a path drawn from
// r, and on the rule with its repeated "**" kept.
func checkAgainstNaive(t *testing.T, r *rand.Rand) {
	var segs []segment
	for range r.IntN(6) {
		segs = append(segs, newSegment(refSegs[r.IntN(len(refSegs))]))
	}
	var parts []string
	for range r.IntN(6) {
		parts = append(parts, refParts[r.IntN(len(refParts))])
	}
	want := naiveMatchSegs(segs, parts)
	if got := matchSegs(segs, parts); got != want {
		t.Fatalf("rule %v over %v: %v, the reference says %v", pats(segs), parts, got, want)
	}
	line := strings.Join(pats(segs), "/")
	if line == "" || strings.HasPrefix(line, "/") {
		return
	}
	if !strings.Contains(line, "/") {
		line = "/" + line // anchored, as the segments are
	}
	rule, ok, err := compile(line)
	if !ok || err != nil {
		return
	}
	if got := matchSegs(rule.segs, parts); got != want {
		t.Fatalf("compiled %q over %v: %v, the reference says %v", line, parts, got, want)
	}
}

func pats(segs []segment) []string {
	var out []string
	for _, s := range segs {
		out = append(out, s.pat)
	}
	return out
}

// TestMatchSegsAgreesWithNaive: the linear matcher gives the reference's answer on every
// small rule and path drawn.
func TestMatchSegsAgreesWithNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkAgainstNaive(t, r)
	}
}

// FuzzMatchSegsAgreesWithNaive explores more draws: go test -fuzz=FuzzMatchSegsAgreesWithNaive.
func FuzzMatchSegsAgreesWithNaive(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		r := rand.New(rand.NewPCG(a, b))
		for range 100 {
			checkAgainstNaive(t, r)
		}
	})
}
