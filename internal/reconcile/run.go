package reconcile

import (
	"context"
	"time"

	"github.com/guide/guide/internal/backoff"
	"github.com/guide/guide/internal/ignore"
	"github.com/guide/guide/internal/watch"
)

// maxPending is how many changed paths Run collects before it gives up on them and
// rescans the whole tree instead.
const maxPending = 100_000

// Run reconciles the tree, then follows it until ctx ends: with the watcher, every change
// is published a moment after it is made; a safety rescan runs every Interval, and after
// any lost notification or failure. While NATS is away it keeps watching and retries
// with backoff; what changed meanwhile is found by the reconcile that follows.
func (x *Indexer) Run(ctx context.Context) error {
	if err := x.init(); err != nil {
		return err
	}
	defer func() {
		// What is known now spares the next run reading the stream whole.
		x.mu.Lock()
		x.saveState()
		x.mu.Unlock()
	}()
	hints, w := x.watch(ctx)
	if w == nil && x.Cookies != nil {
		x.Cookies.Close() // no watcher: nothing proves a change was seen
	}
	f := &follower{x: x, w: w, needFull: true, pending: map[string]struct{}{},
		retry: backoff.Backoff{Initial: time.Second, Max: 30 * time.Second}}
	safety := time.NewTimer(0)
	defer safety.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		err := f.publishDue(ctx, safety)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			d := f.retry.Next()
			x.log.Warn("publishing failed; retrying", "err", err, "in", d)
			x.setErr(err)
			retry.Reset(d)
		} else {
			f.retry.Reset()
			f.synced()
			x.setErr(nil)
		}
		select {
		case <-ctx.Done():
			return nil
		case b, ok := <-hints:
			if !ok {
				hints, f.needFull = nil, true // the watcher stopped: rescans only
				continue
			}
			f.cookies = append(f.cookies, b.Cookies...)
			if b.Rescan {
				f.needFull = true
				continue
			}
			f.hint(b.Paths)
			if err != nil {
				// Still failing: wait for the retry timer rather than hammer NATS.
				select {
				case <-ctx.Done():
					return nil
				case <-retry.C:
				}
			}
		case <-safety.C:
			// Also re-read the stream: another writer (a CI run, say) may have published.
			x.mu.Lock()
			x.fresh = false
			x.mu.Unlock()
			f.needFull = true
		case <-retry.C:
		}
	}
}

// watch starts the watcher, unless NoWatch, and returns the channel of its hints, which
// it closes if the watcher stops early. It returns once every folder is watched (or the
// watcher could not start), so that the first scan misses nothing changed during it: a
// file the scan reads is then already watched.
func (x *Indexer) watch(ctx context.Context) (<-chan watch.Batch, *watch.Watcher) {
	hints := make(chan watch.Batch, 4)
	if x.NoWatch {
		return hints, nil
	}
	ready, stopped := make(chan struct{}), make(chan struct{})
	w := &watch.Watcher{Root: x.root, Tree: x.tree, Skip: x.skip, Logger: x.log, Ready: ready, Cookies: x.Cookies}
	go func() {
		defer close(stopped)
		if x.Cookies != nil {
			defer x.Cookies.Close()
		}
		if err := w.Run(ctx, hints); err != nil && ctx.Err() == nil {
			x.log.Error("watcher stopped; falling back to rescans", "err", err)
			close(hints)
		}
	}()
	select {
	case <-ready:
	case <-stopped:
	case <-ctx.Done():
	}
	return hints, w
}

// follower is the state of one Run: what is waiting to be published, and the backoff
// between failed attempts.
type follower struct {
	x        *Indexer
	w        *watch.Watcher // nil without the watcher
	needFull bool           // the whole tree must be reconciled
	pending  map[string]struct{}
	retry    backoff.Backoff
	// cookies are the sync cookies the watcher delivered since the last publish: every
	// change made before them is in pending, or was published.
	cookies []string
}

// synced tells the jar, once what was waiting is published, that every change made before
// the cookies delivered so far is at or below the last sequence this indexer was acked.
func (f *follower) synced() {
	if len(f.cookies) == 0 || f.needFull || len(f.pending) > 0 {
		return
	}
	f.x.Cookies.Seen(f.cookies, f.x.acked.Load())
	f.cookies = nil
}

// publishDue reconciles what is waiting: the whole tree when needed, which then sets
// the next safety rescan, else the paths the watcher named.
func (f *follower) publishDue(ctx context.Context, safety *time.Timer) error {
	switch {
	case f.needFull:
		sum, err := f.x.Reconcile(ctx)
		if err != nil {
			return err
		}
		f.needFull, f.pending = false, map[string]struct{}{}
		if sum.Published+sum.Deleted+sum.Failed > 0 || sum.Config == "published" {
			f.x.log.Info("reconciled", "summary", sum.String())
		}
		safety.Reset(f.safetyInterval())
	case len(f.pending) > 0:
		paths := make([]string, 0, len(f.pending))
		for p := range f.pending {
			paths = append(paths, p)
		}
		if _, err := f.x.ReconcilePaths(ctx, paths); err != nil {
			return err
		}
		f.pending = map[string]struct{}{}
	}
	return nil
}

// safetyInterval is the time to the next safety rescan: shorter while the watcher is
// degraded and may miss changes.
func (f *follower) safetyInterval() time.Duration {
	interval := f.x.interval()
	if f.w != nil && f.w.Degraded() {
		interval = min(interval, 10*time.Second)
	}
	return interval
}

// hint records the paths the watcher says may have changed.
func (f *follower) hint(paths []string) {
	rules := false
	for _, p := range paths {
		if ignore.RuleFile(p) {
			rules = true // the rules changed: what is a document may have too
		}
		if p == f.x.configRel {
			f.needFull = true // the configuration is published by a full reconcile
		}
		f.pending[p] = struct{}{}
	}
	if rules {
		// Watch the folders the new rules no longer leave out before comparing the whole
		// tree: a change made in one after the comparison is then seen.
		f.needFull = true
		if err := f.x.loadIgnore(); err == nil && f.w != nil {
			f.w.Rewatch()
		}
	}
	if len(f.pending) > maxPending {
		f.needFull, f.pending = true, map[string]struct{}{}
	}
}
