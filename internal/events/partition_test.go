package events_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// TestPartitionOfIsStable: the partition of a key is the documented hash, the same in
// every process, and spreads documents evenly.
func TestPartitionOfIsStable(t *testing.T) {
	// Fixed forever: replicas and streams made by other builds must agree.
	for _, c := range []struct {
		k    events.DocKey
		p    int
		want int
	}{
		{events.DocKey{Path: "a.md"}, 1, 0},
		{events.DocKey{Path: "a.md"}, 4, events.PartitionOf(events.DocKey{Path: "a.md"}, 4)},
	} {
		if got := events.PartitionOf(c.k, c.p); got != c.want {
			t.Errorf("PartitionOf(%v, %d) = %d, want %d", c.k, c.p, got, c.want)
		}
	}
	golden := map[string]int{}
	for i := range 8 {
		p := fmt.Sprintf("docs/file-%d.md", i)
		golden[p] = events.PartitionOf(events.DocKey{Path: p}, 4)
	}
	// Computed apart from this code (FNV-1a 64 in a few lines of Python).
	want := map[string]int{"docs/file-0.md": 3, "docs/file-1.md": 2, "docs/file-2.md": 1, "docs/file-3.md": 0,
		"docs/file-4.md": 3, "docs/file-5.md": 2, "docs/file-6.md": 1, "docs/file-7.md": 0}
	for p, k := range want {
		if golden[p] != k {
			t.Errorf("PartitionOf(%s, 4) = %d, want %d (the hash changed: every partitioned stream would have to be replayed)", p, golden[p], k)
		}
	}
	counts := make([]int, 4)
	for i := range 10000 {
		counts[events.PartitionOf(events.DocKey{Path: fmt.Sprintf("d%d/x%d.md", i%37, i)}, 4)]++
	}
	for k, n := range counts {
		if n < 2200 || n > 2800 {
			t.Errorf("partition %d holds %d of 10000 documents", k, n)
		}
	}
	s := events.PartitionSet{Count: 4, Own: []int{1, 3}}
	n := 0
	for i := range 1000 {
		k := events.DocKey{Path: fmt.Sprintf("x%d", i)}
		if s.Holds(k) {
			n++
			if p := events.PartitionOf(k, 4); p != 1 && p != 3 {
				t.Fatalf("set %v holds a document of partition %d", s, p)
			}
		}
	}
	if n == 0 || n == 1000 || !(events.PartitionSet{}).Holds(events.DocKey{Path: "x"}) {
		t.Errorf("holds %d of 1000; the zero set must hold everything", n)
	}
}

// TestStreamRecordsPartitions: P is recorded in the stream's metadata when the stream is
// made, read back by every process that opens or binds it, kept on update, and another
// P is refused; a stream of one partition records nothing, as before partitions.
func TestStreamRecordsPartitions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t.Run("OnePartitionRecordsNothing", func(t *testing.T) {
		b := testkit.NATS(t)
		s := &events.Stream{Conn: b.Conn}
		testkit.NoErr(t, s.Open(ctx), "open")
		info, err := s.Info(ctx)
		testkit.NoErr(t, err, "info")
		if _, ok := info.Config.Metadata[events.MetaPartitions]; ok || s.PartitionCount() != 1 {
			t.Errorf("metadata %v, P %d; want nothing recorded, P 1", info.Config.Metadata, s.PartitionCount())
		}
	})
	t.Run("FourKept", func(t *testing.T) {
		b := testkit.NATS(t)
		s := &events.Stream{Conn: b.Conn, Partitions: 4}
		testkit.NoErr(t, s.Open(ctx), "open")
		again := &events.Stream{Conn: b.Conn} // an indexer restarted without the flag
		testkit.NoErr(t, again.Open(ctx), "open again")
		bound := &events.Stream{Conn: b.Conn}
		testkit.NoErr(t, bound.Bind(ctx), "bind")
		if s.PartitionCount() != 4 || again.PartitionCount() != 4 || bound.PartitionCount() != 4 {
			t.Errorf("P = %d, %d, %d; want 4", s.PartitionCount(), again.PartitionCount(), bound.PartitionCount())
		}
		js, _ := jetstream.New(b.Conn)
		st, err := js.Stream(ctx, events.DefaultStream)
		testkit.NoErr(t, err, "stream")
		if got := st.CachedInfo().Config.Metadata[events.MetaPartitions]; got != "4" {
			t.Errorf("recorded %q, want 4", got)
		}
		other := &events.Stream{Conn: b.Conn, Partitions: 2}
		if err := other.Open(ctx); !errors.Is(err, events.ErrPartitions) {
			t.Errorf("open with P 2 over a stream of 4: %v, want ErrPartitions", err)
		}
		if _, err := bound.Set([]int{4}); !errors.Is(err, events.ErrPartitions) {
			t.Errorf("partition 4 of 4: %v, want ErrPartitions", err)
		}
	})
}
