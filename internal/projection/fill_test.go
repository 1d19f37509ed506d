package projection_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestCatalogFileEndsAtItsLastPage applies batches until the catalog file is past 16 MB
// (where bbolt starts growing it by 16 MB at a time) and reads its size: the file ends at
// its last page (the high-water mark of its pages), with no room allocated past it. Before,
// a catalog of 20 MB of pages was a file of up to 36 MB.
func TestCatalogFileEndsAtItsLastPage(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
	testkit.NoErr(t, c.KeepHistory(3), "keep history")
	para := strings.Repeat("The harbour at dawn, the ships and their crews. ", 12)
	f := new(fold)
	for b := range 30 {
		f = &fold{seq: f.seq}
		for i := range 1000 {
			f.put(fmt.Sprintf("book/part-%02d/chapter-%04d.md", b, i), fmt.Sprintf("# Chapter %d.%d\n\n%s %d.\n", b, i, para, f.seq))
		}
		testkit.NoErr(t, c.Apply(f.batch()), "apply")
	}
	testkit.NoErr(t, c.Close(), "close")

	file := filepath.Join(dir, "catalog.db")
	fi, err := os.Stat(file)
	testkit.NoErr(t, err, "stat the catalog's file")
	db, err := bolt.Open(file, 0o444, &bolt.Options{ReadOnly: true})
	testkit.NoErr(t, err, "open the catalog's file")
	defer db.Close()
	var pages int64
	testkit.NoErr(t, db.View(func(tx *bolt.Tx) error { pages = tx.Size(); return nil }), "read the high-water mark")
	if pages < 16<<20 {
		t.Fatalf("the catalog's pages hold %d bytes, want past 16 MB for the test to mean anything", pages)
	}
	if fi.Size() > pages {
		t.Fatalf("the catalog file is %d bytes, its pages end at %d: %d bytes allocated past them", fi.Size(), pages, fi.Size()-pages)
	}
}
