package query_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/glob"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// deepChain is a chain of 30 folders d01/…/d30 below the category folder d00, with one
// document at the bottom.
func deepChain() (files map[string]string, bottom string, folders int) {
	dir := "d00"
	for i := 1; i <= 30; i++ {
		dir += fmt.Sprintf("/d%02d", i)
	}
	bottom = dir + "/bottom.md"
	return map[string]string{bottom: "# Bottom\n\nThe end of the chain.\n"}, bottom, 31
}

// TestManyGlobstarsOverADeepTree: a pattern of many "**" over a deep chain of folders
// answers, and the work it does is bounded by its segments times the folders, not by the
// ways of placing each "**".
func TestManyGlobstarsOverADeepTree(t *testing.T) {
	files, bottom, folders := deepChain()
	cat := testkit.Catalog(t, files)
	ctx := testkit.Context(t)
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{strings.Repeat("**/", 11) + "nomatch", nil},
		{strings.Repeat("**/", 30) + "nomatch", nil},
		{strings.Repeat("**/d*/", 10) + "**/nomatch", nil},
		{strings.Repeat("**/*/", 10) + "**/*.txt", nil},
		{strings.Repeat("**/d*/", 10) + "**/bottom", []string{bottom}},
		{strings.Repeat("**/", 11) + "bottom.md", []string{bottom}},
	} {
		t.Run(c.pattern, func(t *testing.T) {
			err := cat.Read(func(s *projection.Snapshot) error {
				got, steps, err := query.MatchPattern(ctx, s, "d00", c.pattern)
				if err != nil {
					return err
				}
				testkit.Equal(t, got, c.want, "documents")
				t.Logf("%d steps", steps)
				if bound := query.PatternSegments(c.pattern) * (folders + 1); steps > bound {
					t.Errorf("%d steps; want at most %d (segments × (folders + documents))", steps, bound)
				}
				return nil
			})
			testkit.NoErr(t, err, "match")
			// The tool answers too, through the whole of Content.
			_, qerr := contentOf(t, cat, ctx, c.pattern)
			if want := query.ErrNoMatches; c.want == nil && (qerr == nil || qerr.Type != want) {
				t.Errorf("Content: %v; want %s", qerr, want)
			}
			if c.want != nil && qerr != nil {
				t.Errorf("Content: %v", qerr)
			}
		})
	}
}

func contentOf(t *testing.T, cat *projection.Catalog, ctx context.Context, pattern string) (*query.ContentResult, *query.Error) {
	t.Helper()
	var res *query.ContentResult
	var qerr *query.Error
	err := cat.Read(func(s *projection.Snapshot) error {
		res, qerr = query.Content(ctx, s, query.ContentRequest{Project: "test", Name: "d00",
			Kind: query.CategoryOnly, Pattern: pattern}, query.Limits{})
		return nil
	})
	testkit.NoErr(t, err, "read")
	return res, qerr
}

// TestContentStopsWhenItsCallEnds: a content call whose context has ended does no
// matching and answers with an error rather than documents.
func TestContentStopsWhenItsCallEnds(t *testing.T) {
	files, _, _ := deepChain()
	cat := testkit.Catalog(t, files)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	cancel()
	res, qerr := contentOf(t, cat, ctx, strings.Repeat("**/", 11)+"*.md")
	if qerr == nil || qerr.Type != query.ErrIO {
		t.Fatalf("Content with an ended context: %+v, %v; want an io_error", res, qerr)
	}
	err := cat.Read(func(s *projection.Snapshot) error {
		_, steps, err := query.MatchPattern(ctx, s, "d00", "**/*.md")
		if err == nil || steps != 1 {
			t.Errorf("MatchPattern with an ended context: %d steps, %v; want 1 step and the context's error", steps, err)
		}
		return nil
	})
	testkit.NoErr(t, err, "read")
}

