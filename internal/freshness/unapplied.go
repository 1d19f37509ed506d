package freshness

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/guide/guide/internal/events"
)

// unappliedWait bounds how long Unapplied reads the stream, waiting for its turn included.
const unappliedWait = 2 * time.Second

// Unapplied returns the latest event per document that the stream holds above what every
// projection has applied: those documents are being processed. through is the last
// sequence the caller published itself (a session's attach), which the answer must cover.
// Nothing is unapplied as far as the tracker can tell while it has no stream, or when the
// stream cannot be read: answers then come from the projections, as every tool's do. The
// map is shared between calls: read it, never change it.
//
// What the process knows already is the answer when the catalog's consumer has nothing
// more pending: no round trip to NATS. Otherwise it reads the stream, taking turns with
// the other callers on the process's one reader.
func (t *Tracker) Unapplied(ctx context.Context, through uint64) map[events.DocKey]events.DocState {
	stream, runner := t.connection()
	if stream == nil {
		return nil
	}
	if runner != nil {
		if lag, at := runner.Lag(t.Catalog); !at.IsZero() && lag == 0 {
			if ev, ok := t.recent.above(t.Applied(), through); ok {
				return ev
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, unappliedWait)
	defer cancel()
	ev, err := t.unapplied.read(ctx, stream, t.Project, t.Applied(), t.logger())
	if err != nil {
		// The stream is away: answer from the projections, as every tool does.
		t.logger().Debug("cannot read unapplied events", "err", err)
		return nil
	}
	return ev
}

// unapplied is the process's one reader of unapplied events. Reading takes a consumer on
// the server, which has a limit on them: calls take turns, so that however many arrive at
// once the process holds at most one such consumer; a call whose context ends while it
// waits for its turn gives up (its statuses then come from the projections). The answer
// is kept with the stream sequence it covers, and built on: a call whose stream end it
// covers takes it (less what the projections applied since), and a call that needs more
// reads only the events after it. Under churn with many sessions a call costs a read of
// the few events published since the one before, and the calls that queued behind a read
// find their answer in it.
type unapplied struct {
	// turn holds a token while a call reads (a lock a waiting call can give up on when
	// its context ends): see take.
	turn     chan struct{}
	turnOnce sync.Once
	// Held by the turn:
	after  uint64                            // the checkpoint the answer holds nothing at or below
	upTo   uint64                            // the stream sequence the answer covers
	events map[events.DocKey]events.DocState // nil until a first read
}

// unappliedLimit bounds the events one call reads: during a long catch-up each call reads
// the next ones, and the statuses of documents beyond show as applied until then.
const unappliedLimit = 2000

// read returns the latest unapplied event per document above after. The map is shared
// between calls: read it, never change it.
func (u *unapplied) read(ctx context.Context, stream *events.Stream, project string, after uint64, logger *slog.Logger) (map[events.DocKey]events.DocState, error) {
	info, err := stream.Info(ctx)
	if err != nil {
		return nil, err
	}
	last := info.State.LastSeq
	if last <= after {
		return nil, nil
	}
	if err := u.take(ctx); err != nil {
		return nil, err
	}
	defer u.release()
	// Build on the answer when it was read for this checkpoint or an earlier one (a
	// projection that was reset starts again from nothing) and reaches above it.
	from, base := after, map[events.DocKey]events.DocState(nil)
	if u.events != nil && after >= u.after && u.upTo > after {
		from, base = u.upTo, u.events
	}
	if from >= last {
		if after > u.after {
			u.events, u.after = without(u.events, after), after
		}
		return u.events, nil
	}
	ev, upTo, complete, err := stream.Unapplied(ctx, project, from, unappliedLimit)
	if err != nil {
		return nil, err
	}
	if !complete {
		logger.Debug("more unapplied events than read; statuses of the rest show as applied until a later call reads them",
			"read_up_to", upTo, "stream_last", last)
	}
	merged := without(base, after)
	maps.Copy(merged, ev)
	u.events, u.after, u.upTo = merged, after, upTo
	return merged, nil
}

// take waits for the reader's turn, as long as ctx allows: a call gives up when its budget
// ends, however long the reads ahead of it take. Each take that succeeds is followed by
// one release.
func (u *unapplied) take(ctx context.Context) error {
	u.turnOnce.Do(func() { u.turn = make(chan struct{}, 1) })
	select {
	case u.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release hands the turn to the next call.
func (u *unapplied) release() { <-u.turn }

// without returns a new map of the events in ev above the sequence after.
func without(ev map[events.DocKey]events.DocState, after uint64) map[events.DocKey]events.DocState {
	out := make(map[events.DocKey]events.DocState, len(ev))
	for k, st := range ev {
		if st.Seq > after {
			out[k] = st
		}
	}
	return out
}
