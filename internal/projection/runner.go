package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guide/guide/internal/backoff"
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
}

// A Preparer is a projection that can do the part of a batch's work that depends on the
// batch alone (parsing, analysis) before the batches ahead of it are applied: the runner
// prepares the next batch on the goroutine that reads the stream while the one before it
// is applied on another, so that a projection whose Apply is one core's work at a time
// (the full-text index builds each batch's segment on one) keeps a second core busy.
// Apply(b) must be Prepare(b)().
type Preparer interface {
	Projection
	// Prepare returns the rest of b's Apply. It runs while the batch before b is being
	// applied, so it reads nothing Apply changes; what it returns runs after that batch,
	// and is dropped unrun when following stops before it.
	Prepare(events.Batch) (apply func() error)
}

// HistoryKeeper is a projection that keeps a copy of the stream's history of each
// document (the catalog's change log), as much of it as the stream keeps: the runner tells
// it how many events of each document that is (MaxMsgsPerSubject) each time it starts
// following the stream.
type HistoryKeeper interface {
	KeepHistory(perDocument int64) error
}

// OwnFollower is a projection that folds only its replica's own partitions' events and
// the control events (a replica's search index): on a stream of P > 1 it follows those
// alone (events.Stream.FollowOwn), never reading another partition's event, and its
// checkpoint passes the others as the first projection (the catalog, which follows every
// event) applies them.
type OwnFollower interface {
	FollowsOwn() bool
}

// Damageable is a projection that may find its files damaged while in use: Damaged is
// closed then, and until the projection is Reset, its Identity names no stream.
type Damageable interface {
	Damaged() <-chan struct{}
}

// Runner feeds each projection from its own consumer of the stream, starting after its
// own checkpoint, so that a slow projection (the full-text index) never holds back a fast
// one (the catalog, which answers view and tree).
type Runner struct {
	Stream      *events.Stream
	Project     string
	Projections []Projection
	MaxBatch    int // default 1000
	// MaxBatchBytes bounds a batch's bytes of content (events.Budget): what a projection
	// holds of a batch, and what it makes of it, grows with them. Default
	// DefaultMaxBatchBytes.
	MaxBatchBytes int
	Logger        *slog.Logger
	// OnProgress, when set, hears how a catch-up goes: every ProgressEvery while the
	// projections are behind the stream's end as it was when following began, and once
	// when they reach it. The progress is also logged.
	OnProgress    func(Progress)
	ProgressEvery time.Duration // default 2s
	// OnApplied, when set, runs after every projection has applied a batch (to notify
	// subscribers); it runs on the runner's goroutine, so it must be quick.
	OnApplied func(events.Batch)
	// BeforeApply, when set, runs before the first projection (the catalog) applies a
	// batch, on the runner's goroutine: whoever tracks what is not yet applied everywhere
	// knows of an event before any query can see it in the catalog.
	BeforeApply func(events.Batch)

	mu      sync.Mutex
	caught  chan struct{} // closed once every projection has caught up with the stream
	errs    map[string]error
	from    map[string]uint64
	lags    map[string]lag
	pending int // projections not caught up yet

	appliedMu sync.Mutex
	appliedCh chan struct{} // closed at the next batch applied; nil while nobody waits

	// unfiltered is set once the catalog has met an event of this replica's partitions
	// that a filtered consumer does not deliver (events.Stream.Unfiltered): an OwnFollower
	// then follows every event. stopOwn stops those following their own only.
	unfiltered atomic.Bool
	ownMu      sync.Mutex
	stopOwn    map[string]context.CancelFunc
}

// lag is how far behind the stream a projection was after its last applied batch.
type lag struct {
	pending uint64
	at      time.Time
}

// Lag is how far behind the stream projection p was after its last applied batch, as its
// consumer counted (events not yet delivered), and when it applied that batch; the zero
// time before its first batch.
func (r *Runner) Lag(p Projection) (pending uint64, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lags[p.Name()]
	return l.pending, l.at
}

