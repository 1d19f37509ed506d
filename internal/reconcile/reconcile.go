package reconcile

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/guide/guide/internal/events"
)

// refresh brings what is known of the stream up to date, unless it is known to be in step,
// and returns where it came from (Summary.Known) and why the state file was set aside, if
// it was: it reads the events after what is known (in memory, or else in the state file),
// or, when nothing usable is known, the latest event of every document.
func (x *Indexer) refresh(ctx context.Context) (known, setAside string, err error) {
	if x.fresh {
		return "memory", "", nil
	}
	info, err := x.Stream.Info(ctx)
	if err != nil {
		return "", "", err
	}
	id, last := events.ID(info), info.State.LastSeq
	known = "memory"
	if x.known == nil || x.id != id || x.seq > last || tooStale(x.seq, last, len(x.known)) {
		x.known, x.seq, x.id = nil, 0, id
		if x.StateFile != "" {
			st, err := readState(x.StateFile, id, x.Project, last)
			if err == nil {
				x.known, x.seq, known = st.Docs, st.Seq, "state file"
			} else {
				setAside = err.Error()
				x.log.Info("reading the stream's state from the stream", "state_file", x.StateFile, "because", setAside)
			}
		}
	}
	if x.known == nil {
		docs := make(map[string]knownDoc)
		upTo, err := x.Stream.Current(ctx, x.Project, func(d events.DocState) { docs[d.Path] = newKnown(d) })
		if err != nil {
			return "", setAside, err
		}
		x.known, x.seq, x.fresh, x.dirty = docs, upTo, true, true
		return "stream", setAside, nil
	}
	if x.seq < last {
		// Events only move what is known forward: one read before a failure leaves it
		// exact at x.seq still, and the next refresh reads them again.
		read := 0
		upTo, err := x.Stream.Since(ctx, x.Project, x.seq, func(d events.DocState) {
			read++
			if d.Seq > x.known[d.Path].seq {
				x.known[d.Path] = newKnown(d)
			}
		})
		if err != nil {
			return "", setAside, err
		}
		if known == "state file" && read > 0 {
			known = "state file and events after it"
		}
		x.seq, x.dirty = upTo, x.dirty || read > 0 || upTo > x.seq
	}
	x.fresh = true
	return known, setAside, nil
}

// saveState writes what is known to the state file, when there is one and what is known
// changed since it was written. A failure costs the next run time, not correctness.
func (x *Indexer) saveState() {
	if x.StateFile == "" || !x.dirty || x.known == nil {
		return
	}
	st := knownState{Stream: x.id, Project: x.Project, Seq: x.seq, Docs: x.known}
	if err := writeState(x.StateFile, st); err != nil {
		x.log.Warn("cannot write the indexer's state file", "file", x.StateFile, "err", err)
		return
	}
	x.dirty = false
}

// Reconcile compares the whole tree with the stream and publishes the differences, then
// waits for every ack. Scan events frame the changes; when nothing changed, nothing is
// published.
func (x *Indexer) Reconcile(ctx context.Context) (Summary, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.init(); err != nil {
		return Summary{}, err
	}
	start := time.Now()
	if err := x.loadIgnore(); err != nil {
		return Summary{}, err
	}
	// Walk the tree while the stream's state is read: neither needs the other, and on a
	// large tree each takes about as long.
	var files []file
	var walkErrs []error
	walked := make(chan struct{})
	go func() {
		defer close(walked)
		files, walkErrs = x.walk(ctx, "")
	}()
	known, setAside, err := x.refresh(ctx)
	<-walked
	if err == nil {
		err = ctx.Err() // a walk cut short lists too little: nothing may be deleted from it
	}
	if err != nil {
		return Summary{StateFile: setAside}, err
	}
	for _, err := range walkErrs {
		x.log.Warn("cannot scan", "err", err)
	}
	sum, err := x.publish(ctx, files, x.gone(files), true)
	sum.Known, sum.StateFile = known, setAside
	if err == nil {
		x.saveState()
	}
	sum.Failed += len(walkErrs)
	sum.Duration = time.Since(start)
	sum.Millis = sum.Duration.Milliseconds()
	return sum, err
}

// ReconcilePaths compares only the given paths (files or folders, relative to the root)
// with the stream and publishes the differences: the watcher's way.
func (x *Indexer) ReconcilePaths(ctx context.Context, paths []string) (Summary, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.init(); err != nil {
		return Summary{}, err
	}
	start := time.Now()
	known, setAside, err := x.refresh(ctx)
	if err != nil {
		return Summary{StateFile: setAside}, err
	}
	files, deleted := x.compare(ctx, x.withLinks(paths))
	if err := ctx.Err(); err != nil {
		return Summary{StateFile: setAside}, err
	}
	sum, err := x.publish(ctx, files, deleted, false)
	sum.Known, sum.StateFile = known, setAside
	sum.Duration = time.Since(start)
	sum.Millis = sum.Duration.Milliseconds()
	return sum, err
}

// gone returns, sorted, the documents the stream holds that the tree no longer does.
func (x *Indexer) gone(files []file) []string {
	var deleted []string
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		seen[f.rel] = true
	}
	for p, k := range x.known {
		if !seen[p] && k.exists {
			deleted = append(deleted, p)
		}
	}
	sort.Strings(deleted)
	return deleted
}

// compare returns the documents found at or below the given paths, and the known
// documents that are gone from there.
func (x *Indexer) compare(ctx context.Context, paths []string) (files []file, deleted []string) {
	sort.Strings(paths)
	seen := map[string]bool{}
	for i, p := range paths {
		if i > 0 && strings.HasPrefix(p, paths[i-1]+"/") && seen["dir:"+paths[i-1]] {
			continue // inside a folder already compared
		}
		var found []file
		// Through the content root: a path whose folder is now a symbolic link is gone.
		st, err := x.tree.Lstat(p)
		switch {
		case err != nil:
			// Gone: the document, or everything below the folder it was.
		case x.skip(p, st.IsDir()), !ValidName(p):
			// Left out; a bad name is reported by the full scan.
		case st.IsDir():
			seen["dir:"+p] = true
			found, _ = x.walk(ctx, p)
		default:
			if f, ok := x.stat(p, st); ok {
				found = []file{f}
			}
		}
		for _, f := range found {
			seen[f.rel] = true
		}
		files = append(files, found...)
		if key := x.key(p); key != p && !seen[key] && x.known[key].exists {
			deleted = append(deleted, key) // gone, and listed under a stand-in
			seen[key] = true
		}
		if s, ok := x.known[p]; ok {
			// A document of the stream: a file, with nothing below it. Under churn every
			// hint is one of these, so this must not cost a pass over what is known.
			if s.exists && !seen[p] {
				deleted = append(deleted, p)
				seen[p] = true
			}
		} else if err != nil || !st.Mode().IsRegular() {
			// Gone, a folder, or a link (a folder swapped for one): documents known below
			// it may be gone too, which takes a pass over what is known.
			prefix := p + "/"
			for k, s := range x.known {
				if !s.exists || seen[k] {
					continue
				}
				real := k
				if strings.HasPrefix(k, events.TooLongFolder+"/") {
					if r, ok := x.standIns.Load(k); ok {
						real = r.(string)
					}
				}
				if strings.HasPrefix(real, prefix) {
					deleted = append(deleted, k)
					seen[k] = true
				}
			}
		}
	}
	return files, deleted
}
