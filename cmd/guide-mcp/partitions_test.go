package main

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// partitionedStream makes the stream with P partitions on the server at url, then fills
// it with the tree at root.
func partitionedStream(t *testing.T, url, root string, p int) {
	t.Helper()
	s := &events.Stream{Conn: testkit.NATSClient(t, url), Partitions: p}
	testkit.NoErr(t, s.Open(testkit.Context(t)), "stream")
	reconcileTree(t, url, root)
}

// TestPartitionedReplicaFoldsItsPartitions: a replica of one partition out of four keeps
// the record of every document (the same tree as a whole replica), and the search index
// and bodies of its partition's documents alone; a whole replica of the same stream
// writes no partitions file, its data directory as before partitions.
func TestPartitionedReplicaFoldsItsPartitions(t *testing.T) {
	ns := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	partitionedStream(t, ns.ClientURL(), root, 4)
	disk := testkit.Disk(t, root)
	mine := 0
	for p := range disk {
		if events.PartitionOf(events.DocKey{Path: p}, 4) == 1 {
			mine++
		}
	}
	if mine == 0 || mine == len(disk) {
		t.Fatalf("partition 1 holds %d of %d documents: the sample does not test partitions", mine, len(disk))
	}

	wholeDir, partDir := t.TempDir(), t.TempDir()
	whole := inProcess(t, "--nats", ns.ClientURL(), "--data", wholeDir, "--http", "127.0.0.1:0")
	part := inProcess(t, "--nats", ns.ClientURL(), "--data", partDir, "--http", "127.0.0.1:0", "--partitions", "1")
	cw, cp := httpClient(t, whole), httpClient(t, part)
	testkit.WaitCaughtUp(t, cw)
	testkit.WaitCaughtUp(t, cp)

	tree := map[string]any{"folder": "", "depth": 5}
	testkit.Equal(t, testkit.Text(t, testkit.Call(t, cp, "tree", tree)), testkit.Text(t, testkit.Call(t, cw, "tree", tree)), "tree")
	testkit.Equal(t, part.index.State().Documents, uint64(mine), "documents in the partition's index")
	testkit.Equal(t, whole.index.State().Documents, uint64(len(disk)), "documents in the whole index")
	testkit.NoErr(t, part.catalog.Read(func(s *projection.Snapshot) error {
		for _, p := range slices.Sorted(maps.Keys(disk)) {
			d, ok := s.Document(p)
			if !ok {
				t.Errorf("%s: no record", p)
				continue
			}
			if !d.Readable() {
				continue
			}
			_, err := s.Content(d)
			if in := events.PartitionOf(d.Key(), 4) == 1; in != (err == nil) || !in && !errors.Is(err, projection.ErrElsewhere) {
				t.Errorf("%s (partition 1: %v): content error %v", p, in, err)
			}
		}
		return nil
	}), "read")
	if _, err := os.Stat(filepath.Join(wholeDir, "query", partitionsFile)); !os.IsNotExist(err) {
		t.Errorf("a whole replica wrote a partitions file: %v", err)
	}
	set, ok := readPartitions(filepath.Join(partDir, "query", partitionsFile))
	if !ok || set.Count != 4 || !slices.Equal(set.Own, []int{1}) {
		t.Errorf("partitions file: %+v %v", set, ok)
	}
}
