// Package watch turns file-system notifications under a root into batches of paths that
// may have changed. Notifications are hints, not facts: the consumer compares each path
// with what it knows. When the kernel drops notifications (a queue overflow, a watch limit),
// the batch asks for a full rescan instead.
//
// The kernel's watches are not recursive, and a watch follows its folder's inode, not its
// name. So a new folder is watched, with every folder below it, just before the batch that
// names it is delivered (the consumer then lists it, and finds what was created before the
// watch was in place); a folder moved or removed has its watches dropped as soon as that
// is seen, before any new folder is watched; and a folder whose watch the notifier still
// files under an old name (moved before it was watched anew) is watched again.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/guide/guide/internal/contentroot"
	"github.com/guide/guide/internal/cookie"
)

// Batch is what the watcher delivers: paths (relative, slash-separated) that may have
// changed, or a request to rescan everything.
type Batch struct {
	Paths  []string
	Rescan bool   // notifications were lost: compare the whole tree
	Reason string // why Rescan is set
	// Cookies are the sync cookies seen, by name: every change made before them is in
	// this batch or an earlier one.
	Cookies []string
}

// Watcher watches every folder of a tree. Set the fields, then call Run.
type Watcher struct {
	Root string
	// Tree, when set, is the content root open for reading (else Root is opened): folders
	// are listed through it, never through a symbolic link.
	Tree *contentroot.Root
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
	// Ready, when set, is closed once every folder of the tree is watched: a change made
	// after it is delivered. A first scan must wait for it, else a file it reads before its
	// folder is watched, and changed in between, keeps its old content until a rescan.
	Ready chan struct{}
	// Cookies, when set, are the sync cookies of the tree: their folder is watched with
	// the tree, and a cookie's creation is delivered at once, with every path marked
	// before it, in Batch.Cookies (see package cookie). Nothing else of that folder is.
	Cookies *cookie.Jar

	root string
	tree *contentroot.Root
	fw   *fsnotify.Watcher
	// added holds the new folders (absolute) to watch before the next batch is delivered.
	added map[string]struct{}
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
	if w.tree = w.Tree; w.tree == nil {
		if w.tree, err = contentroot.Open(w.root); err != nil {
			return err
		}
		defer w.tree.Close()
	}
	w.added = map[string]struct{}{}
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return fmt.Errorf("watcher: %w", err)
	}
	w.fw = fw
	defer fw.Close()
	errs := forwardErrors(fw.Errors)
	w.addTree(w.root)
	if w.Cookies != nil {
		if err := w.add(w.Cookies.Dir()); err == nil {
			w.Cookies.Watching()
		} else {
			w.Cookies.Close() // no cookie can be seen: calls say they are partial at once
		}
	}
	if w.Ready != nil {
		close(w.Ready)
	}

	pending := map[string]struct{}{}
	rescan, reason := false, ""
	var cookies []string
	var first time.Time
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	flush := func() bool {
		if rescan {
			// Notifications were lost, new folders' among them: watch the whole tree again.
			w.added[w.root] = struct{}{}
		}
		w.watchAdded()
		if len(pending) == 0 && !rescan && len(cookies) == 0 {
			return true
		}
		b := Batch{Rescan: rescan, Reason: reason, Cookies: cookies}
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
		pending, rescan, reason, first, cookies = map[string]struct{}{}, false, "", time.Time{}, nil
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
			if seen, isCookie := w.cookie(ev, &cookies); isCookie {
				// Every change made before the cookie has been marked: deliver them
				// now, without waiting for the tree to settle.
				if seen && !flush() {
					return nil
				}
				continue
			}
			w.handle(ev, mark)
		case err, ok := <-errs:
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

// forwardErrors reads the notifier's errors on a goroutine of its own, keeping the first
// of those not yet taken: any one of them means a rescan. The notifier sends some errors
// while it holds its lock (a folder moved whose watch could not be removed), which every
// call to it (Add, Remove, WatchList) takes: read by the goroutine that also makes those
// calls, such an error would wait for it while it waits for the lock.
func forwardErrors(in <-chan error) <-chan error {
	out := make(chan error, 1)
	go func() {
		defer close(out)
		for err := range in {
			select {
			case out <- err:
			default: // one is already waiting: the rescan it asks for covers this one
			}
		}
	}()
	return out
}

func (w *Watcher) rel(abs string) (string, bool) {
	if w.tree == nil {
		return "", false
	}
	return w.tree.Rel(abs)
}

// cookie reports whether ev is the cookies' own (a cookie, or anything in the cookies'
// folder when it is not the root: a repository folder, which holds no document), and
// whether it is a cookie's creation, which it adds to cookies.
func (w *Watcher) cookie(ev fsnotify.Event, cookies *[]string) (seen, own bool) {
	if w.Cookies == nil {
		return false, false
	}
	name, ok := w.Cookies.Is(ev.Name)
	if ok && ev.Has(fsnotify.Create) {
		*cookies = append(*cookies, name)
		return true, true
	}
	return false, ok || (filepath.Dir(ev.Name) == w.Cookies.Dir() && w.Cookies.Dir() != w.root)
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
		if st, err := w.tree.Lstat(rel); err == nil && st.IsDir() {
			if w.Skip != nil && w.Skip(rel, true) {
				return
			}
			// Watch the new folder before the batch that names it is delivered; the
			// consumer's listing of it then finds what was created before the watch.
			w.added[ev.Name] = struct{}{}
			mark(rel)
			return
		}
	}
	if ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Remove) {
		// A folder moved away keeps its watches, under stale names, on inodes that may
		// now be watched under new names too: drop them now, before any new folder is
		// watched. The new location, if inside the tree, arrives as a Create.
		w.drop(ev.Name)
	}
	if w.Skip != nil && w.Skip(rel, false) {
		return
	}
	mark(rel)
}

