// Package freshness is the one place that knows how far a query process's projections have
// applied the event stream: the sequence every projection has applied and a signal when it
// moves (attach and detach wait on it), how far behind the stream they are and whether they
// have caught up (the status resource, /healthz, the web page's status line, metrics), and
// which events the stream holds that not every projection has applied yet (a document's
// processing status in list, focus, get_summary and the web page).
//
// The files: tracker.go the Tracker and the applied sequence; status.go the status and
// health it reports; unapplied.go the events not applied yet, read from the stream; and
// recent.go what the process knows of them without asking the stream.
package freshness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/projection"
)

// Tracker follows the projections of one query process. Set the fields, then Connect it
// once the process reaches NATS; until then it reports what the catalog says of itself.
type Tracker struct {
	Project string
	Catalog *projection.Catalog
	Index   *index.Index // the full-text index, reported on beside the catalog; nil: none
	Logger  *slog.Logger

	mu     sync.Mutex // guards stream, runner and writers, which are set while serving
	stream *events.Stream
	runner *projection.Runner
	// writers report what else cannot write now (the stream's store, the indexer).
	writers []func() error

	recent    recent
	unapplied unapplied
}

// Connect hands the tracker the stream and the runner that feeds the projections from it
// (either may be nil: a process that reads the stream and has no runner yet). When the
// runner's first projection is the catalog, the tracker hears each batch before the
// catalog applies it (Runner.BeforeApply), so Connect must precede the runner's Run.
func (t *Tracker) Connect(stream *events.Stream, runner *projection.Runner) {
	t.mu.Lock()
	t.stream, t.runner = stream, runner
	t.mu.Unlock()
	if runner != nil && t.Catalog != nil && len(runner.Projections) > 0 && runner.Projections[0] == projection.Projection(t.Catalog) {
		t.recent.start(t.Catalog.Checkpoint())
		runner.BeforeApply = t.recent.note
	}
}

// Writer adds a part whose failures to write the status reports (WriteError) and that
// makes the process not ready: err returns why it cannot write now, nil while it can.
func (t *Tracker) Writer(err func() error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.writers = append(t.writers, err)
}

// WriteError says what cannot be written now and why, "" when everything can: the
// projections, the stream's store, the indexer (Status.WriteError). It asks nothing of
// NATS, so that every answer may carry it.
func (t *Tracker) WriteError() string {
	t.mu.Lock()
	runner, writers := t.runner, t.writers
	t.mu.Unlock()
	var errs []string
	add := func(err error) {
		if err != nil && !slices.Contains(errs, err.Error()) {
			errs = append(errs, err.Error())
		}
	}
	if runner != nil {
		var ae *projection.ApplyError
		if err := runner.Err(); errors.As(err, &ae) {
			add(err)
		}
	}
	if t.Index != nil {
		if err := t.Index.Err(); err != nil {
			add(fmt.Errorf("index: %w", err))
		}
	}
	for _, w := range writers {
		add(w())
	}
	return strings.Join(errs, "; ")
}

func (t *Tracker) connection() (*events.Stream, *projection.Runner) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stream, t.runner
}

func (t *Tracker) logger() *slog.Logger {
	if t.Logger == nil {
		return slog.Default()
	}
	return t.Logger
}

// Applied is the sequence every projection has applied (Runner.Applied): an event at or
// below it is visible to every query. Before the runner is there, the catalog's checkpoint.
func (t *Tracker) Applied() uint64 {
	if _, runner := t.connection(); runner != nil {
		return runner.Applied()
	}
	return t.Catalog.Checkpoint()
}

// AppliedChange is closed when a projection next applies a batch (Runner.AppliedChange);
// nil before the runner is there. Take it before reading Applied, so that no batch falls
// between the two.
func (t *Tracker) AppliedChange() <-chan struct{} {
	if _, runner := t.connection(); runner != nil {
		return runner.AppliedChange()
	}
	return nil
}

// pollApplied is how often a wait for the projections checks again when nothing wakes it
// (no runner yet, or one that does not say when it applies a batch).
const pollApplied = 2 * time.Millisecond

// WaitApplied waits until every projection has applied seq, or ctx ends: woken by each
// batch a projection applies, so that it answers as soon as the last one has. It says
// whether they have.
func (t *Tracker) WaitApplied(ctx context.Context, seq uint64) bool {
	return t.wait(ctx, seq, t.Applied)
}

// WaitCatalog waits until the catalog has applied seq, or ctx ends, as WaitApplied does
// for every projection: what a call that reads only the catalog (view, tree) waits for.
func (t *Tracker) WaitCatalog(ctx context.Context, seq uint64) bool {
	return t.wait(ctx, seq, t.Catalog.Checkpoint)
}

// wait waits until applied reaches seq, or ctx ends.
func (t *Tracker) wait(ctx context.Context, seq uint64, applied func() uint64) bool {
	var poll *time.Timer
	for {
		change := t.AppliedChange() // before reading the sequence: no batch falls between
		if applied() >= seq {
			return true
		}
		var tick <-chan time.Time
		if change == nil {
			if poll == nil {
				poll = time.NewTimer(pollApplied)
				defer poll.Stop()
			} else {
				poll.Reset(pollApplied)
			}
			tick = poll.C
		}
		select {
		case <-change:
		case <-tick:
		case <-ctx.Done():
			return false
		}
	}
}