func (r *Runner) setLag(p Projection, pending uint64, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lags[p.Name()] = lag{pending: pending, at: at}
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

// AppliedChange returns a channel closed when a projection next applies a batch: whoever
// waits for Applied to reach a sequence checks it again then, rather than polling. Take
// the channel before reading Applied, so that no batch falls between the two.
func (r *Runner) AppliedChange() <-chan struct{} {
	r.appliedMu.Lock()
	defer r.appliedMu.Unlock()
	if r.appliedCh == nil {
		r.appliedCh = make(chan struct{})
	}
	return r.appliedCh
}

// applied wakes whoever waits on AppliedChange.
func (r *Runner) applied() {
	r.appliedMu.Lock()
	defer r.appliedMu.Unlock()
	if r.appliedCh != nil {
		close(r.appliedCh)
		r.appliedCh = nil
	}
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

// Err is the last error that interrupted following the stream, nil while healthy: an
// *ApplyError when a projection could not apply a batch (could not write its files).
func (r *Runner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.Projections {
		if err := r.errs[p.Name()]; err != nil {
			if _, ok := err.(*ApplyError); ok {
				return err
			}
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
	}
	return nil
}

// ApplyError is a projection's failure to apply a batch — to write its files, mostly (a
// full disk) — as opposed to a failure to read the stream. The runner tries again with
// backoff, from the projection's checkpoint.
type ApplyError struct {
	Projection string
	Err        error
}

func (e *ApplyError) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Projection+":") {
		return msg
	}
	return e.Projection + ": " + msg
}

func (e *ApplyError) Unwrap() error { return e.Err }

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
	if r.MaxBatchBytes == 0 {
		r.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	caught := r.caughtCh()
	r.mu.Lock()
	r.errs, r.from, r.pending = map[string]error{}, map[string]uint64{}, len(r.Projections)
	if r.lags == nil {
		r.lags = map[string]lag{}
	}
	r.mu.Unlock()
	if len(r.Projections) == 0 {
		markCaught(caught)
	}
	for _, p := range r.Projections {
		if u, ok := p.(interface{ UseStream(*events.Stream) }); ok {
			u.UseStream(r.Stream) // to read damaged content again from
		}
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
	retry := backoff.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
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
		r.Logger.Warn("following the stream failed; retrying", "projection", p.Name(), "err", err)
		if retry.Wait(ctx) != nil {
			return nil
		}
	}
}

func (r *Runner) follow(ctx context.Context, p Projection, caughtUp func()) error {
	err := r.followOnce(ctx, p, caughtUp)
	if d, ok := p.(Damageable); ok && ctx.Err() == nil {
		select {
		case <-d.Damaged():
			return fmt.Errorf("%s: its files are damaged; rebuilding it from the stream", p.Name())
		default:
		}
	}
	return err
}

func (r *Runner) followOnce(ctx context.Context, p Projection, caughtUp func()) error {
	info, err := r.Stream.Info(ctx)
	if err != nil {
		return err
	}
	id := events.ID(info)
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
	if k, ok := p.(HistoryKeeper); ok {
		if err := k.KeepHistory(info.Config.MaxMsgsPerSubject); err != nil {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
	}
	if d, ok := p.(Damageable); ok {
		// A projection found damaged while in use stops following, to be reset (its
		// Identity says so) and rebuilt on the next try.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		damaged := d.Damaged()
		go func() {
			select {
			case <-damaged:
				cancel()
			case <-ctx.Done():
			}
		}()
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
	prog := r.newProgress(from, target)
	applied := func(b events.Batch) {
		r.applied()
		r.setLag(p, b.Pending, time.Now().UTC())
		r.setErr(p, nil)
		prog.applied(b)
		if r.OnApplied != nil && p == r.Projections[0] {
			r.OnApplied(b) // subscriptions read the catalog: tell them when it has the batch
		}
		if b.Pending == 0 || b.Last() >= target {
			caughtUp()
		}
	}
	if pp, ok := p.(Preparer); ok {
		return r.followPrepared(ctx, pp, from, target, applied)
	}
	return r.followOf(ctx, p, from, target, func(b events.Batch) error {
		r.beforeApply(p, b)
		if err := p.Apply(b); err != nil {
			return &ApplyError{Projection: p.Name(), Err: err}
		}
		applied(b)
		return nil
	})
}

// DefaultMaxBatchBytes is the content a batch holds at most (but for one larger file).
// The full-text index holds about two batches in flight (one prepared while the one
// before is built into its segment), each analyzed into some fifteen to twenty times its
// text's size in terms and positions, and the Go heap grows to twice what it holds
// before it collects: a thousand source files of 11 KB each made a peak of 1.4 GB. Two
// megabytes of text bound the analysis in flight to under a hundred megabytes, whatever
// the files' sizes, and still make segments of hundreds of documents.
const DefaultMaxBatchBytes = 2 << 20

// budget is the bound of the runner's batches.
func (r *Runner) budget() events.Budget {
	return events.Budget{Events: r.MaxBatch, Bytes: r.MaxBatchBytes}
}

// followPrepared follows the stream for a Preparer: the stream's goroutine prepares each
// batch and hands it to an applying goroutine, one at a time, so that batch N+1 is
// prepared while batch N is applied. A failed Apply stops the stream; batches prepared
// and not applied are dropped, to be delivered again after the checkpoint.
func (r *Runner) followPrepared(ctx context.Context, p Preparer, from, end uint64, applied func(events.Batch)) error {
	type work struct {
		b     events.Batch
		apply func() error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan work) // unbuffered: one batch prepared ahead of the one applying
	var applyErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		for w := range next {
			r.beforeApply(p, w.b)
			if err := w.apply(); err != nil {
				applyErr = &ApplyError{Projection: p.Name(), Err: err}
				cancel()
				return
			}
			applied(w.b)
		}
	})
	err := r.followOf(ctx, p, from, end, func(b events.Batch) error {
		w := work{b, p.Prepare(b)}
		select {
		case next <- w:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(next)
	wg.Wait()
	if applyErr != nil {
		return applyErr
	}
	return err
}

// beforeApply runs before p applies b: BeforeApply, and the check for events an
// OwnFollower would not be delivered, for the first projection (the catalog).
func (r *Runner) beforeApply(p Projection, b events.Batch) {
	if p != r.Projections[0] {
		return
	}
	if r.BeforeApply != nil {
		r.BeforeApply(b)
	}
	if !r.Stream.CanFollowOwn() || r.unfiltered.Load() {
		return
	}
	for i := range b.Events {
		if r.Stream.Unfiltered(&b.Events[i]) {
			// Before the catalog's checkpoint passes it, so that no OwnFollower passes it
			// unread (ownReach).
			r.unfiltered.Store(true)
			r.Logger.Info("an event of this replica's partitions on a subject without its partition (an older indexer's): the search index follows every event")
			r.ownMu.Lock()
			for _, stop := range r.stopOwn {
				stop()
			}
			r.ownMu.Unlock()
			return
		}
	}
}

// errCaughtUpWithCatalog ends following every event for an OwnFollower that has reached
// the catalog's checkpoint (followOf).
var errCaughtUpWithCatalog = errors.New("caught up with the catalog")

// followOf follows the stream for p: its own partitions' events alone for an OwnFollower
// that may (events.Stream.FollowOwn), else every event. An OwnFollower behind the catalog
// when it starts first follows every event up to the catalog's checkpoint: what lies
// between was not read by this run's catalog, so it may hold an event FollowOwn would not
// deliver (an older indexer's, events.Stream.Unfiltered).
func (r *Runner) followOf(ctx context.Context, p Projection, from, end uint64, apply func(events.Batch) error) error {
	o, ok := p.(OwnFollower)
	if !ok || !o.FollowsOwn() || p == r.Projections[0] || !r.Stream.CanFollowOwn() || r.unfiltered.Load() {
		return r.Stream.Follow(ctx, r.Project, from, r.budget(), apply)
	}
	if upTo := r.Projections[0].Checkpoint(); from < upTo {
		err := r.Stream.Follow(ctx, r.Project, from, r.budget(), func(b events.Batch) error {
			if err := apply(b); err != nil {
				return err
			}
			from = b.Last()
			if from >= upTo {
				return errCaughtUpWithCatalog
			}
			return nil
		})
		if !errors.Is(err, errCaughtUpWithCatalog) {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.ownMu.Lock()
	if r.stopOwn == nil {
		r.stopOwn = map[string]context.CancelFunc{}
	}
	r.stopOwn[p.Name()] = cancel
	r.ownMu.Unlock()
	if r.unfiltered.Load() {
		return fmt.Errorf("%s: follows every event from now on", p.Name())
	}
	return r.Stream.FollowOwn(ctx, r.Project, from, r.budget(), r.ownReach(end), apply)
}

// ownReach is what an OwnFollower knows of the stream beyond its own events: the
// catalog's checkpoint, none once an event it would not be delivered was met.
func (r *Runner) ownReach(end uint64) events.Reach {
	return events.Reach{
		End: end,
		Seq: func() uint64 {
			c := r.Projections[0].Checkpoint()
			if r.unfiltered.Load() {
				return 0
			}
			return c
		},
		Changed: r.AppliedChange,
	}
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
