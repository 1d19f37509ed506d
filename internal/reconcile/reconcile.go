// Package reconcile turns a content tree into events: it scans the tree, compares it with
// what the stream says, and publishes only the differences; then it watches the tree and
// does the same for every path the watcher says may have changed.
package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nuid"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/guideyaml"
	"github.com/guide/guide/internal/ignore"
	"github.com/guide/guide/internal/watch"
)

// Indexer publishes the state of one content root (a project) to the stream.
// Set the fields, then call Reconcile or Run.
type Indexer struct {
	Root    string
	Project string
	Stream  *events.Stream
	// MaxSize is the largest document whose content travels in its event; a larger one is
	// recorded as metadata with status too_large. Default: what the server accepts, less
	// room for headers, at most 16 MiB.
	MaxSize int64
	// Interval between safety rescans in Run. Default 5 minutes with the watcher, 30
	// seconds without it.
	Interval time.Duration
	// NoWatch turns the file-system watcher off: Run then only rescans every Interval.
	NoWatch bool
	// Ignore holds extra rules in .gitignore syntax (the --ignore flags), applied after
	// the defaults, the repository's rules and the root's .guideignore.
	Ignore []string
	// NoGitignore leaves the repository's rules out (every .gitignore, .git/info/exclude,
	// the user's global excludes file): only the defaults, .guideignore and Ignore apply.
	NoGitignore bool
	// Skip reports further paths (relative, slash-separated) to leave out.
	Skip func(rel string, dir bool) bool
	// ConfigFile is the project configuration; default guide.yaml at the root. It is
	// published as a config event when it changes (see reconcileConfig).
	ConfigFile string
	// Progress, when set, is told how a full reconcile advances.
	Progress func(Progress)
	Logger   *slog.Logger

	lastConfigErr string
	configRel     string // the configuration file's path in the tree, set by init

	root  string // Root, absolute, with its own symbolic links resolved
	mu    sync.Mutex
	known map[string]events.DocState // the stream's state as this indexer last saw it
	fresh bool                       // known is in step with the stream
	// ignored is swapped whole when the rules are reloaded: the watcher reads it from its
	// own goroutine.
	ignored atomic.Pointer[ignore.Matcher]
}

// Progress reports how far a full reconcile is.
type Progress struct {
	Files, Read, Total int // files found, files read of those to read
	Published          int
	Done               bool
}

// Summary is what one reconcile did.
type Summary struct {
	ScanID    string `json:"scan_id,omitempty"`
	Documents int    `json:"documents"` // documents in the tree
	Published int    `json:"published"` // new or changed documents published
	Unchanged int    `json:"unchanged"`
	Deleted   int    `json:"deleted"`
	Failed    int    `json:"failed"` // documents that could not be published
	Read      int    `json:"read"`   // files whose content was read
	// Config is what became of the configuration: published, unchanged, default or invalid.
	Config      string        `json:"config,omitempty"`
	ConfigError string        `json:"config_error,omitempty"` // file:line: problem, when invalid
	StreamSeq   uint64        `json:"stream_seq"`
	Duration    time.Duration `json:"-"`
	Millis      int64         `json:"duration_ms"`
}

// String is the one-line summary the indexer prints.
func (s Summary) String() string {
	var out string
	if s.Published+s.Deleted+s.Failed == 0 {
		out = fmt.Sprintf("%d documents, nothing changed: nothing published; stream at %d (%s)",
			s.Documents, s.StreamSeq, s.Duration.Round(time.Millisecond))
	} else {
		out = fmt.Sprintf("%d documents: %d published, %d unchanged, %d deleted, %d failed; stream at %d (%s)",
			s.Documents, s.Published, s.Unchanged, s.Deleted, s.Failed, s.StreamSeq, s.Duration.Round(time.Millisecond))
	}
	if s.Config != "" {
		out += "; config " + s.Config
	}
	if s.ConfigError != "" {
		out += ": " + s.ConfigError
	}
	return out
}

