package relevance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Evaluate scores guide on a set in projections under dir, and FTS5 beside it when fts5
// is set. It returns the figures, and guide's ranked paths per query (for a report of the
// misses).
func Evaluate(ctx context.Context, s *Set, dir string, fts5 bool) (SetFigures, [][]string, error) {
	f := SetFigures{Name: s.Name, About: s.About, Docs: len(s.Docs), Queries: len(s.Queries)}
	g, err := OpenGuide(dir, s.Docs)
	if err != nil {
		return f, nil, fmt.Errorf("%s: index: %w", s.Name, err)
	}
	defer g.Close()
	ranked, sections, err := g.Rank(ctx, s.Queries)
	if err != nil {
		return f, nil, fmt.Errorf("%s: search: %w", s.Name, err)
	}
	f.Guide = Score(s.Queries, ranked)
	withSection, named := 0, 0
	for i, q := range s.Queries {
		if q.Section != "" {
			withSection++
			if sections[i] == q.Section {
				named++
			}
		}
	}
	if withSection > 0 {
		share := round(float64(named) / float64(withSection))
		f.Sections = &share
	}
	if fts5 {
		fr, err := FTS5(s)
		if err != nil {
			return f, nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		sc := Score(s.Queries, fr)
		f.FTS5 = &sc
	}
	return f, ranked, nil
}

// The fixture `make test` checks (TestKnownItem): the Go sets of FixtureMaxFunc function
// queries, every FixtureEvery-th package of them, rendered from the sources of the
// toolchain on the machine — no copy of that text is committed — with the figures
// committed by the toolchain's version (FixtureFile), for another version's sources
// render other pages.
const (
	FixtureEvery   = 5
	FixtureMaxFunc = 400
)

// FixtureFigures are the fixture's figures by the Go version whose sources rendered it.
type FixtureFigures map[string]Figures

// GoFixture renders the fixture from goroot's sources, its sets in the order of their
// names, and returns it with goroot's Go version (its VERSION file's first line).
func GoFixture(goroot string) (version string, sets []*Set, err error) {
	version, err = GoVersion(goroot)
	if err != nil {
		return "", nil, err
	}
	syn, fn, err := GoDoc(goroot, FixtureMaxFunc)
	if err != nil {
		return "", nil, err
	}
	return version, []*Set{fn.Subset(FixtureEvery), syn.Subset(FixtureEvery)}, nil
}

// GoVersion is the Go version of the toolchain in goroot, as its VERSION file names it.
func GoVersion(goroot string) (string, error) {
	b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return "", fmt.Errorf("go version of %s: %w", goroot, err)
	}
	v, _, _ := strings.Cut(string(b), "\n")
	if v = strings.TrimSpace(v); v == "" {
		return "", fmt.Errorf("go version of %s: empty VERSION file", goroot)
	}
	return v, nil
}

// Subset keeps every n-th document (by path) and the queries they answer, for a fixture
// small enough to commit. Sets built over the same documents keep the same ones.
func (s *Set) Subset(n int) *Set {
	paths := make([]string, 0, len(s.Docs))
	for p := range s.Docs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	keep := map[string]bool{}
	out := &Set{Name: s.Name, About: s.About, Docs: map[string]string{}}
	for i := 0; i < len(paths); i += n {
		keep[paths[i]] = true
		out.Docs[paths[i]] = s.Docs[paths[i]]
	}
	for _, q := range s.Queries {
		if keep[q.Answer] {
			out.Queries = append(out.Queries, q)
		}
	}
	return out
}
