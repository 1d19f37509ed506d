package index

import (
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// scorchStat is one of the counters of the open index's scorch (StatsMap).
func scorchStat(t *testing.T, x *Index, name string) uint64 {
	t.Helper()
	adv, err := x.idx.Advanced()
	noErr(t, err, "advanced")
	v, _ := adv.(*scorch.Scorch).StatsMap()[name].(uint64)
	return v
}

// catchUp applies n batches of docs documents each, as a catch-up delivers them (more
// events in the stream after each), each persisted as a segment of its own.
func catchUp(t *testing.T, x *Index, seq *uint64, n, docs int) {
	t.Helper()
	for range n {
		b := harbourBatch("catchup", seq, docs)
		b.Pending = 1000
		noErr(t, x.Apply(b), "apply")
		x.flush()
	}
}

// waitFor waits until cond holds, or fails the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polls the condition
	}
}

// TestCatchUpMergesItsSegmentsOnce applies twelve batches as a catch-up does, each its own
// segment on disk, then the end of the catch-up: scorch's merger merges the twelve in one
// task, rather than ten at a time as they come and the merged ones again. After it, the
// merger merges live edits as they come, without waiting for the index to be idle.
func TestCatchUpMergesItsSegmentsOnce(t *testing.T) {
	x := emptyIndex(t, "catchup", time.Hour)
	var seq uint64
	const batches = 12 // more than a merge task of scorch's default plan takes
	catchUp(t, x, &seq, batches, 100)
	// The end of the catch-up: the stream holds nothing more (a batch of no document).
	noErr(t, x.Apply(events.Batch{Through: seq + 1}), "apply the end of the catch-up")
	seq++
	waitFor(t, "the segments merged into one", func() bool { return segments(x.idx) == 1 })
	if tasks, merged := scorchStat(t, x, "TotFileMergePlanTasks"), scorchStat(t, x, "TotFileMergeSegments"); tasks != 1 || merged != batches {
		t.Fatalf("the catch-up's segments were merged in %d tasks of %d segments in all, want 1 of %d", tasks, merged, batches)
	}

	// Live edits: merged as they come, while the index is not idle (IdleMerge is an hour),
	// and a few events behind the stream, as under a burst of saves.
	for range 3 {
		b := harbourBatch("catchup", &seq, 10)
		b.Pending = 10
		noErr(t, x.Apply(b), "apply a live edit")
		x.flush()
	}
	waitFor(t, "the live edits merged", func() bool { return scorchStat(t, x, "TotFileMergePlanTasks") > 1 })
}

// TestCatchUpMergesWhatItHoldsBeyondItsBound: a catch-up that has more segments on disk
// than it may hold unmerged merges them before it ends.
func TestCatchUpMergesWhatItHoldsBeyondItsBound(t *testing.T) {
	x := &Index{Dir: filepath.Join(t.TempDir(), "index"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IdleMerge: time.Hour, held: 4}
	noErr(t, x.Open(), "open")
	t.Cleanup(func() { _ = x.Close() })
	noErr(t, x.Reset(projection.State{StreamID: "catchup@1", Project: "catchup"}), "reset")
	var seq uint64
	catchUp(t, x, &seq, 8, 100)
	waitFor(t, "a merge during the catch-up", func() bool { return scorchStat(t, x, "TotFileMergePlanTasks") > 0 })
	if n := segments(x.idx); n > 8 {
		t.Fatalf("%d segments after 8 batches", n)
	}
}

// TestFirstScanMergesItsSegmentsOnce: the indexer's first scan of a tree publishes while
// the index applies, so the stream seldom holds more than the batch being applied. The
// batches between the scan's beginning and its end are a bulk load all the same: their
// segments are merged in one task once the scan has ended.
func TestFirstScanMergesItsSegmentsOnce(t *testing.T) {
	x := emptyIndex(t, "scan", time.Hour)
	var seq uint64
	seq++
	noErr(t, x.Apply(events.Batch{Events: []events.Event{{Op: events.OpScanBegin, Project: "scan", Seq: seq}}}), "apply the scan's beginning")
	const batches = 12
	for range batches {
		b := harbourBatch("scan", &seq, 100) // nothing more in the stream (Pending 0)
		noErr(t, x.Apply(b), "apply")
		x.flush()
	}
	if tasks := scorchStat(t, x, "TotFileMergePlanTasks"); tasks != 0 {
		t.Fatalf("%d merge tasks during the scan, want none", tasks)
	}
	seq++
	noErr(t, x.Apply(events.Batch{Events: []events.Event{{Op: events.OpScanEnd, Project: "scan", Seq: seq}}}), "apply the scan's end")
	waitFor(t, "the segments merged into one", func() bool { return segments(x.idx) == 1 })
	if tasks, merged := scorchStat(t, x, "TotFileMergePlanTasks"), scorchStat(t, x, "TotFileMergeSegments"); tasks != 1 || merged != batches {
		t.Fatalf("the scan's segments were merged in %d tasks of %d segments in all, want 1 of %d", tasks, merged, batches)
	}
}

// TestFirstScanHandsItsMemoryBack: once the index is idle after a first scan, the memory
// of the load is handed back to the system, even when scorch's merger has already merged
// the segments the scan held back and the idle merge finds nothing to merge; a live edit
// after it does not hand memory back again.
func TestFirstScanHandsItsMemoryBack(t *testing.T) {
	var released atomic.Int32
	x := &Index{Dir: filepath.Join(t.TempDir(), "index"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		IdleMerge: time.Second, release: func() { released.Add(1) }}
	noErr(t, x.Open(), "open")
	t.Cleanup(func() { _ = x.Close() })
	noErr(t, x.Reset(projection.State{StreamID: "scan@1", Project: "scan"}), "reset")
	var seq uint64
	seq++
	noErr(t, x.Apply(events.Batch{Events: []events.Event{{Op: events.OpScanBegin, Project: "scan", Seq: seq}}}), "apply the scan's beginning")
	for range 6 {
		noErr(t, x.Apply(harbourBatch("scan", &seq, 50)), "apply")
		x.flush()
	}
	seq++
	noErr(t, x.Apply(events.Batch{Events: []events.Event{{Op: events.OpScanEnd, Project: "scan", Seq: seq}}}), "apply the scan's end")
	// Scorch's merger merges what the scan held back at once; the idle merge comes a
	// second after the last batch and finds one segment.
	waitFor(t, "the segments merged into one", func() bool { return segments(x.idx) == 1 })
	waitFor(t, "the index idle and merged", func() bool { return x.State().Merged })
	if n := released.Load(); n != 1 {
		t.Fatalf("memory handed back %d times after the scan, want once", n)
	}
	noErr(t, x.Apply(harbourBatch("scan", &seq, 1)), "apply a live edit")
	waitFor(t, "the index idle and merged after the edit", func() bool { return x.State().Merged })
	if n := released.Load(); n != 1 {
		t.Fatalf("memory handed back %d times after the scan and an edit, want once", n)
	}
}
