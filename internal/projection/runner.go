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
	// OnProgress, when set, hears how a catch-up goes: every ProgressEvery while the
	// projections are behind the stream's end as it was when following began, and once
	// when they reach it. The progress is also logged.
	OnProgress    func(Progress)
	ProgressEvery time.Duration // default 2s
	// OnApplied, when set, runs after every projection has applied a batch (to notify
	// subscribers); it runs on the runner's goroutine, so it must be quick.
	OnApplied func(events.Batch)

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
	prog := r.newProgress(from, target)
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
		prog.applied(b)
		if r.OnApplied != nil {
			r.OnApplied(b)
		}
		if b.Pending == 0 || b.Last() >= target {
			markCaught(caught)
		}
		return nil
	})
}

// Progress is how far a catch-up has come.
type Progress struct {
	From, Applied, Target uint64 // stream sequences: resumed after, applied up to, to reach
	Events                uint64 // events applied since following began
	Elapsed               time.Duration
	Done                  bool
}

// Rate is the events applied per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Events) / p.Elapsed.Seconds()
}

// progress reports a catch-up at most every ProgressEvery, and when it is done.
type progress struct {
	r     *Runner
	p     Progress
	start time.Time
	last  time.Time
	done  bool
}

func (r *Runner) newProgress(from, target uint64) *progress {
	now := time.Now()
	return &progress{r: r, p: Progress{From: from, Applied: from, Target: target}, start: now, last: now, done: from >= target}
}

func (g *progress) applied(b events.Batch) {
	if g.done {
		return
	}
	g.p.Applied = b.Last()
	g.p.Events += uint64(len(b.Events))
	now := time.Now()
	g.p.Elapsed = now.Sub(g.start)
	g.p.Done = g.p.Applied >= g.p.Target || b.Pending == 0
	every := g.r.ProgressEvery
	if every == 0 {
		every = 2 * time.Second
	}
	if !g.p.Done && now.Sub(g.last) < every {
		return
	}
	g.last, g.done = now, g.p.Done
	if g.p.Done {
		g.r.Logger.Info("caught up with the stream", "applied", g.p.Applied, "events", g.p.Events,
			"in", g.p.Elapsed.Round(time.Millisecond), "events_per_s", int(g.p.Rate()))
	} else {
		g.r.Logger.Info("catching up with the stream", "applied", g.p.Applied, "target", g.p.Target,
			"events", g.p.Events, "events_per_s", int(g.p.Rate()))
	}
	if g.r.OnProgress != nil {
		g.r.OnProgress(g.p)
	}
}

func markCaught(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}