func (x *Indexer) init() error {
	if x.root != "" {
		return nil
	}
	if x.Logger == nil {
		x.Logger = slog.Default()
	}
	if x.Interval == 0 {
		x.Interval = 5 * time.Minute
		if x.NoWatch {
			x.Interval = 30 * time.Second
		}
	}
	if x.MaxSize == 0 {
		x.MaxSize = min(x.Stream.Conn.MaxPayload()-64<<10, 16<<20)
	}
	abs, err := filepath.Abs(x.Root)
	if err != nil {
		return err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("content root: %w", err)
	}
	st, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("content root: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("content root %s is not a directory", x.Root)
	}
	x.root = root
	x.configRel = x.configPath()
	return x.loadIgnore()
}

// loadIgnore reads the ignore rules. A broken .guideignore is reported and the rules in
// force stay as they were (the defaults, the first time).
func (x *Indexer) loadIgnore() error {
	m, err := ignore.Load(x.root, ignore.Options{Git: !x.NoGitignore, Extra: x.Ignore})
	if err != nil {
		if x.ignored.Load() == nil {
			defaults, _ := ignore.New(ignore.DefaultSource())
			x.ignored.Store(defaults)
		}
		var ie *ignore.Error
		if errors.As(err, &ie) && ie.Source == "--ignore" {
			return err
		}
		x.Logger.Error("ignore rules not applied; the previous ones stay in force", "err", err)
		return nil
	}
	x.ignored.Store(m)
	return nil
}

// skip is the watcher's rule: what is left out, but never a configuration file, whose
// changes must arrive even when a rule leaves it out.
func (x *Indexer) skip(rel string, dir bool) bool {
	if !dir && x.isConfig(rel) {
		return false
	}
	if x.ignored.Load().Ignored(rel, dir) {
		return true
	}
	return x.Skip != nil && x.Skip(rel, dir)
}

// isConfig reports whether rel is configuration, not a document: a file of ignore rules
// or the project configuration.
func (x *Indexer) isConfig(rel string) bool {
	return ignore.RuleFile(rel) || rel == guideyaml.FileName || rel == x.configRel
}

// Run reconciles the tree, then follows it until ctx ends: with the watcher, every change
// is published a moment after it is made; a safety rescan runs every Interval, and after
// any lost notification or failure. While NATS is away it keeps watching and retries
// with backoff; what changed meanwhile is found by the reconcile that follows.
func (x *Indexer) Run(ctx context.Context) error {
	if err := x.init(); err != nil {
		return err
	}
	hints := make(chan watch.Batch, 4)
	var w *watch.Watcher
	if !x.NoWatch {
		// Watch before the first scan, so that nothing changed during it is missed.
		w = &watch.Watcher{Root: x.root, Skip: x.skip, Logger: x.Logger}
		go func() {
			if err := w.Run(ctx, hints); err != nil && ctx.Err() == nil {
				x.Logger.Error("watcher stopped; falling back to rescans", "err", err)
				close(hints)
			}
		}()
	}
	needFull := true
	pending := map[string]struct{}{}
	const maxPending = 100_000
	backoff := time.Second
	safety := time.NewTimer(0)
	defer safety.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		var err error
		switch {
		case needFull:
			var sum Summary
			if sum, err = x.Reconcile(ctx); err == nil {
				needFull, pending = false, map[string]struct{}{}
				if sum.Published+sum.Deleted+sum.Failed > 0 || sum.Config == "published" {
					x.Logger.Info("reconciled", "summary", sum.String())
				}
				interval := x.Interval
				if w != nil && w.Degraded() {
					interval = min(interval, 10*time.Second)
				}
				safety.Reset(interval)
			}
		case len(pending) > 0:
			paths := make([]string, 0, len(pending))
			for p := range pending {
				paths = append(paths, p)
			}
			if _, err = x.ReconcilePaths(ctx, paths); err == nil {
				pending = map[string]struct{}{}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			x.Logger.Warn("publishing failed; retrying", "err", err, "in", backoff)
			retry.Reset(backoff)
			backoff = min(2*backoff, 30*time.Second)
		} else {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case b, ok := <-hints:
			if !ok {
				hints, needFull = nil, true
				x.NoWatch = true
				continue
			}
			if b.Rescan {
				needFull = true
				continue
			}
			rules := false
			for _, p := range b.Paths {
				if ignore.RuleFile(p) {
					rules = true // the rules changed: what is a document may have too
				}
				if p == x.configRel {
					needFull = true // the configuration is published by a full reconcile
				}
				pending[p] = struct{}{}
			}
			if rules {
				// Watch the folders the new rules no longer leave out before comparing the
				// whole tree: a change made in one after the comparison is then seen.
				needFull = true
				if err := x.loadIgnore(); err == nil && w != nil {
					w.Rewatch()
				}
			}
			if len(pending) > maxPending {
				needFull, pending = true, map[string]struct{}{}
			}
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
			needFull = true
		case <-retry.C:
		}
	}
}

