package index

import (
	"errors"
	"fmt"

	"github.com/blevesearch/bleve/v2"

	"github.com/guide/guide/internal/projection"
)

// Repairs lists the damage found in the index's files, latest last, and what was done.
func (x *Index) Repairs() []projection.Repair { return x.repairs.List() }

// Damaged is closed when a search or a batch finds the index's files damaged while open:
// whoever follows the stream for it then resets it (Identity names no stream until then),
// which deletes it and starts it anew.
func (x *Index) Damaged() <-chan struct{} {
	x.damageMu.Lock()
	defer x.damageMu.Unlock()
	if x.damagedCh == nil {
		x.damagedCh = make(chan struct{})
	}
	return x.damagedCh
}

// markBroken records that the open index was found damaged (err, from projection.Guard).
func (x *Index) markBroken(err error) {
	var ap *asyncPanic
	if projection.Faulted(err) || errors.As(err, &ap) {
		x.poisoned.Store(true)
	}
	if !x.broken.CompareAndSwap(nil, &err) {
		return
	}
	x.Logger.Error("index damaged; rebuilding it from the stream", "dir", x.Dir, "err", err)
	x.repairs.Add(projection.Repair{Projection: "index", File: "index", Problem: err.Error(), Action: "deleted and rebuilt from the stream"})
	x.damageMu.Lock()
	defer x.damageMu.Unlock()
	if x.damagedCh == nil {
		x.damagedCh = make(chan struct{})
	}
	close(x.damagedCh)
}

// clearBroken forgets the damage of an index just created anew. The caller holds mu.
func (x *Index) clearBroken() {
	x.broken.Store(nil)
	x.poisoned.Store(false)
	x.damageMu.Lock()
	defer x.damageMu.Unlock()
	select {
	case <-x.damagedCh:
		x.damagedCh = nil
	default:
	}
}

// guarded runs fn over the open index with a panic or a fault of Bleve's (a damaged
// segment read past its end) turned into an error, which marks the index damaged.
func (x *Index) guarded(idx bleve.Index, fn func(bleve.Index) error) error {
	err := projection.Guard(func() error { return fn(idx) })
	if projection.Faulted(err) {
		x.markBroken(err)
		return fmt.Errorf("search: the index is damaged and being rebuilt: %w", err)
	}
	return err
}

// recordSums adds the checksums of idx's segments persisted since the last time.
func (x *Index) recordSums(idx bleve.Index) {
	if x.sums == nil || x.poisoned.Load() {
		return
	}
	if err := projection.Guard(func() error { return x.sums.add(persistedFiles(x.Dir, idx)) }); err != nil {
		if errors.Is(err, projection.ErrDamaged) {
			x.markBroken(err)
			return
		}
		x.Logger.Warn("index: recording its files' checksums", "err", err)
	}
}

// asyncPanic is a panic of scorch's background work: the index goes on without it, so it
// is dropped rather than closed (its persister will never catch up).
type asyncPanic struct{ err error }

func (e *asyncPanic) Error() string        { return "damaged: " + e.err.Error() }
func (e *asyncPanic) Is(target error) bool { return target == projection.ErrDamaged }
func (e *asyncPanic) Unwrap() error        { return e.err }
