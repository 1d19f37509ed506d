package main

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// records returns the catalog's records of paths, by path.
func records(t *testing.T, m *Main, paths []string) map[string]projection.Document {
	t.Helper()
	out := map[string]projection.Document{}
	testkit.NoErr(t, m.catalog.Read(func(s *projection.Snapshot) error {
		for _, p := range paths {
			if d, ok := s.Document(p); ok {
				out[p] = *d
			}
		}
		return nil
	}), "read the catalog")
	return out
}

// TestPartitionReplicaFoldsOtherRecordsFromHeaders: a replica of one partition of four
// reads the other partitions' events headers-only, yet holds the same record of every
// document as a whole replica (title, words, size, hash, status), those of an older
// publisher's events (no headers describing the record) included; get_summary of another
// partition's document answers the same outline and first paragraph, from its body
// fetched from that partition's replica.
func TestPartitionReplicaFoldsOtherRecordsFromHeaders(t *testing.T) {
	ns := testkit.NATSListening(t)
	url := ns.ClientURL()
	root := partitionedTree(t, url, 4)
	// An older publisher's events: whole, with no Guide-Words header.
	s := &events.Stream{Conn: testkit.NATSClient(t, url)}
	ctx := testkit.Context(t)
	testkit.NoErr(t, s.Open(ctx), "stream")
	for i := range 12 {
		c := fmt.Appendf(nil, "# Old %d\n\nAn older publisher's document %d.\n\n## Part\n\nMore.\n", i, i)
		e := &events.Event{Op: events.OpUpsert, Project: "sample", Path: fmt.Sprintf("old/o%02d.md", i), Size: int64(len(c)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}
		m, err := e.Msg()
		testkit.NoErr(t, err, "msg")
		if m.Header.Get(events.HdrWords) != "" {
			t.Fatal("an event encoded without Describe has Guide-Words")
		}
		_, err = s.JS.PublishMsg(ctx, m)
		testkit.NoErr(t, err, "publish")
	}
	paths := slices.Collect(maps.Keys(testkit.Disk(t, root)))
	for i := range 12 {
		paths = append(paths, fmt.Sprintf("old/o%02d.md", i))
	}

	whole := startReplica(t, url)
	part := startReplica(t, url, "--partitions", "1")
	startReplica(t, url, "--partitions", "0,2,3")
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		n, w := len(records(t, part.Main, paths)), len(records(t, whole.Main, paths))
		return n == len(paths) && w == len(paths), fmt.Sprintf("%d and %d records of %d", n, w, len(paths))
	})
	want, got := records(t, whole.Main, paths), records(t, part.Main, paths)
	others := 0
	for _, p := range slices.Sorted(maps.Keys(want)) {
		w, g := want[p], got[p]
		w.Seq, g.Seq = 0, 0
		if w != g {
			t.Errorf("%s: record %+v in the partition replica, %+v in the whole one", p, g, w)
		}
		if w.Status != events.StatusOK || events.PartitionOf(w.Key(), 4) == 1 {
			continue
		}
		others++
		if others > 25 {
			continue
		}
		args := map[string]any{"path": p}
		testkit.Equal(t, testkit.Text(t, testkit.Call(t, part.c, "get_summary", args)),
			testkit.Text(t, testkit.Call(t, whole.c, "get_summary", args)), "get_summary "+p)
	}
	if others == 0 {
		t.Fatal("no document of another partition")
	}
}
