package relevance

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
)

// Guide is a catalog and a full-text index holding one set's documents, searched as the
// MCP search tool searches them.
type Guide struct {
	cat *projection.Catalog
	idx *index.Index
}

// OpenGuide indexes docs in new projections under dir, deleting what dir held.
func OpenGuide(dir string, docs map[string]string) (*Guide, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := &Guide{cat: &projection.Catalog{Dir: filepath.Join(dir, "catalog"), Logger: quiet},
		idx: &index.Index{Dir: filepath.Join(dir, "index"), Logger: quiet}}
	if err := g.cat.Open(); err != nil {
		return nil, err
	}
	if err := g.idx.Open(); err != nil {
		_ = g.cat.Close()
		return nil, err
	}
	st := projection.State{StreamID: "relevance@1", Project: "relevance"}
	if err := g.idx.Reset(st); err != nil {
		g.Close()
		return nil, err
	}
	paths := make([]string, 0, len(docs))
	for p := range docs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var seq uint64
	for len(paths) > 0 {
		n := min(500, len(paths))
		var b events.Batch
		for _, p := range paths[:n] {
			seq++
			c := []byte(docs[p])
			b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: st.Project, Path: p,
				Size: int64(len(c)), Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c),
				Status: events.StatusOK, Content: c, Seq: seq})
		}
		paths = paths[n:]
		for _, x := range []interface{ Apply(events.Batch) error }{g.cat, g.idx} {
			if err := x.Apply(b); err != nil {
				g.Close()
				return nil, err
			}
		}
	}
	return g, nil
}

// Search runs one query as the search tool does, for the first Depth hits. A query the
// tool refuses (only common words) finds nothing.
func (g *Guide) Search(ctx context.Context, q string) ([]query.SearchHit, error) {
	res, qerr := query.Search(ctx, g.cat, g.idx, query.SearchArgs{Query: q, Limit: Depth}, query.Limits{})
	if qerr != nil {
		if qerr.Type == query.ErrInvalidArgument {
			return nil, nil
		}
		return nil, qerr
	}
	return res.Hits, nil
}

// Rank runs every query and returns the paths ranked for each.
func (g *Guide) Rank(ctx context.Context, qs []Query) ([][]string, []string, error) {
	ranked := make([][]string, len(qs))
	sections := make([]string, len(qs))
	for i, q := range qs {
		hits, err := g.Search(ctx, q.Text)
		if err != nil {
			return nil, nil, err
		}
		for _, h := range hits {
			ranked[i] = append(ranked[i], h.Path)
			if h.Path == q.Answer {
				sections[i] = hitSection(h)
			}
		}
	}
	return ranked, sections, nil
}

// Close releases the projections.
func (g *Guide) Close() {
	_ = g.idx.Close()
	_ = g.cat.Close()
}

// hitSection is the heading of the section a hit names, "" for none.
func hitSection(h query.SearchHit) string {
	if h.Section == nil {
		return ""
	}
	return h.Section.Heading
}
