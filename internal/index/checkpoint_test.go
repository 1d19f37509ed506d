package index_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/guide/guide/internal/index"
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

	b, err := bleve.Open(dir)
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
