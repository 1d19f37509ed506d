package freshness

import (
	"context"
	"errors"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
)

// Status reports how fresh the projections are: what the status resource (guide://_status)
// and the web page's status line show.
func (t *Tracker) Status(ctx context.Context) query.Status {
	st, _ := t.status(ctx)
	return st
}

// status is the status, and whether the projections follow this stream at all (see
// compare): a process may be ready while it lags a little.
func (t *Tracker) status(ctx context.Context) (st query.Status, following bool) {
	stream, runner := t.connection()
	_ = t.Catalog.Read(func(snap *projection.Snapshot) error {
		cs := snap.State()
		st = query.Status{Project: t.Project, Documents: snap.Len(), AppliedSeq: cs.Seq,
			InitialScanDone: cs.Scan != nil, LastScan: cs.Scan}
		return nil
	})
	if runner != nil {
		var at time.Time
		if st.Lag, at = runner.Lag(t.Catalog); !at.IsZero() {
			st.AppliedAt = &at
		}
	}
	if t.Index != nil {
		is := t.Index.State()
		if runner != nil {
			var at time.Time
			if is.Pending, at = runner.Lag(t.Index); !at.IsZero() {
				is.AppliedAt = &at
			}
		}
		st.Index = &is
	}
	st.Repairs = t.Catalog.Repairs()
	if t.Index != nil {
		st.Repairs = append(st.Repairs, t.Index.Repairs()...)
	}
	if stream == nil {
		st.StreamError = "not connected to NATS yet"
	}
	if runner != nil {
		var ae *projection.ApplyError
		if err := runner.Err(); err != nil && !errors.As(err, &ae) {
			st.StreamError = err.Error()
		}
	}
	st.WriteError = t.WriteError()
	if stream != nil {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if info, err := stream.Info(ctx); err == nil {
			st.StreamLastSeq = info.State.LastSeq
			if runner != nil {
				// Every projection counts: the catalog answers view, the index search.
				f := compare(runner, events.ID(info), info.State.LastSeq)
				st.Lag, st.CaughtUp, following = f.lag, f.caughtUp, f.following
			}
		} else if st.StreamError == "" {
			st.StreamError = err.Error()
		}
	}
	if st.StreamError != "" || st.WriteError != "" {
		st.CaughtUp, following = false, false
	}
	return st, following
}

// Health is what /healthz shows: the status, whether the process takes traffic, and why not.
type Health struct {
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
	query.Status
}

// Health judges the status: a query process is ready once it has caught up with the
// stream, applied a complete scan, can read the stream, and lags by at most maxLag events.
func (t *Tracker) Health(ctx context.Context, maxLag uint64) Health {
	st, following := t.status(ctx)
	h := Health{Ready: true, Status: st}
	_, runner := t.connection()
	switch {
	case runner == nil:
		h.Ready, h.Reason = false, "not connected to NATS yet"
	case st.WriteError != "":
		h.Ready, h.Reason = false, "cannot write: "+st.WriteError
	case !following && st.StreamError == "":
		h.Ready, h.Reason = false, "catching up with the stream"
	case !st.InitialScanDone:
		h.Ready, h.Reason = false, "no complete scan of the project yet"
	case st.StreamError != "":
		h.Ready, h.Reason = false, "cannot read the stream: "+st.StreamError
	case st.Lag > maxLag:
		h.Ready, h.Reason = false, "behind the stream"
	}
	return h
}

// runnerLag is how far every projection is behind the stream as it is now.
type runnerLag struct {
	// lag is the most events any projection has not applied: its consumer's count of
	// what was pending after its last batch, bounded by the stream's end.
	lag uint64
	// following is true when the runner has caught up once, follows without error, and
	// every projection was built from this stream (not one deleted and created again
	// under the same name).
	following bool
	// caughtUp is following with no lag: no projection lags, and none is behind another,
	// so a document view shows is one search finds.
	caughtUp bool
}

// compare compares every projection of the runner with the stream as Info last described
// it: its identity (see events.ID) and its last sequence.
func compare(r *projection.Runner, streamID string, lastSeq uint64) runnerLag {
	var f runnerLag
	caught := len(r.Projections) > 0 && r.Err() == nil
	select {
	case <-r.CaughtUp():
	default:
		caught = false
	}
	seqs := make([]uint64, len(r.Projections))
	var high uint64
	for i, p := range r.Projections {
		seqs[i] = p.Checkpoint()
		high = max(high, seqs[i])
	}
	for i, p := range r.Projections {
		seq := seqs[i]
		behind := lastSeq - min(lastSeq, seq)
		pending, _ := r.Lag(p)
		if r.Err() != nil {
			// Not following: the last pending count says nothing of what came since.
			// Count every event after the checkpoint (an upper bound when the stream
			// holds other projects too).
			pending = behind
		}
		// The consumer's pending count is as of its last delivery, and goes stale when
		// the consumer is recreated: nothing can be pending beyond the end of the stream.
		f.lag = max(f.lag, min(pending, behind))
		// A projection can have received everything (its consumer counts nothing
		// pending) and not applied it yet: what another projection applied beyond it is
		// still to come (sequences: an upper bound when the stream holds other projects).
		f.lag = max(f.lag, high-seq)
		id, project := p.Identity()
		if id != streamID || project != r.Project || seq > lastSeq {
			caught = false
		}
	}
	f.following = caught
	f.caughtUp = caught && f.lag == 0
	return f
}
