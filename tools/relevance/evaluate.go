package relevance

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// fixtureQueries is the queries file of a set written as a fixture.
type fixtureQueries struct {
	Name    string  `json:"name"`
	About   string  `json:"about"`
	Queries []Query `json:"queries"`
}

// WriteFixture writes sets that share their documents under dir: the documents in
// dir/docs, each set's queries in dir/NAME.queries.json.
func WriteFixture(dir string, sets ...*Set) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, s := range sets {
		for p, c := range s.Docs {
			f := filepath.Join(dir, "docs", filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
				return err
			}
		}
		b, err := json.MarshalIndent(fixtureQueries{Name: s.Name, About: s.About, Queries: s.Queries}, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name+".queries.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ReadFixture reads the sets WriteFixture wrote, in the order of their names.
func ReadFixture(dir string) ([]*Set, error) {
	docs := map[string]string{}
	root := filepath.Join(dir, "docs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		c, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		docs[filepath.ToSlash(rel)] = string(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.queries.json"))
	if err != nil {
		return nil, err
	}
	var sets []*Set
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var fq fixtureQueries
		if err := json.Unmarshal(b, &fq); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		sets = append(sets, &Set{Name: fq.Name, About: fq.About, Queries: fq.Queries, Docs: docs})
	}
	return sets, nil
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