// drop removes the watches of dir and every folder below it, and forgets any of them
// that was waiting to be watched.
func (w *Watcher) drop(dir string) {
	prefix := dir + string(filepath.Separator)
	for _, p := range w.fw.WatchList() {
		if p == dir || strings.HasPrefix(p, prefix) {
			_ = w.fw.Remove(p)
		}
	}
	for p := range w.added {
		if p == dir || strings.HasPrefix(p, prefix) {
			delete(w.added, p)
		}
	}
}

// watchAdded watches the new folders and every folder below them. A folder the notifier
// already watched under another name (its old one, when it moved before its old watch
// was dropped) is not filed under its new name: those stale watches are dropped and the
// folders watched again.
func (w *Watcher) watchAdded() {
	if len(w.added) == 0 {
		return
	}
	var dirs []string
	for dir := range w.added {
		dirs = append(dirs, w.addTree(dir)...)
	}
	w.added = map[string]struct{}{}
	watched := map[string]bool{}
	for _, p := range w.fw.WatchList() {
		watched[p] = true
	}
	var missing []string
	for _, d := range dirs {
		if !watched[d] {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return
	}
	for p := range watched {
		if rel, ok := w.rel(p); ok {
			if st, err := w.tree.Lstat(rel); err == nil && st.IsDir() {
				continue
			}
		} else if p == w.root || (w.Cookies != nil && p == w.Cookies.Dir()) {
			continue
		}
		_ = w.fw.Remove(p) // a folder no longer there under that name
	}
	for _, d := range missing {
		_ = w.add(d)
	}
}

// Rewatch walks the tree again and watches every folder not watched yet: after the Skip
// rule changed, a folder it no longer leaves out is followed from then on. Call it once
// Run has delivered a batch.
func (w *Watcher) Rewatch() {
	w.addTree(w.root)
}

// addTree watches dir and every folder below it, listed through the content root, and
// returns the folders it watched.
func (w *Watcher) addTree(dir string) []string {
	rel, _ := w.rel(dir)
	var dirs []string
	_ = w.tree.Walk(rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil // gone already: its removal is reported to the parent
		}
		if p != "." && w.Skip != nil && w.Skip(p, true) {
			return fs.SkipDir
		}
		abs := w.tree.Abs(p)
		switch err := w.add(abs); {
		case errors.Is(err, syscall.ENOSPC):
			return fs.SkipAll
		case err == nil:
			dirs = append(dirs, abs)
		}
		return nil
	})
	return dirs
}

// add watches one folder, and says why not when the kernel refuses.
func (w *Watcher) add(dir string) error {
	err := w.fw.Add(dir)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, syscall.ENOSPC):
		if !w.degraded.Swap(true) {
			w.Logger.Error("cannot watch every folder; changes there are found by rescans", "dir", dir, "err", ErrWatchLimit)
		}
	default:
		w.Logger.Warn("cannot watch folder", "dir", dir, "err", err)
	}
	return err
}
