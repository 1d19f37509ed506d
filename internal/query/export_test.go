package query

import (
	"context"

	"github.com/guide/guide/internal/projection"
)

// MatchPattern matches pattern below the folder dir of s as the content tools do, and
// returns the documents it selects (each once, in the order found) and the work done.
func MatchPattern(ctx context.Context, s *projection.Snapshot, dir, pattern string) (paths []string, steps int, err error) {
	cp, qerr := compilePattern(pattern)
	if qerr != nil {
		return nil, 0, qerr
	}
	f, ok := s.Folder(dir)
	if !ok {
		return nil, 0, nil
	}
	seen := map[string]bool{}
	steps, err = cp.match(ctx, s, f, func(d *projection.Document) {
		if !seen[d.Path] {
			seen[d.Path] = true
			paths = append(paths, d.Path)
		}
	})
	return paths, steps, err
}

// PatternSegments is how many segments pattern compiles to.
func PatternSegments(pattern string) int {
	cp, qerr := compilePattern(pattern)
	if qerr != nil {
		return 0
	}
	return len(cp.segs)
}

// ChangeJSONLen is the length changes counts for an entry, without writing it.
func ChangeJSONLen(c Change) int { return jsonLen(c) }
