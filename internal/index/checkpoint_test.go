package index_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/segment"
	"github.com/guide/guide/internal/testkit"
)

// TestResumesFromCheckpoint: after a restart the index holds exactly the events up to its
// checkpoint, and a replay of events it already holds changes nothing; only the events
// after it are applied.
func TestResumesFromCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := &index.Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "open")
	testkit.NoErr(t, x.Reset(stateFor()), "reset")
	f := &feeder{x: x}
	for i := range 5 {
		f.batch(t, map[string]*string{fmt.Sprintf("doc%d.md", i): str(fmt.Sprintf("lantern number%d", i))})
	}
	testkit.NoErr(t, x.Close(), "close")

	x = openIndex(t, dir)
	c := x.Checkpoint()
	testkit.Equal(t, c, uint64(5), "checkpoint after a clean restart")
	sid, project := x.Identity()
	testkit.Equal(t, [2]string{sid, project}, [2]string{"s@1", "test"}, "identity")
	// Exactly the documents of the events up to the checkpoint: never the
	// checkpoint ahead of the data, nor data ahead of the checkpoint.
	testkit.Equal(t, len(paths(t, x, "lantern", "")), int(c), "documents at checkpoint")

	// The runner replays from the checkpoint; a replay from the start is skipped.
	f = &feeder{x: x}
	for i := range 5 {
		f.batch(t, map[string]*string{fmt.Sprintf("doc%d.md", i): str(fmt.Sprintf("replayed number%d", i))})
	}
	testkit.Equal(t, x.Checkpoint(), uint64(5), "checkpoint after replay")
	if got := paths(t, x, "replayed", ""); len(got) != 5-int(c) {
		t.Fatalf("replayed %v: want only the %d events after the checkpoint applied", got, 5-c)
	}
}

// TestMappingVersionRebuilds: an index written with another mapping version is deleted on
// open, so that the runner rebuilds it from the stream instead of misreading it.
func TestMappingVersionRebuilds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := openIndex(t, dir)
	(&feeder{x: x}).batch(t, map[string]*string{"a.md": str("lantern")})
	testkit.NoErr(t, x.Close(), "close")

	// The index's own runtime settings are kept in its metadata; this write must wait
	// for the disk, or Close drops it.
	b, err := bleve.OpenUsing(dir, map[string]any{"unsafe_batch": false})
	testkit.NoErr(t, err, "bleve open")
	testkit.NoErr(t, b.SetInternal([]byte("guide.mapping"), []byte("index/0")), "set old version")
	testkit.NoErr(t, b.Close(), "bleve close")

	x = &index.Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "reopen")
	defer x.Close()
	sid, _ := x.Identity()
	testkit.Equal(t, [2]any{x.Checkpoint(), sid}, [2]any{uint64(0), ""}, "checkpoint and identity after a mapping change")
	testkit.Equal(t, x.State().Documents, uint64(0), "documents")
}

// TestUnreadableIndexRebuilds: garbage where the index should be is replaced.
func TestUnreadableIndexRebuilds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	testkit.WriteFile(t, dir, "index_meta.json", "{not json")
	x := &index.Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "open")
	defer x.Close()
	testkit.Equal(t, x.Checkpoint(), uint64(0), "checkpoint")
}

// TestCrashLosesOnlyWholeBatches: batches return before they are on disk, so a crash
// (here: closing without waiting for the persister) may lose the last ones, but never
// a checkpoint without its documents nor documents without their checkpoint; the
// runner's replay from the checkpoint then ends where a run without the crash ends.
func TestCrashLosesOnlyWholeBatches(t *testing.T) {
	const n = 40
	for round := range 5 {
		dir := filepath.Join(t.TempDir(), "index")
		x := openIndex(t, dir)
		f := &feeder{x: x}
		for i := range n {
			f.batch(t, map[string]*string{fmt.Sprintf("doc%02d.md", i): str(fmt.Sprintf("lantern number%d", i))})
			if i == n*round/5 {
				time.Sleep(50 * time.Millisecond) // lets the persister write some batches: each round crashes at another point
			}
		}
		testkit.NoErr(t, x.Abandon(), "abandon")

		x = &index.Index{Dir: dir, Logger: testkit.Logger()}
		testkit.NoErr(t, x.Open(), "reopen")
		c := x.Checkpoint()
		if sid, _ := x.Identity(); sid == "" { // the crash came before the empty index was on disk
			testkit.Equal(t, c, uint64(0), "checkpoint of an index without identity")
			testkit.NoErr(t, x.Reset(stateFor()), "reset")
		}
		testkit.Equal(t, len(paths(t, x, "lantern", "")), int(c), fmt.Sprintf("round %d: documents at checkpoint", round))
		t.Logf("round %d: %d of %d batches survived the crash", round, c, n)

		// Replay everything, as the runner does: what the index has is skipped.
		f = &feeder{x: x}
		for i := range n {
			f.batch(t, map[string]*string{fmt.Sprintf("doc%02d.md", i): str(fmt.Sprintf("lantern number%d", i))})
		}
		testkit.Equal(t, x.Checkpoint(), uint64(n), "checkpoint after replay")
		testkit.Equal(t, len(paths(t, x, "lantern", "")), n, "documents after replay")
		testkit.NoErr(t, x.Close(), "close")

		// A clean close persists everything: nothing to replay.
		x = openIndex(t, dir)
		testkit.Equal(t, x.Checkpoint(), uint64(n), "checkpoint after a clean close")
		testkit.Equal(t, len(paths(t, x, "lantern", "")), n, "documents after a clean close")
		testkit.NoErr(t, x.Close(), "close")
	}
}

