// Package watch turns file-system notifications under a root into batches of paths that
// may have changed. Notifications are hints, not facts: the consumer compares each path
// with what it knows. When the kernel drops notifications (a queue overflow, a watch limit),
// the batch asks for a full rescan instead.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Batch is what the watcher delivers: paths (relative, slash-separated) that may have
// changed, or a request to rescan everything.
type Batch struct {
	Paths  []string
	Rescan bool   // notifications were lost: compare the whole tree
	Reason string // why Rescan is set
}

// Watcher watches every folder of a tree. Set the fields, then call Run.
type Watcher struct {
	Root string
	// Skip reports folders and files to leave out (relative slash paths).
	Skip func(rel string, dir bool) bool
	// Settle is the quiet time after the last notification before a batch is delivered,
	// so that an editor's burst of writes is one change. Default 20ms.
	Settle time.Duration
	// MaxDelay bounds how long a change waits under continuous churn. Default 200ms.
	MaxDelay time.Duration
	// MaxPending bounds the paths held for one batch; beyond it the batch becomes a rescan,
	// so that memory stays bounded. Default 100,000.
	MaxPending int
	Logger     *slog.Logger

	root string
	fw   *fsnotify.Watcher
	// degraded is set when a watch could not be added: the consumer should rescan often.
	degraded atomic.Bool
}

// ErrWatchLimit is reported when the kernel refuses another watch.
var ErrWatchLimit = errors.New("inotify watch limit reached; raise it with: sudo sysctl fs.inotify.max_user_watches=1048576 (and max_user_instances)")

// Degraded reports whether some folder could not be watched, so that only rescans see it.
func (w *Watcher) Degraded() bool { return w.degraded.Load() }

// Run watches until ctx ends, delivering batches on out. It returns when ctx ends or the
// watcher cannot start.
func (w *Watcher) Run(ctx context.Context, out chan<- Batch) error {
	if w.Settle == 0 {
		w.Settle = 20 * time.Millisecond
	}
	if w.MaxDelay == 0 {
		w.MaxDelay = 200 * time.Millisecond
	}
	if w.MaxPending == 0 {
		w.MaxPending = 100_000
	}
	if w.Logger == nil {
		w.Logger = slog.Default()
	}
	abs, err := filepath.Abs(w.Root)
	if err != nil {
		return err
	}
	if w.root, err = filepath.EvalSymlinks(abs); err != nil {
		return err
	}
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return fmt.Errorf("watcher: %w", err)
	}
	w.fw = fw
	defer fw.Close()
	if err := w.addTree(w.root); err != nil {
		return err
	}

	pending := map[string]struct{}{}
	rescan, reason := false, ""
	var first time.Time
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	flush := func() bool {
		if len(pending) == 0 && !rescan {
			return true
		}
		b := Batch{Rescan: rescan, Reason: reason}
		if !rescan {
			b.Paths = make([]string, 0, len(pending))
			for p := range pending {
				b.Paths = append(b.Paths, p)
			}
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return false
		}
		pending, rescan, reason, first = map[string]struct{}{}, false, "", time.Time{}
		return true
	}
	mark := func(rel string) {
		if first.IsZero() {
			first = time.Now()
		}
		if !rescan {
			pending[rel] = struct{}{}
			if len(pending) > w.MaxPending {
				rescan, reason, pending = true, fmt.Sprintf("over %d changed paths at once", w.MaxPending), map[string]struct{}{}
			}
		}
		wait := w.Settle
		if left := w.MaxDelay - time.Since(first); left < wait {
			wait = max(left, 0)
		}
		settle.Reset(wait)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			w.handle(ev, mark)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			if first.IsZero() {
				first = time.Now()
			}
			rescan, reason = true, err.Error()
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				reason = "the kernel's event queue overflowed"
			}
			w.Logger.Warn("file notifications lost; rescanning", "reason", reason)
			settle.Reset(w.Settle)
		case <-settle.C:
			if !flush() {
				return nil
			}
		}
	}
}

func (w *Watcher) rel(abs string) (string, bool) {
	if abs == w.root {
		return "", false
	}
	r, ok := strings.CutPrefix(abs, w.root+string(filepath.Separator))
	if !ok {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func (w *Watcher) handle(ev fsnotify.Event, mark func(string)) {
	if ev.Op == fsnotify.Chmod {
		return // permission and timestamp noise
	}
	rel, ok := w.rel(ev.Name)
	if !ok {
		return
	}
	if ev.Has(fsnotify.Create) {
		if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
			if w.Skip != nil && w.Skip(rel, true) {
				return
			}
			// Watch the new folder, then have its contents compared: files created in it
			// before the watch was in place are found by that listing.
			_ = w.addTree(ev.Name)
			mark(rel)
			return
		}
	}
	if ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Remove) {
		// A folder moved away keeps its subfolders' watches under stale names; drop them.
		// The new location, if inside the tree, arrives as a Create.
		prefix := ev.Name + string(filepath.Separator)
		for _, p := range w.fw.WatchList() {
			if strings.HasPrefix(p, prefix) {
				_ = w.fw.Remove(p)
			}
		}
	}
	if w.Skip != nil && w.Skip(rel, false) {
		return
	}
	mark(rel)
}

// Rewatch walks the tree again and watches every folder not watched yet: after the Skip
// rule changed, a folder it no longer leaves out is followed from then on. Call it once
// Run has delivered a batch.
func (w *Watcher) Rewatch() {
	if err := w.addTree(w.root); err != nil {
		w.Logger.Warn("cannot watch the tree again", "err", err)
	}
}

// addTree watches dir and every folder below it.
func (w *Watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return nil // gone already; its removal is reported to the parent
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if rel, ok := w.rel(p); ok && w.Skip != nil && w.Skip(rel, true) {
			return fs.SkipDir
		}
		if err := w.fw.Add(p); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				if !w.degraded.Swap(true) {
					w.Logger.Error("cannot watch every folder; changes there are found by rescans", "dir", p, "err", ErrWatchLimit)
				}
				return fs.SkipAll
			}
			w.Logger.Warn("cannot watch folder", "dir", p, "err", err)
		}
		return nil
	})
}
