package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guide/guide/tools/report"
)

// tinyCorpus writes a few documents into a corpus of their own.
func tinyCorpus(t *testing.T) *report.Corpus {
	t.Helper()
	root := t.TempDir()
	c := &report.Corpus{Name: "tiny", Root: root}
	for rel, body := range map[string]string{
		"a.md":         "# Alpha\n\nThe first document.",
		"notes/b.md":   "Second document, in a folder. Größe und Maße.",
		"notes/d/e.md": strings.Repeat("words of a longer document ", 200),
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		c.Files = append(c.Files, rel)
		c.Bytes += int64(len(body))
	}
	return c
}

// TestFloorBaseline: the floor reads every file, writes postings, reports its peak
// memory, and leaves nothing behind.
func TestFloorBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds guide-floor")
	}
	c := tinyCorpus(t)
	dir := filepath.Join(t.TempDir(), "floor")
	r := floorBaseline(context.Background(), c, dir)
	if r.Err != "" {
		t.Fatalf("floor failed: %s", r.Err)
	}
	if r.Docs != len(c.Files) || r.Disk <= 0 || r.Peak <= 0 {
		t.Errorf("floor: %d documents, %d bytes of postings, peak %d; want %d documents, some bytes, some peak", r.Docs, r.Disk, r.Peak, len(c.Files))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the floor left its files at %s (stat: %v)", dir, err)
	}
}

// TestZoektNotOnThisMachine: without a checkout of zoekt the run says so, and the cold
// record keeps the reason for its table and targets.
func TestZoektNotOnThisMachine(t *testing.T) {
	z := buildZoekt(context.Background(), filepath.Join(t.TempDir(), "no-zoekt"), t.TempDir(), "")
	if !strings.HasPrefix(z.missing, "not on this machine") {
		t.Fatalf("missing = %q, want it to say zoekt is not on this machine", z.missing)
	}
	r := zoektBaseline(context.Background(), z, tinyCorpus(t), filepath.Join(t.TempDir(), "zoekt"))
	if r.Kind != report.RunZoekt || r.Err != z.missing {
		t.Errorf("run %+v: want kind %q and the reason", r, report.RunZoekt)
	}
}

// TestZoektBaseline builds zoekt from the checkout $ZOEKT_SRC names, indexes a tiny corpus
// and serves it: the time, the indexer's peak, the index's size and the webserver's RSS.
func TestZoektBaseline(t *testing.T) {
	src := os.Getenv("ZOEKT_SRC")
	if src == "" || testing.Short() {
		t.Skip("no $ZOEKT_SRC: zoekt is measured when its checkout is on the machine")
	}
	z := buildZoekt(context.Background(), src, t.TempDir(), "given")
	if z.missing != "" {
		t.Fatal(z.missing)
	}
	r := zoektBaseline(context.Background(), z, tinyCorpus(t), filepath.Join(t.TempDir(), "zoekt"))
	if r.Err != "" {
		t.Fatal(r.Err)
	}
	if r.Duration <= 0 || r.Peak <= 0 || r.Disk <= 0 || r.Settled <= 0 {
		t.Errorf("zoekt: %+v: want a time, a peak, an index and the webserver's RSS", r)
	}
}
