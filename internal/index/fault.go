package index

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/guide/guide/internal/backoff"
)

// Scorch persists and merges segments on goroutines of its own. When one of them cannot
// write (a full disk), it reports the error to a callback and tries again at once, for
// ever: a core busy writing files that fail, and nothing said. The callbacks here record
// the failure, so that State, Err and Apply report it, log it, and make the failing
// goroutine wait with backoff before it tries again (the callback runs on it). The next
// persist or merge that succeeds clears it.
const (
	callbackName = "guide.index"
	// faultRetryMax caps the wait between two attempts of a failing persister or merger:
	// how long indexing may take to resume once space is back.
	faultRetryMax = 5 * time.Second
)

func init() {
	scorch.RegistryAsyncErrorCallbacks[callbackName] = func(err error, path string) {
		f := faultAt(path)
		switch {
		case f == nil:
		case errors.Is(err, scorch.ErrAsyncPanic):
			// A panic of the persister or the merger: a damaged segment.
			f.x.markBroken(&asyncPanic{err})
		default:
			f.failed(err)
		}
	}
	scorch.RegistryEventCallbacks[callbackName] = func(e scorch.Event) bool {
		switch e.Kind {
		case scorch.EventKindPersisterProgress, scorch.EventKindMergerProgress:
			if f := faultOf(e.Scorch); f != nil {
				f.progress(e.Kind == scorch.EventKindPersisterProgress)
			}
		case scorch.EventKindCloseStart:
			if f := faultOf(e.Scorch); f != nil {
				f.close()
			}
		case scorch.EventKindPreMergeCheck:
			if f := faultOf(e.Scorch); f != nil {
				return f.x.mayMerge(e.Scorch, f.quit)
			}
		}
		return true
	}
}

var faults struct {
	sync.Mutex
	byPath   map[string]*fault
	byScorch map[*scorch.Scorch]*fault
}

func faultAt(path string) *fault {
	faults.Lock()
	defer faults.Unlock()
	return faults.byPath[path]
}

func faultOf(s *scorch.Scorch) *fault {
	faults.Lock()
	defer faults.Unlock()
	return faults.byScorch[s]
}

// fault is what one open index's persister and merger failed to write, if anything.
type fault struct {
	x     *Index
	path  string // scorch's path: the store folder in Dir
	s     *scorch.Scorch
	once  sync.Once
	quit  chan struct{} // closed when the index closes: a waiting goroutine returns
	mu    sync.Mutex
	err   [2]error           // persisting, merging; nil when the last attempt succeeded
	retry [2]backoff.Backoff // each on its own goroutine
	since [2]time.Time
	told  [2]time.Time // when the failure was last logged
}

// faultLogEvery is how often a failure that goes on is logged again.
const faultLogEvery = time.Minute

const (
	persisting = iota
	merging
)

// watchFaults returns what will watch the index about to be opened in Dir.
func (x *Index) watchFaults() *fault {
	f := &fault{x: x, path: x.Dir + string(os.PathSeparator) + "store", quit: make(chan struct{})}
	for i := range f.retry {
		f.retry[i] = backoff.Backoff{Initial: 100 * time.Millisecond, Max: faultRetryMax}
	}
	return f
}

// opened makes the callbacks of s, the index f watches, now open (and so the only one in
// its folder: it holds the lock), reach f.
func (f *fault) opened(s *scorch.Scorch) {
	faults.Lock()
	defer faults.Unlock()
	if faults.byPath == nil {
		faults.byPath, faults.byScorch = map[string]*fault{}, map[*scorch.Scorch]*fault{}
	}
	f.s = s
	faults.byPath[f.path] = f
	faults.byScorch[s] = f
}

// close wakes a goroutine waiting to try again and forgets the index; its own Close then
// stops them.
func (f *fault) close() {
	f.once.Do(func() {
		close(f.quit)
		faults.Lock()
		defer faults.Unlock()
		if faults.byPath[f.path] == f {
			delete(faults.byPath, f.path)
		}
		if f.s != nil {
			delete(faults.byScorch, f.s)
		}
	})
}

// failed records err, logs it when it is new, and waits before scorch tries again.
func (f *fault) failed(err error) {
	kind := persisting
	var se *scorch.ScorchError
	if errors.As(err, &se) && se.Source == "merger" {
		kind = merging
	}
	f.mu.Lock()
	prev := f.err[kind]
	f.err[kind] = err
	if prev == nil {
		f.since[kind] = time.Now()
	}
	d := f.retry[kind].Next()
	tell := prev == nil || time.Since(f.told[kind]) >= faultLogEvery
	if tell {
		f.told[kind] = time.Now()
	}
	f.mu.Unlock()
	if tell {
		f.x.Logger.Error("the index cannot write its files; retrying", "doing", [2]string{"persisting", "merging"}[kind],
			"dir", f.x.Dir, "err", reason(err), "retry_in", d.Round(time.Millisecond))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-f.quit:
	}
}

// progress clears the error of the persister (or merger) after it succeeded.
func (f *fault) progress(persisted bool) {
	kind := merging
	if persisted {
		kind = persisting
	}
	f.mu.Lock()
	prev := f.err[kind]
	f.err[kind] = nil
	f.retry[kind].Reset()
	since := f.since[kind]
	f.mu.Unlock()
	if prev != nil {
		f.x.Logger.Info("the index writes its files again", "doing", [2]string{"persisting", "merging"}[kind],
			"dir", f.x.Dir, "failed_for", time.Since(since).Round(time.Millisecond))
	}
}

// get is the failure of the persister, else of the merger; nil when neither fails.
func (f *fault) get() (persist, merge error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err[persisting], f.err[merging]
}

// reason is what a scorch error says, without the wrapping of its source and type.
func reason(err error) string {
	var se *scorch.ScorchError
	if errors.As(err, &se) {
		return strings.TrimPrefix(strings.TrimPrefix(se.ErrMsg, "got err persisting snapshot: "), "merging err: ")
	}
	return err.Error()
}

// ErrCannotWrite is the error of an index whose files cannot be written (Err, Apply).
var ErrCannotWrite = errors.New("the index cannot write its files")

// Err says why the index cannot write its files now (a full disk: its segments are not
// persisted, or not merged), nil while it can. Searches still answer from what it holds.
func (x *Index) Err() error {
	f := x.fault.Load()
	if f == nil {
		return nil
	}
	persist, merge := f.get()
	switch {
	case persist != nil:
		return fmt.Errorf("%w: persisting: %s", ErrCannotWrite, reason(persist))
	case merge != nil:
		return fmt.Errorf("%w: merging: %s", ErrCannotWrite, reason(merge))
	}
	return nil
}

// persistErr is the persister's failure, which holds off the next batches: they would
// only pile up in memory, none of them reaching the disk.
func (x *Index) persistErr() error {
	f := x.fault.Load()
	if f == nil {
		return nil
	}
	if persist, _ := f.get(); persist != nil {
		return fmt.Errorf("%w: persisting: %s", ErrCannotWrite, reason(persist))
	}
	return nil
}