type file struct {
	rel   string
	abs   string // what to read: the file, or a symbolic link's target inside the root
	size  int64
	mt    time.Time
	inode uint64
	// status is set when the file is known unreadable without reading it.
	status events.Status
	reason string
}

func (f *file) same(st events.DocState) bool {
	return st.Op == events.OpUpsert && st.Size == f.size && st.Mtime.Equal(f.mt) &&
		(st.Inode == 0 || f.inode == 0 || st.Inode == f.inode) &&
		(f.status == "" || f.status == st.Status)
}

// refresh reads the stream's state of every document, unless it is known to be current.
func (x *Indexer) refresh(ctx context.Context) error {
	if x.fresh {
		return nil
	}
	state, _, err := x.Stream.Current(ctx, x.Project)
	if err != nil {
		return err
	}
	x.known, x.fresh = state, true
	return nil
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
		files, walkErrs = x.walk(x.root)
	}()
	err := x.refresh(ctx)
	<-walked
	if err != nil {
		return Summary{}, err
	}
	for _, err := range walkErrs {
		x.Logger.Warn("cannot scan", "err", err)
	}
	var deleted []string
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		seen[f.rel] = true
	}
	for p, st := range x.known {
		if !seen[p] && st.Op == events.OpUpsert {
			deleted = append(deleted, p)
		}
	}
	sort.Strings(deleted)
	sum, err := x.publish(ctx, files, deleted, true)
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
	if err := x.refresh(ctx); err != nil {
		return Summary{}, err
	}
	sort.Strings(paths)
	var files []file
	var deleted []string
	seen := map[string]bool{}
	for i, p := range paths {
		if i > 0 && strings.HasPrefix(p, paths[i-1]+"/") && seen["dir:"+paths[i-1]] {
			continue // inside a folder already compared
		}
		var found []file
		abs := filepath.Join(x.root, filepath.FromSlash(p))
		st, err := os.Lstat(abs)
		switch {
		case err != nil:
			// Gone: the document, or everything below the folder it was.
		case x.ignored.Load().Ignored(p, st.IsDir()) || (x.Skip != nil && x.Skip(p, st.IsDir())):
		case st.IsDir():
			seen["dir:"+p] = true
			found, _ = x.walk(abs)
		default:
			if f, ok := x.stat(abs, p, st); ok {
				found = []file{f}
			}
		}
		for _, f := range found {
			seen[f.rel] = true
		}
		files = append(files, found...)
		if s, ok := x.known[p]; ok {
			// A document of the stream: a file, with nothing below it. Under churn every
			// hint is one of these, so this must not cost a pass over what is known.
			if s.Op == events.OpUpsert && !seen[p] {
				deleted = append(deleted, p)
				seen[p] = true
			}
		} else if err != nil || st.IsDir() {
			// Gone, or a folder: documents known below it may be gone too (a folder moved
			// or deleted), which takes a pass over what is known.
			prefix := p + "/"
			for k, s := range x.known {
				if s.Op == events.OpUpsert && strings.HasPrefix(k, prefix) && !seen[k] {
					deleted = append(deleted, k)
					seen[k] = true
				}
			}
		}
	}
	sum, err := x.publish(ctx, files, deleted, false)
	sum.Duration = time.Since(start)
	sum.Millis = sum.Duration.Milliseconds()
	return sum, err
}