// TestCrashRightAfterCreate: an index killed before its empty first batch reached the
// disk opens as new and empty.
func TestCrashRightAfterCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := &index.Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "open")
	testkit.NoErr(t, x.Abandon(), "abandon")
	x = &index.Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "reopen")
	defer x.Close()
	testkit.Equal(t, [2]any{x.Checkpoint(), x.State().Documents}, [2]any{uint64(0), uint64(0)}, "checkpoint and documents")
}

// TestIndexOfAnotherSegmentFormatRebuilds: an index written in another segment format
// (testdata/index-zap17: one document, checkpoint 1, written by upstream zap's format 17)
// is not kept but rebuilt from the stream — even when its mapping version is the current
// one, so that the format alone decides — and so is one whose segments are of a format
// no build registers any more (guide's former zap fork, 1017 and 1018).
func TestIndexOfAnotherSegmentFormatRebuilds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version uint32 // the segments' recorded zap version
	}{{"upstream zap 17", 17}, {"zap fork 1017", 1017}, {"zap fork 1018", 1018}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testkit.CopyTree(t, "testdata/index-zap17")
			// Upstream's zap opens it: the current mapping version written into it.
			b, err := bleve.OpenUsing(dir, map[string]any{"unsafe_batch": false})
			testkit.NoErr(t, err, "bleve open")
			testkit.NoErr(t, b.SetInternal([]byte("guide.mapping"), []byte(index.MappingVersion)), "set mapping version")
			testkit.NoErr(t, b.Close(), "bleve close")
			if tc.version != 17 {
				recordSegmentVersion(t, dir, tc.version)
			}

			x := &index.Index{Dir: dir, Logger: testkit.Logger()}
			testkit.NoErr(t, x.Open(), "open")
			defer x.Close()
			sid, _ := x.Identity()
			testkit.Equal(t, [3]any{x.Checkpoint(), sid, x.State().Documents}, [3]any{uint64(0), "", uint64(0)},
				"checkpoint, identity and documents")
		})
	}
}

// TestIndexOfFormerGuideSegmentVersionRebuilds: an index whose segments scorch recorded
// as guide's format of the version before the current one (1: long postings records cut
// into chunks of 32 postings each, the number of chunks not written) is rebuilt from the
// stream, not misread: the build registers the current version alone.
func TestIndexOfFormerGuideSegmentVersionRebuilds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := openIndex(t, dir)
	(&feeder{x: x}).batch(t, map[string]*string{"a.md": str("lantern")})
	testkit.NoErr(t, x.Close(), "close")
	x = openIndex(t, dir)
	testkit.Equal(t, x.Checkpoint(), uint64(1), "checkpoint, reopened as written")
	testkit.NoErr(t, x.Close(), "close")
	recordSegmentVersion(t, dir, segment.Version-1)

	x = &index.Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "open")
	defer x.Close()
	sid, _ := x.Identity()
	testkit.Equal(t, [3]any{x.Checkpoint(), sid, x.State().Documents}, [3]any{uint64(0), "", uint64(0)},
		"checkpoint, identity and documents")
}

// recordSegmentVersion rewrites the segment version scorch recorded with every snapshot
// of the index in dir.
func recordSegmentVersion(t *testing.T, dir string, version uint32) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "store", "root.bolt"), 0o600, nil)
	testkit.NoErr(t, err, "bolt open")
	defer db.Close()
	n := 0
	err = db.Update(func(tx *bolt.Tx) error {
		snaps := tx.Bucket([]byte{'s'})
		if snaps == nil {
			return fmt.Errorf("no snapshots bucket")
		}
		return snaps.ForEachBucket(func(k []byte) error {
			meta := snaps.Bucket(k).Bucket([]byte{'m'})
			if meta == nil {
				return nil
			}
			n++
			return meta.Put([]byte("version"), binary.BigEndian.AppendUint32(nil, version))
		})
	})
	testkit.NoErr(t, err, "rewrite the segment version")
	if n == 0 {
		t.Fatal("no snapshot's segment version rewritten")
	}
}

// TestOpenAfterClose: a process that closes before its index finished opening (it opens in
// the background) must not leave it open, holding the directory's lock.
func TestOpenAfterClose(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := &index.Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Close(), "close before open")
	if err := x.Open(); err == nil {
		_ = x.Close()
		t.Fatal("open after close opened the index")
	}
	y := &index.Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, y.Open(), "open by the next process")
	testkit.NoErr(t, y.Close(), "close")
}
