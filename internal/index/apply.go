package index

import (
	"errors"
	"fmt"

	bdoc "github.com/blevesearch/bleve/v2/document"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// Apply folds a batch of events into the index, with the batch's last sequence as the new
// checkpoint in the same Bleve batch. Events at or below the checkpoint are skipped.
func (x *Index) Apply(b events.Batch) error { return x.Prepare(b)() }

// prepared is an upsert's document, mapped and analyzed ahead of its batch.
type prepared struct {
	d    *document
	doc  *bdoc.Document
	lens []int // of the ranked fields, as analyzed (analyzedLengths)
	err  error
}

// Prepare maps every upsert of b to its Bleve document and analyzes its text fields
// (projection.Preparer): the part of Apply that needs nothing but the events, done while
// the batch before is built into its segment. The rest of Apply — the checkpoint, the
// lengths, the segment — is what it returns.
func (x *Index) Prepare(b events.Batch) func() error {
	docs := make([]prepared, len(b.Events))
	// The checkpoint only grows: an event at or below it now is skipped by apply too.
	seq := x.seq.Load()
	for i := range b.Events {
		e := &b.Events[i]
		if e.Op != events.OpUpsert || e.Seq <= seq || !x.holds(e) {
			continue
		}
		p := &docs[i]
		p.d = newDocument(x.Markdown, e)
		p.doc, p.err = x.mapDocument(events.DocKey{Session: e.Session, Path: e.Path}.ID(), p.d)
		if p.err == nil {
			p.lens = analyzedLengths(p.doc)
		}
	}
	return func() error { return x.apply(b, docs) }
}

// apply is the rest of Apply once b's documents are prepared.
func (x *Index) apply(b events.Batch, docs []prepared) error {
	if err := x.broken.Load(); err != nil {
		return fmt.Errorf("index: %w", *err)
	}
	if err := x.persistErr(); err != nil {
		// The batches before are not on disk yet: hold the next ones off (the runner tries
		// again with backoff) rather than pile them up in memory.
		return err
	}
	seq := x.seq.Load()
	batch := x.idx.NewBatch()
	applied := seq
	lens := x.lengths.Load().clone()
	for i := range b.Events {
		e := &b.Events[i]
		if e.Seq <= seq {
			continue
		}
		applied = e.Seq
		if !x.holds(e) {
			continue // another partition's: its checkpoint is passed all the same
		}
		switch e.Op {
		case events.OpUpsert:
			p := docs[i]
			lens.add(p.d, p.lens)
			err := p.err
			if err == nil {
				err = batch.IndexAdvanced(p.doc)
			}
			if err != nil {
				return fmt.Errorf("index %q: %w", e.Path, err)
			}
		case events.OpDelete:
			batch.Delete(events.DocKey{Session: e.Session, Path: e.Path}.ID())
		}
	}
	// Passed events of other partitions (events.FollowOwn): the checkpoint passes them.
	applied = max(applied, b.Through)
	if applied == seq {
		return nil
	}
	batch.SetInternal(keySeq, seqBytes(applied))
	batch.SetInternal(keyLengths, lens.encode())
	x.onPersisted(batch, applied)
	if err := projection.Guard(func() error { return x.idx.Batch(batch) }); err != nil {
		if errors.Is(err, projection.ErrDamaged) {
			x.markBroken(err)
		}
		return fmt.Errorf("index batch up to %d: %w", applied, err)
	}
	x.lengths.Store(&lens)
	x.seq.Store(applied)
	x.catchingUp(x.bulk(b))
	x.batchApplied()
	return nil
}

// holds reports whether the index folds e's document (Index.Holds).
func (x *Index) holds(e *events.Event) bool {
	return x.Holds == nil || x.Holds(events.DocKey{Session: e.Session, Path: e.Path})
}

// FollowsOwn reports whether the index folds some partitions only (Holds): it then follows
// their events alone (projection.OwnFollower).
func (x *Index) FollowsOwn() bool { return x.Holds != nil }
