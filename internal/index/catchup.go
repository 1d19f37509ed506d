package index

import (
	"cmp"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"

	"github.com/guide/guide/internal/events"
)

// A first index (a catch-up: batches applied during a scan of the tree, or while the
// stream holds a thousand events or more beyond them) leaves its segments unmerged until
// it has caught up, then merges them in one task. Scorch's merger otherwise merges ten segments at a time as they come, and
// the merged ones again, tier by tier: a first index of 100k generated documents (163 batches of 2 MB) had its merger
// write 481 MB — three times the index — for an index of 162 MB, 28 s of merging on a
// core. Held back, the 163 segments on disk are merged once by the plan below, which takes
// as many segments in a task as may be held back: 162 MB written, 3.6 s (TestMeasureCatchUp).
//
// Scorch reads its merge plan at open and offers no way to change it later; what it does
// offer is a check before each merge (EventKindPreMergeCheck), on the merger's goroutine,
// which mayMerge holds while the index catches up. Returning false from it would make the
// merger try again at once, a busy loop; waiting is the only way to defer. The plan it
// then merges with is the one it was opened with, so that plan takes wide tasks always.
const (
	// heldSegments is how many segments on disk the merger may leave unmerged while the
	// index catches up: beyond, it merges them (in one task) and waits again. It bounds the
	// files held open and what a search during the catch-up looks each term up in.
	heldSegments = 256
	// catchUpBacklog is the fewest events the stream may hold beyond a batch for the index
	// to be catching up. An index a few events behind, under a burst of saves, merges its
	// small segments as they come, so that searches do not look each term up in hundreds.
	catchUpBacklog = 1000
)

// mergePlanOptions is the plan of scorch's merger (scorchMergePlanOptions): its default
// (tiers of ten, growing tenfold) with as many segments in a task as a catch-up holds
// back. Live edits make one small segment at a time, and meet the same tiers as before.
var mergePlanOptions = func() mergeplan.MergePlanOptions {
	o := mergeplan.DefaultMergePlanOptions
	o.SegmentsPerMergeTask = heldSegments
	return o
}()

// wakeable makes mergeWake, once, before a scorch index is opened.
func (x *Index) wakeable() {
	if x.mergeWake == nil {
		x.mergeWake = make(chan struct{}, 1)
	}
}

// bulk reports whether the index is loading in bulk after batch b: a scan of the tree has
// begun and not yet ended (the indexer's first scan of a tree publishes while the index
// applies, so the stream seldom holds much beyond the index then), or the stream holds
// catchUpBacklog events or more beyond the batch (a replica catching up on a stream
// already written). Only the applying goroutine calls it.
func (x *Index) bulk(b events.Batch) bool {
	for i := range b.Events {
		switch b.Events[i].Op {
		case events.OpScanBegin:
			x.scanning = true
		case events.OpScanEnd:
			x.scanning = false
		}
	}
	return x.scanning || b.Pending >= catchUpBacklog
}

// catchingUp records whether the batch just applied leaves the index loading in bulk (a
// catch-up), and wakes a merger held back by the catch-up when it has ended.
func (x *Index) catchingUp(behind bool) {
	x.behind.Store(behind)
	if behind {
		x.loaded.Store(true)
	}
	select {
	case x.mergeWake <- struct{}{}:
	default:
	}
}

// mayMerge is scorch's check before its merger plans (EventKindPreMergeCheck), on the
// merger's goroutine: while the index catches up and holds fewer than heldSegments on
// disk, it waits. It returns false when the index closes (quit), so that the merger stops.
func (x *Index) mayMerge(s *scorch.Scorch, quit <-chan struct{}) bool {
	held := cmp.Or(x.held, heldSegments)
	for x.behind.Load() && onDisk(s) < held {
		select {
		case <-x.mergeWake:
		case <-quit:
			return false
		}
	}
	return true
}

// onDisk is how many segments of s's current snapshot are on disk.
func onDisk(s *scorch.Scorch) (n int) {
	withScorchSnapshot(s, func(snap *scorch.IndexSnapshot) {
		for _, seg := range snap.Segments() {
			if _, ok := seg.Segment().(interface{ Path() string }); ok {
				n++
			}
		}
	})
	return n
}
