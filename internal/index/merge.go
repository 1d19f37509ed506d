package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	"github.com/guide/guide/internal/projection"
)

// An index that has stopped changing merges its segments, tier by tier, into one each.
// Scorch's own merging keeps up to ten segments a tier while documents arrive (a first
// index is merged once, after its catch-up: catchup.go). Every term of a search is looked up in
// every segment, which was a third of the time of a search for a rare word. Merged, the
// same index has three segments; merging took 4 s of one core at 100k. Later edits add
// small segments again, and the next quiet spell merges those (the large tiers are
// rewritten only when they gain a whole tier of segments).
const (
	// defaultIdleMerge is how long the index has had no batch before its segments are
	// merged, unless Index.IdleMerge says otherwise.
	defaultIdleMerge = 5 * time.Second
	// idleSegments is how many segments an idle index may keep unmerged.
	idleSegments = 3
)

// idleMergePlan merges each tier of segments into one.
var idleMergePlan = func() mergeplan.MergePlanOptions {
	o := mergePlanOptions
	o.MaxSegmentsPerTier = 1
	return o
}()

// merger runs mergeWhenIdle for one open Bleve index.
type merger struct {
	applied chan struct{} // receives, without blocking, after every batch
	stop    context.CancelFunc
	done    chan struct{}
}

// startMerger starts merging idx's segments when it is idle; stopMerger ends that.
// Both run under x.mu's write lock, with x.idx set to idx.
func (x *Index) startMerger(idx bleve.Index) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &merger{applied: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	x.merger.Store(m)
	x.mergedAt.Store(0) // this index is not merged until its own merger says so
	after := cmp.Or(x.IdleMerge, defaultIdleMerge)
	wake := make(chan struct{}, 1)
	x.sumsWake = wake
	go func() {
		defer close(m.done)
		var wg sync.WaitGroup
		wg.Go(func() { x.keepSums(ctx, idx, wake) })
		x.mergeWhenIdle(ctx, idx, m.applied, after)
		wg.Wait()
	}()
}

// keepSums adds the checksums of the segments persisted to the list (sums.go) whenever a
// batch has been persisted (onPersisted wakes it), until ctx ends.
func (x *Index) keepSums(ctx context.Context, idx bleve.Index, wake <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			x.recordSums(idx)
		}
	}
}

func (x *Index) stopMerger() {
	if m := x.merger.Swap(nil); m != nil {
		m.stop()
		<-m.done
	}
}

// batchApplied tells the merger a batch was applied.
func (x *Index) batchApplied() {
	x.batches.Add(1)
	if m := x.merger.Load(); m != nil {
		select {
		case m.applied <- struct{}{}:
		default:
		}
	}
}

func (x *Index) mergeWhenIdle(ctx context.Context, idx bleve.Index, applied <-chan struct{}, after time.Duration) {
	t := time.NewTimer(after)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-applied:
			t.Reset(after)
			continue
		case <-t.C:
		}
		batches := x.batches.Load() // what the merge below leaves merged
		loaded := x.loaded.Swap(false)
		x.catchingUp(false) // idle: whatever the last batch said, caught up
		merged := false
		o := cmp.Or(x.idlePlan, &idleMergePlan)
		if n, merges := mergePlanned(idx, o); n > idleSegments && merges {
			start := time.Now()
			adv, err := idx.Advanced()
			s, ok := adv.(*scorch.Scorch)
			if err != nil || !ok {
				return
			}
			// ForceMerge returns when the merge is done or the index closed; a merge
			// running when the index is closed ends when it closes, so the merger does
			// not wait for it (Close stops the merger first).
			done := make(chan error, 1)
			go func() { done <- s.ForceMerge(ctx, o) }()
			select {
			case err = <-done:
			case <-ctx.Done():
				return
			}
			if err != nil {
				x.Logger.Warn("merging the index's segments", "err", err)
			} else if ctx.Err() == nil {
				merged = true
				x.Logger.Info("merged the index's segments", "before", n, "after", segments(idx), "took", time.Since(start).Round(time.Millisecond))
			}
		}
		if merged || loaded {
			// The buffers of the merge, or of a load in bulk (its batches, and the merge
			// of the segments it held back, which scorch's merger may have done before
			// this), are garbage now: hand them back, or the runtime keeps a few hundred
			// megabytes at 100k documents for minutes.
			x.releaseMemory()
		}
		// Nothing more to merge until another batch.
		x.mergedAt.Store(batches + 1)
		if !x.sweepUntilBatch(ctx, idx, applied) {
			return
		}
		t.Reset(after)
	}
}

