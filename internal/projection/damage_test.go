package projection_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/testkit/damage"
)

// bigHistory is enough documents for a catalog.db of a few megabytes and a body file of
// about one.
func bigHistory() *fold {
	f := new(fold)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 3000 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\nThe lead of note %d.\n\n## Part\n", i, i)
		for range 20 + rng.IntN(60) {
			fmt.Fprintf(&b, "word%d ", rng.IntN(4000))
		}
		f.put(fmt.Sprintf("part-%d/note-%d.md", i%13, i), b.String())
	}
	return f.scan()
}

// agrees fails unless everything the catalog answers agrees with want: either it holds
// nothing (rebuilt, to be filled from the stream) or every document it holds is want's,
// with want's summary, and its content is want's or an error — never other bytes.
func agrees(t *testing.T, c *projection.Catalog, want dump) {
	t.Helper()
	n := 0
	err := c.Read(func(s *projection.Snapshot) error {
		n = s.Len()
		if n == 0 {
			return nil
		}
		if s.State().Seq != want.Seq {
			return fmt.Errorf("checkpoint %d, want %d", s.State().Seq, want.Seq)
		}
		if n != len(want.Docs) {
			return fmt.Errorf("%d documents, want %d", n, len(want.Docs))
		}
		for p, wd := range want.Docs {
			d, ok := s.Document(p)
			if !ok {
				return fmt.Errorf("%s missing", p)
			}
			if *d != wd {
				return fmt.Errorf("%s: record %+v, want %+v", p, *d, wd)
			}
			sum, err := s.Summary(d)
			if err == nil && fmt.Sprint(sum) != fmt.Sprint(want.Summaries[p]) {
				return fmt.Errorf("%s: summary %+v, want %+v", p, sum, want.Summaries[p])
			}
			b, err := s.Content(d)
			if err == nil && string(b) != want.Content[p] {
				return fmt.Errorf("%s: content %q, want %q", p, b, want.Content[p])
			}
		}
		return nil
	})
	testkit.NoErr(t, err, "a damaged catalog's answers")
}

// TestDamagedCatalogFiles damages each file of a catalog in every way, at rest, and opens
// it again: it opens without a panic or a fault, and answers nothing but the truth —
// whole, or empty and rebuilt from the stream (here, the history applied again), or, for
// a body it cannot read again without a stream, an error.
func TestDamagedCatalogFiles(t *testing.T) {
	h := bigHistory()
	base := t.TempDir()
	c := open(t, base)
	testkit.NoErr(t, c.Apply(h.batch()), "apply")
	want := snapshot(t, c)
	testkit.NoErr(t, c.Close(), "close")
	fi, err := os.Stat(filepath.Join(base, "catalog.db"))
	testkit.NoErr(t, err, "stat")
	t.Logf("catalog.db holds %d bytes", fi.Size())

	type cut struct {
		name string
		size int64 // bytes kept; -1: damage.File's own choice
	}
	files := []string{"catalog.db", "bodies.0"}
	for _, file := range files {
		for _, k := range damage.Kinds {
			cuts := []cut{{"", -1}}
			if k == damage.Truncate && file == "catalog.db" {
				// The sizes that panicked or faulted: the freelist, a mapped page past the end.
				cuts = []cut{{"4k", 4 << 10}, {"16k", 16 << 10}, {"500k", 500 << 10}, {"1m", 1 << 20}, {"", -1}}
			}
			for _, ct := range cuts {
				name := file + "/" + string(k) + ct.name
				t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					testkit.CopyDir(t, base, dir)
					path := filepath.Join(dir, file)
					if ct.size >= 0 {
						testkit.NoErr(t, os.Truncate(path, ct.size), "truncate")
					} else {
						testkit.NoErr(t, damage.File(path, k, rand.New(rand.NewPCG(uint64(len(name)), 7))), "damage")
					}
					c := open(t, dir)
					defer c.Close()
					agrees(t, c, want)
					if c.Checkpoint() == 0 {
						// Rebuilt: the stream's history applies, and all is there again.
						testkit.NoErr(t, c.Apply(h.batch()), "apply again")
						testkit.Equal(t, snapshot(t, c), want, "the catalog rebuilt")
					}
				})
			}
		}
	}
}

// TestCatalogDamagedWhileOpen damages catalog.db under an open catalog: reads fault or
// find pages that are not what bbolt expects. No read panics or answers other bytes; the
// catalog says it is damaged (Damaged, Identity), refuses batches, and starts a new file
// when reset.
func TestCatalogDamagedWhileOpen(t *testing.T) {
	for _, k := range []damage.Kind{damage.Truncate, damage.Scribble, damage.Zero} {
		t.Run(string(k), func(t *testing.T) {
			h := bigHistory()
			dir := t.TempDir()
			c := open(t, dir)
			defer c.Close()
			testkit.NoErr(t, c.Apply(h.batch()), "apply")
			want := snapshot(t, c)
			path := filepath.Join(dir, "catalog.db")
			if k == damage.Truncate {
				testkit.NoErr(t, os.Truncate(path, 64<<10), "truncate")
			} else {
				testkit.NoErr(t, damage.File(path, k, rand.New(rand.NewPCG(5, 6))), "damage")
			}
			c.Release() // pages are read again from the file
			agrees(t, c, want)
			select {
			case <-c.Damaged():
			default:
				t.Fatal("the damage went unnoticed")
			}
			if id, _ := c.Identity(); id != "" {
				t.Errorf("a damaged catalog says it was built from stream %q", id)
			}
			if err := c.Apply((&fold{seq: h.seq}).put("z.md", "z").batch()); !errors.Is(err, projection.ErrDamaged) {
				t.Errorf("a damaged catalog applied a batch: %v", err)
			}
			testkit.NoErr(t, c.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
			testkit.NoErr(t, c.Apply(h.batch()), "apply again")
			testkit.Equal(t, snapshot(t, c), want, "the catalog rebuilt")
			if len(c.Repairs()) == 0 {
				t.Error("no repair reported")
			}
		})
	}
}
