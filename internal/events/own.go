package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// A replica of some partitions folds into its search index only its own partitions'
// events and the control events. FollowOwn reads those, whole, with one consumer filtered
// to their subjects (Subjects.PartitionFilters), and never another partition's event, not
// even its headers. Its follower's checkpoint still means "every event up to N applied":
// when its consumer has nothing more to deliver, it passes the other partitions' events up
// to a sequence another reader of the whole stream has seen (Reach: the catalog's
// checkpoint), once the server has said that no event of its subjects lies between
// (ownThrough), in a batch of no events whose Through is that sequence.

// Reach is what a FollowOwn follower knows of the stream beyond its own events.
type Reach struct {
	// Seq is a sequence the stream is known to hold every event up to (the checkpoint of
	// a projection that follows every event).
	Seq func() uint64
	// Changed returns a channel closed when Seq may have grown.
	Changed func() <-chan struct{}
	// End is the stream's last sequence when following began: a batch before it is not
	// the end of the catch-up, whatever its own consumer has pending.
	End uint64
}

// CanFollowOwn reports whether FollowOwn applies: a stream of P > 1 whose follower
// folds some partitions only (Folds).
func (s *Stream) CanFollowOwn() bool { return s.PartitionCount() > 1 && s.slim() }

// Unfiltered reports whether e is an event FollowOwn's follower needs (a document of its
// partitions) that its filtered consumer does not deliver: one whose subject carries no
// partition, an older publisher's. A follower that meets one must follow every event.
func (s *Stream) Unfiltered(e *Event) bool {
	if (e.Op != OpUpsert && e.Op != OpDelete) || e.Partitioned {
		return false
	}
	return s.Folds.Holds(DocKey{Session: e.Session, Path: e.Path})
}

// errClosed is a delivery channel that closed.
var errClosed = errors.New("closed")

// FollowOwn delivers the events of project above after that a follower of its own
// partitions needs (CanFollowOwn) — its documents' and the control events — whole, in
// batches within budget, and passes the others as they become known (reach) in batches of
// none (Batch.Through). A batch's Pending is at least one while events of others are
// known beyond it, so that a follower counts itself caught up only once it has passed
// every event.
func (s *Stream) FollowOwn(ctx context.Context, project string, after uint64, budget Budget, reach Reach, apply func(Batch) error) error {
	filters := s.Subjects(project).PartitionFilters(s.Folds.Served())
	ch, stop, err := s.deliverOf(ctx, filters, false, after, budget.Events)
	if err != nil {
		return err
	}
	defer stop()
	bs := &batcher{ch: ch, max: budget}
	applied := after
	for {
		changed := reach.Changed()
		if bs.held == nil {
			if known := reach.Seq(); known > applied && len(ch) == 0 {
				through, err := s.ownThrough(ctx, filters, applied, known)
				if err != nil {
					return err
				}
				if through > applied {
					b := Batch{Through: through}
					if through < max(known, reach.End) {
						b.Pending = 1 // an event of its own follows, or the catch-up's end is ahead
					}
					if err := apply(b); err != nil {
						return err
					}
					applied = through
					continue
				}
			}
			select {
			case d, ok := <-ch:
				if !ok {
					d = delivery{err: errClosed}
				}
				bs.held = &d
			case <-changed:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		b, stopped, err := bs.next(ctx)
		if err != nil {
			return err
		}
		if len(b.Events) > 0 {
			if b.Last() < max(reach.Seq(), reach.End) {
				b.Pending = max(b.Pending, 1)
			}
			if err := apply(b); err != nil {
				return err
			}
			applied = b.Last()
		}
		if stopped != nil {
			return stopped
		}
	}
}

// ownThrough is the sequence up to which, of the events after applied, none is of filters
// and the stream holds all, at most known: one before the first event of filters after
// applied, as the server says (a direct get of the next message of each filter).
func (s *Stream) ownThrough(ctx context.Context, filters []string, applied, known uint64) (uint64, error) {
	through := known
	for _, f := range filters {
		req := map[string]any{"seq": applied + 1, "next_by_subj": f, "batch": 1, "max_bytes": 1}
		err := s.directRaw(ctx, req, func(_ *nats.Msg, seq uint64, _ time.Time) bool {
			if seq > applied {
				through = min(through, seq-1)
			}
			return false
		})
		if err != nil {
			return applied, fmt.Errorf("the next event of %s: %w", f, err)
		}
	}
	return through, nil
}