// naiveMatch is the plain reading of a content pattern over one document's path below
// the category folder: each "**" segment any number of folders, a segment holding "**"
// the rest of the pattern over the rest of the path, a last segment without an extension
// any extension, a template also by its name less ".mustache". Exponential, but obviously
// right: the reference for small inputs.
func naiveMatch(t *testing.T, pattern, rel string) bool {
	var segs []string
	for _, s := range strings.Split(pattern, "/") {
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	extensionless := !strings.Contains(segs[len(segs)-1], ".")
	names := func(s string) []string {
		if strings.HasSuffix(s, projection.TemplateExt) {
			return []string{s, strings.TrimSuffix(s, projection.TemplateExt)}
		}
		return []string{s}
	}
	matches := func(pat, s string) bool {
		for _, p := range []string{pat, pat + ".*"} {
			m, err := glob.Compile(p)
			if err != nil {
				t.Fatalf("compile %q: %v", p, err)
			}
			if m.Match(s) {
				return true
			}
			if !extensionless {
				break
			}
		}
		return false
	}
	parts := strings.Split(rel, "/")
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		seg, last := segs[i], i == len(segs)-1
		switch {
		case strings.Trim(seg, "*") == "" && len(seg) >= 2:
			if last {
				return true
			}
			return rec(i+1, j) || (j < len(parts)-1 && rec(i, j+1))
		case strings.Contains(seg, "**"):
			return slices.ContainsFunc(names(strings.Join(parts[j:], "/")), func(s string) bool {
				return matches(strings.Join(segs[i:], "/"), s)
			})
		case last:
			return j == len(parts)-1 && slices.ContainsFunc(names(parts[j]), func(s string) bool {
				return matches(seg, s)
			})
		}
		m, err := glob.Compile(seg)
		if err != nil {
			t.Fatalf("compile %q: %v", seg, err)
		}
		return j < len(parts)-1 && m.Match(parts[j]) && rec(i+1, j+1)
	}
	return rec(0, 0)
}

var (
	refNames    = []string{"a", "b", "ab", "a.md", "b.txt", "t.md.mustache", "ab.md"}
	refSegments = []string{"**", "**", "*", "a", "a*", "*.md", "?", "[ab]*", "a**", "**.md", "t.md", "t", "ab"}
)

// checkPatternAgainstNaive draws a small tree and a pattern from r and compares what the
// walk selects with the reference, document by document.
func checkPatternAgainstNaive(t *testing.T, r *rand.Rand) {
	files := map[string]string{}
	for range 1 + r.IntN(12) {
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, refNames[r.IntN(3)]) // folders: a, b, ab
		}
		parts = append(parts, refNames[r.IntN(len(refNames))])
		files["c/"+strings.Join(parts, "/")] = "x"
	}
	// A path both a document and a folder cannot be: drop the documents that are folders.
	for p := range files {
		for q := range files {
			if strings.HasPrefix(q, p+"/") {
				delete(files, p)
			}
		}
	}
	var segs []string
	for range 1 + r.IntN(5) {
		segs = append(segs, refSegments[r.IntN(len(refSegments))])
	}
	pattern := strings.Join(segs, "/")
	cat := testkit.Catalog(t, files)
	err := cat.Read(func(s *projection.Snapshot) error {
		got, _, err := query.MatchPattern(context.Background(), s, "c", pattern)
		if err != nil {
			return err
		}
		slices.Sort(got)
		var want []string
		for p := range files {
			if naiveMatch(t, pattern, strings.TrimPrefix(p, "c/")) {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %q over %v:\n got %q\nwant %q (the reference)", pattern, files, got, want)
		}
		return nil
	})
	testkit.NoErr(t, err, "match")
}

// TestPatternAgreesWithNaive: on small trees and patterns the walk selects exactly what
// the naive reading of the pattern does.
func TestPatternAgreesWithNaive(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range n {
		checkPatternAgainstNaive(t, r)
	}
}

// FuzzPatternAgreesWithNaive explores more draws: go test -fuzz=FuzzPatternAgreesWithNaive.
func FuzzPatternAgreesWithNaive(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		checkPatternAgainstNaive(t, rand.New(rand.NewPCG(a, b)))
	})
}
