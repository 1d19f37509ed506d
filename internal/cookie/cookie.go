// Package cookie proves that the watcher of a tree has seen every change made to it before
// a moment, as watchman's sync cookies do: a call writes a uniquely named file (a cookie)
// where the watcher watches, and waits until the watcher delivers the cookie's creation.
// One notifier delivers its events in the order they happened, so every change made
// before the cookie was written has been delivered by then; once the indexer has
// published what the watcher delivered up to the cookie, it says at which stream sequence
// (Seen), and an answer from projections that applied that sequence holds every change
// saved before the call.
//
// A cookie never becomes a document: it goes into the repository folder of the work tree
// that holds the root (.git, which git never lists and the indexer never reads) when there
// is one, else at the root under a hidden name the indexer leaves out (RootPrefix). It is
// removed once seen.
package cookie

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/guide/guide/internal/ignore"
)

// RootPrefix begins the name of a cookie written at the root of a tree in no repository;
// the indexer leaves such files out.
const RootPrefix = ".guide-cookie-"

// repoPrefix begins the name of a cookie written in a repository folder.
const repoPrefix = "guide-cookie-"

// ErrClosed is returned by Sync once the watcher has stopped: no cookie can be seen.
var ErrClosed = errors.New("the watcher is not running")

// Jar writes the cookies of one watched tree and hands each one's outcome to the calls
// that wait on it. Calls that arrive together share one cookie.
type Jar struct {
	dir    string // where cookies are written, absolute, symbolic links resolved
	prefix string // every cookie's name begins with it: which folder, and this process

	ready     chan struct{} // closed once the watcher watches dir (Watching)
	readyOnce sync.Once
	closed    chan struct{} // closed once no cookie can be seen any more (Close)

	mu      sync.Mutex
	n       uint64            // cookies written so far
	open    *round            // the round calls join until its cookie is written
	waiting map[string]*round // cookies written and not yet seen, by name
	err     error             // why no cookie can be seen, once closed
}

// round is one cookie and the calls that wait on it.
type round struct {
	name string
	done chan struct{} // closed when seq or err is set
	seq  uint64
	err  error
}

// New returns the jar of the tree at root (absolute, its symbolic links resolved). It
// removes cookies that processes no longer running left behind.
func New(root string) *Jar {
	dir, prefix := root, RootPrefix
	if g := ignore.GitDir(root); g != "" {
		if d, err := filepath.EvalSymlinks(g); err == nil {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				dir, prefix = d, repoPrefix
			}
		}
	}
	sweep(dir, prefix)
	return &Jar{dir: dir, prefix: prefix + strconv.Itoa(os.Getpid()) + "-",
		ready: make(chan struct{}), closed: make(chan struct{}), waiting: map[string]*round{}}
}

// Dir is the folder the watcher must watch, with the same notifier as the tree.
func (j *Jar) Dir() string { return j.dir }

// Is reports whether abs (a path the watcher reports) is one of this jar's cookies, and
// its name.
func (j *Jar) Is(abs string) (string, bool) {
	if filepath.Dir(abs) != j.dir {
		return "", false
	}
	name := filepath.Base(abs)
	return name, strings.HasPrefix(name, j.prefix)
}

// Stray reports whether rel (a slash path from a root) is a cookie written at a root — of
// this tree, or of a folder inside it that another process serves: a file the indexer
// never reads, whoever wrote it.
func Stray(rel string) bool {
	return strings.HasPrefix(path.Base(rel), RootPrefix)
}

// Watching tells the jar that the watcher watches Dir: cookies written from now on are
// delivered.
func (j *Jar) Watching() { j.readyOnce.Do(func() { close(j.ready) }) }

// Sync writes a cookie (or joins one about to be written) and waits until the indexer has
// published every change the watcher delivered before it: it returns the stream sequence
// that covers every change made to the tree before Sync was called. It gives up when ctx
// ends, and fails at once once the watcher has stopped.
func (j *Jar) Sync(ctx context.Context) (uint64, error) {
	select {
	case <-j.ready:
	case <-j.closed:
		return 0, j.closedErr()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	j.mu.Lock()
	if j.err != nil {
		j.mu.Unlock()
		return 0, j.err
	}
	r, leader := j.open, j.open == nil
	if leader {
		j.n++
		r = &round{name: j.prefix + strconv.FormatUint(j.n, 10), done: make(chan struct{})}
		j.open, j.waiting[r.name] = r, r
	}
	j.mu.Unlock()
	if leader {
		// Calls that joined before the file exists arrived before it: its event covers
		// their changes too. Calls after it take the next cookie.
		err := j.write(r.name)
		j.mu.Lock()
		j.open = nil
		if err != nil {
			j.finish(r, 0, fmt.Errorf("writing a sync cookie: %w", err))
		}
		j.mu.Unlock()
	}
	select {
	case <-r.done:
		return r.seq, r.err
	case <-ctx.Done():
		if leader {
			// Nobody waits on it any more (the calls that share it have the same
			// bound): forget it, so that a watcher that never delivers it costs nothing.
			j.mu.Lock()
			j.finish(r, 0, ctx.Err())
			j.mu.Unlock()
		}
		return 0, ctx.Err()
	}
}

// Seen is the indexer's word that it has published every change the watcher delivered
// up to the cookies named, the last of them at or below seq.
func (j *Jar) Seen(names []string, seq uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, name := range names {
		if r, ok := j.waiting[name]; ok {
			j.finish(r, seq, nil)
		}
	}
}

// Close tells the jar that the watcher has stopped: calls waiting on a cookie, and every
// later call, fail with ErrClosed.
func (j *Jar) Close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	j.err = ErrClosed
	close(j.closed)
	for _, r := range j.waiting {
		j.finish(r, 0, ErrClosed)
	}
}

func (j *Jar) closedErr() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// finish settles a round still waiting, and removes its cookie. Called with mu held.
func (j *Jar) finish(r *round, seq uint64, err error) {
	if j.waiting[r.name] != r {
		return // settled already
	}
	delete(j.waiting, r.name)
	r.seq, r.err = seq, err
	close(r.done)
	_ = os.Remove(filepath.Join(j.dir, r.name))
}

// write creates the cookie, empty.
func (j *Jar) write(name string) error {
	f, err := os.OpenFile(filepath.Join(j.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// sweep removes the cookies in dir of processes that no longer run (killed between
// writing one and removing it).
func sweep(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.IsDir() {
			continue
		}
		pid, _, _ := strings.Cut(rest, "-")
		if n, err := strconv.Atoi(pid); err == nil && n > 0 && !running(n) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// running reports whether a process with this pid exists.
func running(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
