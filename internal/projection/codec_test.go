package projection_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// TestRecordsHoldNeitherTheirKeyNorHexHashes applies documents, a session's too, with the
// change log kept, and reads the catalog file: no record repeats its path (its key), and
// neither a record nor a change log entry holds a content hash as its 64 hex digits (they
// hold its 32 bytes). Before, a record of 100k was a third path and hash. Reopened, the
// catalog reads the same documents and summaries back; a record moved under another key
// is refused as damaged (its checksum covers the key), and the catalog rebuilt.
func TestRecordsHoldNeitherTheirKeyNorHexHashes(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
	testkit.NoErr(t, c.KeepHistory(3), "keep history")
	f := new(fold)
	for i := range 200 {
		f.put(fmt.Sprintf("notes/topic-%03d.md", i), fmt.Sprintf("# Topic %d\n\n## Part\n\nThe harbour at dawn, %d ships.\n", i, i))
	}
	f.put("notes/topic-007.md", "# Topic 7 again\n\nChanged.\n")
	f.attach("tok", "attached.md", "# Attached\n\nA session's document.\n")
	f.del("notes/topic-009.md")
	testkit.NoErr(t, c.Apply(f.batch()), "apply")
	want := snapshot(t, c)
	testkit.NoErr(t, c.Close(), "close")

	file := filepath.Join(dir, "catalog.db")
	db, err := bolt.Open(file, 0o644, nil)
	testkit.NoErr(t, err, "open the catalog's file")
	var records, blocks int
	testkit.NoErr(t, db.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("docs")).ForEach(func(k, v []byte) error {
			records++
			key, err := events.ParseDocKey(string(k))
			if err != nil {
				return err
			}
			if bytes.Contains(v, []byte(key.Path)) {
				return fmt.Errorf("the record of %q repeats its path", k)
			}
			if bytes.Contains(v, []byte(want.Docs[key.Path].Hash)) && key.Session == "" {
				return fmt.Errorf("the record of %q holds its hash in hex", k)
			}
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket([]byte("log")).ForEach(func(k, v []byte) error {
			blocks++
			for _, d := range want.Docs {
				if bytes.Contains(v, []byte(d.Hash)) {
					return fmt.Errorf("the log entry %x holds the hash of %s in hex", k, d.Path)
				}
			}
			return nil
		})
	}), "read the records and the log")
	if records != 200 || blocks == 0 {
		t.Fatalf("%d records and %d blocks of log entries, want 200 and some", records, blocks)
	}
	testkit.NoErr(t, db.Close(), "close the file")

	c = open(t, dir)
	testkit.Equal(t, snapshot(t, c), want, "the catalog reopened")
	lh, from, ok := c.LogHorizon()
	if !ok {
		t.Fatal("no change log")
	}
	logged, _, _, err := c.LogWindow(testkit.Context(t), lh, "p", "", from, 1000)
	testkit.NoErr(t, err, "read the change log")
	testkit.Equal(t, len(logged), 202, "events in the change log")
	testkit.NoErr(t, c.Close(), "close")

	// One record's value under another document's key.
	db, err = bolt.Open(file, 0o644, nil)
	testkit.NoErr(t, err, "open the catalog's file")
	testkit.NoErr(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("docs"))
		return b.Put([]byte("notes/topic-001.md"), bytes.Clone(b.Get([]byte("notes/topic-002.md"))))
	}), "move a record")
	testkit.NoErr(t, db.Close(), "close the file")
	c = open(t, dir)
	defer c.Close()
	if c.Checkpoint() != 0 {
		t.Fatalf("a record under another key was read: checkpoint %d, want a catalog rebuilt (0)", c.Checkpoint())
	}
}