// publish compares files with what is known, reads those that may differ, and publishes
// the changes and the deletions; a full scan is framed by scan events.
func (x *Indexer) publish(ctx context.Context, files []file, deleted []string, full bool) (Summary, error) {
	sum := Summary{Documents: len(files)}
	var changed []file
	for _, f := range files {
		if st, ok := x.known[f.rel]; ok && f.same(st) {
			sum.Unchanged++
			continue
		}
		changed = append(changed, f)
	}
	pub := x.Stream.Publisher()
	if full {
		if err := x.reconcileConfig(ctx, pub, &sum); err != nil {
			x.fresh = false
			return sum, err
		}
	}
	scan := &events.Scan{ID: nuid.Next()}
	began := false
	begin := func() error {
		if began || !full {
			return nil
		}
		began = true
		return pub.Publish(ctx, &events.Event{Op: events.OpScanBegin, Project: x.Project, Scan: scan})
	}
	// On failure, the stream may hold some of what was published: read it afresh next time.
	fail := func(err error) (Summary, error) {
		x.fresh = false
		return sum, err
	}

	// Read and hash changed files in parallel; publish from this goroutine, which alone
	// touches x.known (the workers get what they need with their work).
	type job struct {
		f    file
		prev events.DocState
	}
	results := make(chan *events.Event, 64)
	work := make(chan job)
	var wg sync.WaitGroup
	for range max(2, runtime.NumCPU()) {
		wg.Go(func() {
			for j := range work {
				results <- x.read(j.f, j.prev)
			}
		})
	}
	jobs := make([]job, len(changed))
	for i, f := range changed {
		jobs[i] = job{f, x.known[f.rel]}
	}
	go func() {
		defer close(work)
		for _, j := range jobs {
			select {
			case work <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	var pubErr error
	read := 0
	for e := range results {
		read++
		if x.Progress != nil && read%256 == 0 {
			x.Progress(Progress{Files: len(files), Read: read, Total: len(changed), Published: sum.Published})
		}
		if pubErr != nil {
			continue // drain
		}
		if st, known := x.known[e.Path]; known && st.Op == events.OpUpsert && st.Hash == e.Hash && st.Status == e.Status {
			// Touched, not changed: remember the new mtime so as not to read it again.
			sum.Unchanged++
			st.Mtime, st.Size, st.Inode = e.Mtime, e.Size, e.Inode
			x.known[e.Path] = st
			continue
		}
		if pubErr = begin(); pubErr != nil {
			continue
		}
		if err := pub.Publish(ctx, e); err != nil {
			if errors.Is(err, events.ErrPathTooLong) {
				x.Logger.Warn("cannot publish document", "path", e.Path, "err", err)
				sum.Failed++
				continue
			}
			pubErr = err
			continue
		}
		sum.Published++
	}
	sum.Read = read
	if pubErr != nil {
		return fail(pubErr)
	}
	for _, p := range deleted {
		if err := begin(); err != nil {
			return fail(err)
		}
		if err := pub.Publish(ctx, &events.Event{Op: events.OpDelete, Project: x.Project, Path: p, PrevSeq: x.known[p].Seq}); err != nil {
			return fail(err)
		}
		sum.Deleted++
	}
	if full && !began && !x.hasScan(ctx) {
		// Nothing changed, but no scan was ever recorded: frame an empty one, so that
		// consumers of a new project learn that they hold a complete snapshot.
		if err := begin(); err != nil {
			return fail(err)
		}
	}
	if began {
		scan.Documents, scan.Published, scan.Unchanged, scan.Deleted, scan.Failed =
			sum.Documents, sum.Published, sum.Unchanged, sum.Deleted, sum.Failed
		if err := pub.Publish(ctx, &events.Event{Op: events.OpScanEnd, Project: x.Project, Scan: scan}); err != nil {
			return fail(err)
		}
		sum.ScanID = scan.ID
	}
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	acks, err := pub.Flush(fctx)
	cancel()
	for _, a := range acks {
		sum.StreamSeq = max(sum.StreamSeq, a.Seq)
		if e := a.Event; e.Op == events.OpUpsert || e.Op == events.OpDelete {
			x.known[e.Path] = e.State(a.Seq)
		}
	}
	if err != nil {
		return fail(err)
	}
	if sum.StreamSeq == 0 && full {
		if info, err := x.Stream.Info(ctx); err == nil {
			sum.StreamSeq = info.State.LastSeq
		}
	}
	if x.Progress != nil && full {
		x.Progress(Progress{Files: len(files), Read: read, Total: len(changed), Published: sum.Published, Done: true})
	}
	return sum, nil
}

func (x *Indexer) hasScan(ctx context.Context) bool {
	_, err := x.Stream.LatestScan(ctx, x.Project)
	return err == nil
}

// walk lists every document below dir.
func (x *Indexer) walk(dir string) ([]file, []error) {
	var files []file
	var errs []error
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			if d != nil && d.IsDir() && p != dir {
				return fs.SkipDir
			}
			return nil
		}
		if p == x.root {
			return nil
		}
		rel := filepath.ToSlash(p[len(x.root)+1:])
		if d.IsDir() {
			if x.ignored.Load().Self(rel, true) || (x.Skip != nil && x.Skip(rel, true)) {
				return fs.SkipDir
			}
			return nil
		}
		if x.ignored.Load().Self(rel, false) || (x.Skip != nil && x.Skip(rel, false)) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return nil
		}
		if f, ok := x.stat(p, rel, info); ok {
			files = append(files, f)
		}
		return nil
	})
	return files, errs
}

