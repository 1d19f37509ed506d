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

// Runner feeds each projection from its own consumer of the stream, starting after its
// own checkpoint, so that a slow projection (the full-text index) never holds back a fast
// one (the catalog, which answers view and tree).
type Runner struct {
	Stream      *events.Stream
	Project     string
	Projections []Projection
	MaxBatch    int // default 1000
	Logger      *slog.Logger

	mu      sync.Mutex
	caught  chan struct{} // closed once every projection has caught up with the stream
	errs    map[string]error
	from    map[string]uint64
	pending int // projections not caught up yet
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

// ResumedFrom is the checkpoint the first projection (the catalog) last resumed after: 0
// when it replayed the stream from the start.
func (r *Runner) ResumedFrom() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.Projections) == 0 {
		return 0
	}
	return r.from[r.Projections[0].Name()]
}

// Err is the last error that interrupted following the stream, nil while healthy.
func (r *Runner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.Projections {
		if err := r.errs[p.Name()]; err != nil {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
	}
	return nil
}

func (r *Runner) setErr(p Projection, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs[p.Name()] = err
}

// Run follows the stream until ctx ends, one consumer per projection, each reconnecting
// with backoff after a failure. An event of an unknown schema stops a projection for good:
// the error says which.
func (r *Runner) Run(ctx context.Context) error {
	if r.MaxBatch == 0 {
		r.MaxBatch = 1000
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	caught := r.caughtCh()
	r.mu.Lock()
	r.errs, r.from, r.pending = map[string]error{}, map[string]uint64{}, len(r.Projections)
	r.mu.Unlock()
	if len(r.Projections) == 0 {
		markCaught(caught)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(r.Projections))
	for _, p := range r.Projections {
		wg.Go(func() { errs <- r.runOne(ctx, p, caught) })
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

func (r *Runner) runOne(ctx context.Context, p Projection, caught chan struct{}) error {
	backoff := 100 * time.Millisecond
	once := &sync.Once{}
	done := func() {
		once.Do(func() {
			r.mu.Lock()
			r.pending--
			last := r.pending == 0
			r.mu.Unlock()
			if last {
				markCaught(caught)
			}
		})
	}
	for {
		err := r.follow(ctx, p, done)
		if ctx.Err() != nil {
			return nil
		}
		r.setErr(p, err)
		if errors.Is(err, events.ErrUnknownSchema) {
			r.Logger.Error("stopped following the stream: an event of an unknown schema version; upgrade this program",
				"projection", p.Name(), "err", err)
			return err
		}
		r.Logger.Warn("following the stream failed; retrying", "projection", p.Name(), "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (r *Runner) follow(ctx context.Context, p Projection, caughtUp func()) error {
	info, err := r.Stream.Info(ctx)
	if err != nil {
		return err
	}
	id := StreamID(info.Config.Name, info.Created)
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
	from := p.Checkpoint()
	target := info.State.LastSeq
	r.mu.Lock()
	r.from[p.Name()] = from
	r.mu.Unlock()
	r.Logger.Info("following the stream", "projection", p.Name(), "project", r.Project, "from", from+1, "stream_last", target)
	if from >= target {
		caughtUp()
	}
	return r.Stream.Follow(ctx, r.Project, from, r.MaxBatch, func(b events.Batch) error {
		if err := p.Apply(b); err != nil {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
		p.SetLag(b.Pending, time.Now())
		r.setErr(p, nil)
		if b.Pending == 0 || b.Last() >= target {
			caughtUp()
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
