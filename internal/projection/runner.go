package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/guide/guide/internal/events"
)

// Projection is a read model folded from the stream.
type Projection interface {
	Name() string
	// Checkpoint is the sequence of the last event applied.
	Checkpoint() uint64
	// Identity is the stream and project the projection was built from ("" when new).
	Identity() (streamID, project string)
	// Reset empties the projection, to be rebuilt from the stream st names.
	Reset(st State) error
	// Apply folds a batch in, skipping events at or below the checkpoint.
	Apply(events.Batch) error
	// SetLag records the consumer's lag after the last applied batch.
	SetLag(pending uint64, at time.Time)
}

// Runner feeds every projection from one consumer of the stream, starting after the
// lowest checkpoint; each projection skips what it already has.
type Runner struct {
	Stream      *events.Stream
	Project     string
	Projections []Projection
	MaxBatch    int // default 1000
	Logger      *slog.Logger

	mu      sync.Mutex
	caught  chan struct{} // closed once the projections have caught up with the stream
	lastErr error
	from    uint64 // the checkpoint the last (re)start resumed after
}

// ResumedFrom is the checkpoint the runner last resumed after: 0 when it replayed the
// stream from the start.
func (r *Runner) ResumedFrom() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.from
}

// Applied is the sequence every projection has applied: the lowest checkpoint. An event at
// or below it is visible to every query; one above it is still being processed.
func (r *Runner) Applied() uint64 {
	var low uint64
	for i, p := range r.Projections {
		if c := p.Checkpoint(); i == 0 || c < low {
			low = c
		}
	}
	return low
}

// StreamID identifies a stream incarnation: a stream deleted and created again under the
// same name is a different stream, and projections built from the old one are discarded.
func StreamID(name string, created time.Time) string {
	return name + "@" + strconv.FormatInt(created.UnixNano(), 10)
}

// CaughtUp is closed once every projection has applied everything the stream held when
// the runner started (or later).
func (r *Runner) CaughtUp() <-chan struct{} { return r.caughtCh() }

func (r *Runner) caughtCh() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.caught == nil {
		r.caught = make(chan struct{})
	}
	return r.caught
}

// Err is the last error that interrupted following the stream, nil while healthy.
func (r *Runner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// Run follows the stream until ctx ends, reconnecting with backoff after a failure.
// An event of an unknown schema stops it for good: the error says which.
func (r *Runner) Run(ctx context.Context) error {
	if r.MaxBatch == 0 {
		r.MaxBatch = 1000
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	caught := r.caughtCh()
	backoff := 100 * time.Millisecond
	for {
		err := r.follow(ctx, caught)
		if ctx.Err() != nil {
			return nil
		}
		r.mu.Lock()
		r.lastErr = err
		r.mu.Unlock()
		if errors.Is(err, events.ErrUnknownSchema) {
			r.Logger.Error("stopped following the stream: an event of an unknown schema version; upgrade this program", "err", err)
			return err
		}
		r.Logger.Warn("following the stream failed; retrying", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (r *Runner) follow(ctx context.Context, caught chan struct{}) error {
	info, err := r.Stream.Info(ctx)
	if err != nil {
		return err
	}
	id := StreamID(info.Config.Name, info.Created)
	var from uint64
	for i, p := range r.Projections {
		sid, project := p.Identity()
		if sid != id || project != r.Project || p.Checkpoint() > info.State.LastSeq {
			if sid != "" {
				r.Logger.Info("projection was built from another stream or project; rebuilding",
					"projection", p.Name(), "was", sid+"/"+project, "now", id+"/"+r.Project)
			}
			if err := p.Reset(State{StreamID: id, Project: r.Project}); err != nil {
				return fmt.Errorf("reset %s: %w", p.Name(), err)
			}
		}
		if c := p.Checkpoint(); i == 0 || c < from {
			from = c
		}
	}
	target := info.State.LastSeq
	r.mu.Lock()
	r.from = from
	r.mu.Unlock()
	r.Logger.Info("following the stream", "project", r.Project, "from", from+1, "stream_last", target)
	if from >= target {
		markCaught(caught)
	}
	return r.Stream.Follow(ctx, r.Project, from, r.MaxBatch, func(b events.Batch) error {
		for _, p := range r.Projections {
			if err := p.Apply(b); err != nil {
				return fmt.Errorf("%s: %w", p.Name(), err)
			}
			p.SetLag(b.Pending, time.Now())
		}
		r.mu.Lock()
		r.lastErr = nil
		r.mu.Unlock()
		if b.Pending == 0 || b.Last() >= target {
			markCaught(caught)
		}
		return nil
	})
}

func markCaught(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}