// stat describes the file at p (not followed if it is a link) as a document, if it is one.
func (x *Indexer) stat(p, rel string, info fs.FileInfo) (file, bool) {
	f := file{rel: rel, abs: p, size: info.Size(), mt: info.ModTime().UTC(), inode: inode(info)}
	switch {
	case x.isConfig(rel):
		return f, false // configuration, not a document
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			f.status, f.reason = events.StatusUnreadable, "broken symbolic link"
			break
		}
		if !within(x.root, target) {
			f.status, f.reason, f.size = events.StatusOutsideRoot, "symbolic link to a place outside the project root", 0
			break
		}
		ti, err := os.Stat(target)
		if err != nil {
			f.status, f.reason = events.StatusUnreadable, err.Error()
			break
		}
		if ti.IsDir() || !ti.Mode().IsRegular() {
			return f, false // a folder is indexed where it really is
		}
		f.abs, f.size, f.mt, f.inode = target, ti.Size(), ti.ModTime().UTC(), inode(ti)
	case !info.Mode().IsRegular():
		return f, false // sockets, pipes, devices: not documents
	}
	return f, true
}

func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// read builds the upsert event of a file: its content when it is text within the size
// limit, else its metadata and a status that says why not.
func (x *Indexer) read(f file, prev events.DocState) *events.Event {
	e := &events.Event{Op: events.OpUpsert, Project: x.Project, Path: f.rel, Size: f.size,
		Mtime: f.mt, Inode: f.inode, Status: f.status, Reason: f.reason, PrevSeq: prev.Seq}
	if f.status != "" {
		e.Hash = events.HashContent([]byte(string(f.status) + f.reason))
		return e
	}
	if f.size > x.MaxSize {
		e.Status, e.Reason = events.StatusTooLarge, fmt.Sprintf("%d bytes; the limit is %d", f.size, x.MaxSize)
		e.Hash = fmt.Sprintf("size:%d", f.size)
		return e
	}
	fh, err := os.Open(f.abs)
	if err != nil {
		e.Status, e.Reason, e.Hash = events.StatusUnreadable, err.Error(), "unreadable"
		return e
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, x.MaxSize+1))
	if err != nil {
		e.Status, e.Reason, e.Hash = events.StatusUnreadable, err.Error(), "unreadable"
		return e
	}
	e.Size = int64(len(b))
	e.Hash = events.HashContent(b)
	switch {
	case int64(len(b)) > x.MaxSize:
		e.Status, e.Reason = events.StatusTooLarge, fmt.Sprintf("over the limit of %d bytes", x.MaxSize)
	case isBinary(b):
		e.Status, e.Reason = events.StatusBinary, "binary content"
	case !utf8.Valid(b):
		e.Status, e.Reason = events.StatusInvalidUTF8, "not valid UTF-8 text"
	default:
		e.Status, e.Content = events.StatusOK, b
	}
	return e
}

// isBinary applies the test of git and grep: a NUL byte in the first 8 KiB.
func isBinary(b []byte) bool {
	if len(b) > 8<<10 {
		b = b[:8<<10]
	}
	return bytes.IndexByte(b, 0) >= 0
}
