package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guide/guide/tools/report"
)

// TestBleveBaselineIndexesEveryFile: the engine's baseline reads every file of the corpus
// (one that is not UTF-8 is indexed empty, as FTS5's script does), returns once the last
// document is on disk, and leaves no index behind.
func TestBleveBaselineIndexesEveryFile(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"a.md":         "# Alpha\n\nThe first document.",
		"notes/b.md":   "Second document, in a folder.",
		"notes/c.bin":  "\xff\xfe not text",
		"notes/d/e.md": strings.Repeat("words of a longer document ", 200),
	}
	c := &report.Corpus{Name: "tiny", Root: root}
	for rel, body := range files {
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
	dir := filepath.Join(t.TempDir(), "bleve")
	r := bleveBaseline(context.Background(), c, dir)
	if r.Err != "" {
		t.Fatalf("baseline failed: %s", r.Err)
	}
	if r.Docs != len(files) || r.Duration <= 0 {
		t.Errorf("indexed %d documents in %v, want %d in some time", r.Docs, r.Duration, len(files))
	}
	if !strings.Contains(r.Note, "MB on disk") {
		t.Errorf("note %q does not give the index's size", r.Note)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the baseline left its index at %s (stat: %v)", dir, err)
	}
}