// Scorch deletes the file of a segment merged away when it cleans up after persisting a
// snapshot, and only once no reader holds an older snapshot that names the segment. An
// index that has gone idle persists nothing more: a search running across its last merge,
// or scorch's cleanup running before the merge let go of the snapshot it merged, left the
// merged-away segments on disk until the next change — the index twice over (160 MB more
// at 100k documents). So while the folder holds segment files the current snapshot does
// not name, the idle index writes an internal key of no meaning to anyone (a snapshot for
// the persister to persist, then clean up after), at growing intervals.
const (
	sweepFirst = 100 * time.Millisecond // from the end of a merge to the first check
	sweepMax   = time.Minute            // the longest interval between two
	sweepTries = 16                     // about eight minutes, then it waits for a batch
)

// keySwept is the internal key the sweep writes: how many segment files were stray.
var keySwept = []byte("guide.swept")

// sweepUntilBatch waits for the next batch, meanwhile asking scorch to delete the files of
// segments merged away until none is left. It returns false when ctx has ended.
func (x *Index) sweepUntilBatch(ctx context.Context, idx bleve.Index, applied <-chan struct{}) bool {
	wait := sweepFirst
	t := time.NewTimer(wait)
	defer t.Stop()
	for try := 0; ; try++ {
		var again <-chan time.Time
		if try <= sweepTries {
			t.Reset(wait)
			again, wait = t.C, min(2*wait, sweepMax)
		}
		select {
		case <-ctx.Done():
			return false
		case <-applied:
			return true
		case <-again:
		}
		stray := strayFiles(x.Dir, idx)
		if len(stray) == 0 {
			try = sweepTries // nothing to wait for but a batch
			continue
		}
		if try == sweepTries {
			x.Logger.Warn("index: segments merged away stay on disk until the next change", "files", len(stray))
			continue
		}
		b := idx.NewBatch()
		b.SetInternal(keySwept, binary.AppendUvarint(nil, uint64(len(stray))))
		if err := projection.Guard(func() error { return idx.Batch(b) }); err != nil {
			x.Logger.Warn("index: cleaning up segments merged away", "err", err)
			try = sweepTries
		}
	}
}

// strayFiles lists the segment files in the index's folder dir (relative to it) that the
// current snapshot of idx does not name.
func strayFiles(dir string, idx bleve.Index) []string {
	live := map[string]bool{}
	for _, f := range persistedFiles(dir, idx) {
		live[f] = true
	}
	all, _ := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	var stray []string
	for _, f := range all {
		if rel, err := filepath.Rel(dir, f); err == nil && !live[filepath.ToSlash(rel)] {
			stray = append(stray, filepath.ToSlash(rel))
		}
	}
	return stray
}

// releaseMemory collects the garbage and hands the free memory back to the system.
func (x *Index) releaseMemory() {
	if x.release != nil {
		x.release()
		return
	}
	debug.FreeOSMemory()
}

// mergePlanned returns how many segments the index's current snapshot has, and whether
// the merge plan o finds any to merge, as scorch plans a forced merge: over the segments
// on disk. Segments in tiers of their own fit the plan however many there are (four at a
// million documents), and a forced merge of them rewrote nothing, yet cost a merge
// request and the collection that hands a merge's buffers back (seconds of a core with a
// large index in memory).
func mergePlanned(idx bleve.Index, o *mergeplan.MergePlanOptions) (n int, merges bool) {
	withSnapshot(idx, func(snap *scorch.IndexSnapshot) {
		var onDisk []mergeplan.Segment
		for _, s := range snap.Segments() {
			if _, ok := s.Segment().(segment.PersistedSegment); ok {
				onDisk = append(onDisk, s)
			}
		}
		plan, err := mergeplan.Plan(onDisk, o)
		n, merges = len(snap.Segments()), err == nil && plan != nil && len(plan.Tasks) > 0
	})
	return n, merges
}

// segments returns how many segments the index's current snapshot has.
func segments(idx bleve.Index) (n int) {
	withSnapshot(idx, func(snap *scorch.IndexSnapshot) { n = len(snap.Segments()) })
	return n
}

// withSnapshot calls f with the index's current scorch snapshot, when it has one.
func withSnapshot(idx bleve.Index, f func(*scorch.IndexSnapshot)) {
	adv, err := idx.Advanced()
	if err != nil {
		return
	}
	withScorchSnapshot(adv, f)
}

// withScorchSnapshot calls f with the current snapshot of an open scorch index.
func withScorchSnapshot(s interface {
	Reader() (bleveindex.IndexReader, error)
}, f func(*scorch.IndexSnapshot)) {
	r, err := s.Reader()
	if err != nil {
		return
	}
	defer r.Close()
	if snap, ok := r.(*scorch.IndexSnapshot); ok {
		f(snap)
	}
}
