package projection_test

import (
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// TestScanFillsTheRecordsPages applies a scan of 20,000 documents in batches, in the
// order of their paths as the indexer walks them, and reads the catalog file: the pages of
// the records are at least three quarters full (before, each batch's split left half pages
// behind it: 43% at 100k documents), and those of the content, whose keys come at random,
// at least half.
func TestScanFillsTheRecordsPages(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
	f := new(fold)
	for b := range 20 {
		f = &fold{seq: f.seq} // a batch of its own
		for i := range 1000 {
			f.put(fmt.Sprintf("book/part-%02d/chapter-%04d.md", b, i), fmt.Sprintf("# Chapter %d.%d\n\nThe harbour at dawn, the %d ships.\n", b, i, f.seq))
		}
		testkit.NoErr(t, c.Apply(f.batch()), "apply")
	}
	testkit.NoErr(t, c.Close(), "close")

	db, err := bolt.Open(filepath.Join(dir, "catalog.db"), 0o444, &bolt.Options{ReadOnly: true})
	testkit.NoErr(t, err, "open the catalog's file")
	defer db.Close()
	fill := map[string]float64{}
	testkit.NoErr(t, db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if s := b.Stats(); s.LeafAlloc > 0 {
				fill[string(name)] = float64(s.LeafInuse) / float64(s.LeafAlloc)
			}
			return nil
		})
	}), "read the buckets")
	if fill["docs"] < 0.75 || fill["content"] < 0.5 {
		t.Fatalf("pages filled: records %.0f%%, content %.0f%%; want at least 75%% and 50%%", 100*fill["docs"], 100*fill["content"])
	}
}
