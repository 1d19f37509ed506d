package freshness

import (
	"sync"

	"github.com/guide/guide/internal/events"
)

// recentLimit bounds the documents recent holds (a catch-up of a large tree, where the
// search index runs far behind the catalog, or a process nobody asks for statuses): past
// it, recent starts again from the latest batch, and statuses come from the stream until
// every projection has applied that far.
const recentLimit = 2000

// recent is what this process knows, without asking the stream, of the events not yet
// applied by every projection: the latest event per document that the catalog's consumer
// has delivered, noted before the catalog applies it. When the catalog's consumer has
// nothing more pending and every projection has applied at least what recent started
// from, it is the whole answer: the stream holds nothing above the projections' common
// checkpoint that recent does not (bar an event published this instant, not delivered
// yet, which a read of the stream a moment earlier would not have held either). Reading
// it costs no round trip to NATS, which statuses of list, focus and get_summary under
// many sessions would otherwise pay on every call.
type recent struct {
	mu      sync.Mutex
	started bool
	from    uint64 // every event of the project above it that reached the catalog is here
	pruned  uint64 // nothing at or below it is held
	seen    uint64 // the last sequence the catalog's consumer delivered
	events  map[events.DocKey]events.DocState
}

// start begins tracking from the catalog's checkpoint, before its consumer delivers.
func (r *recent) start(checkpoint uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started, r.from, r.pruned, r.seen = true, checkpoint, 0, checkpoint
	r.events = map[events.DocKey]events.DocState{}
}

// note records a batch the catalog is about to apply.
func (r *recent) note(b events.Batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		return
	}
	r.seen = max(r.seen, b.Last())
	for i := range b.Events {
		e := &b.Events[i]
		if e.Op != events.OpUpsert && e.Op != events.OpDelete {
			continue
		}
		if e.Seq <= r.pruned {
			continue // a projection reset re-delivers what every projection had applied
		}
		r.events[events.DocKey{Session: e.Session, Path: e.Path}] = e.State(e.Seq)
	}
	if len(r.events) > recentLimit && len(b.Events) > 0 {
		// Nobody asked for a while (pruning happens in above), or a catch-up runs: start
		// again from here rather than hold every document; until every projection has
		// applied this batch, statuses come from the stream.
		r.events, r.from, r.pruned = map[events.DocKey]events.DocState{}, b.Last(), 0
	}
}

// above returns the latest event per document above after, and whether that is the
// whole answer: false when tracking began above after or has let go of events above it (a
// projection reset to an older checkpoint), or when the catalog's consumer has not yet
// delivered through, a sequence this process knows the stream holds (its own publish).
func (r *recent) above(after, through uint64) (map[events.DocKey]events.DocState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started || after < r.from || after < r.pruned || r.seen < through {
		return nil, false
	}
	if after > r.pruned {
		for k, st := range r.events {
			if st.Seq <= after {
				delete(r.events, k)
			}
		}
		r.pruned = after
	}
	if len(r.events) == 0 {
		return nil, true
	}
	out := make(map[events.DocKey]events.DocState, len(r.events))
	for k, st := range r.events {
		if st.Seq > after {
			out[k] = st
		}
	}
	return out, true
}
