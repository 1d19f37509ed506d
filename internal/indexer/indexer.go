// Package indexer turns a content tree into events: it scans the tree, compares it with
// what the stream says, and publishes only the differences.
package indexer

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
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nuid"

	"github.com/guide/guide/internal/events"
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
	// Interval between safety rescans in Run. Default 30s.
	Interval time.Duration
	// Skip reports paths (relative, slash-separated) to leave out, besides VCS folders.
	Skip func(rel string, dir bool) bool
	// ConfigFile is the project configuration; default guide.yaml at the root. It is
	// published as a config event when it changes (see reconcileConfig).
	ConfigFile string
	Logger     *slog.Logger

	lastConfigErr string

	root string // Root, absolute, with its own symbolic links resolved
	mu   sync.Mutex
}

// Summary is what one reconcile did.
type Summary struct {
	ScanID    string `json:"scan_id,omitempty"`
	Documents int    `json:"documents"` // documents in the tree
	Published int    `json:"published"` // new or changed documents published
	Unchanged int    `json:"unchanged"`
	Deleted   int    `json:"deleted"`
	Failed    int    `json:"failed"` // documents that could not be published
	// Config is what became of the configuration: published, unchanged, default or invalid.
	Config      string        `json:"config,omitempty"`
	ConfigError string        `json:"config_error,omitempty"` // file:line: problem, when invalid
	StreamSeq   uint64        `json:"stream_seq"`
	Duration    time.Duration `json:"-"`
	Millis      int64         `json:"duration_ms"`
}

// String is the one-line summary the indexer prints.
func (s Summary) String() string {
	out := fmt.Sprintf("%d documents: %d published, %d unchanged, %d deleted, %d failed; stream at %d (%s)",
		s.Documents, s.Published, s.Unchanged, s.Deleted, s.Failed, s.StreamSeq, s.Duration.Round(time.Millisecond))
	if s.Config != "" {
		out += "; config " + s.Config
	}
	if s.ConfigError != "" {
		out += ": " + s.ConfigError
	}
	return out
}

// vcsDirs are never indexed.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, "_darcs": true, ".jj": true, ".fossil": true}

func (x *Indexer) init() error {
	if x.Logger == nil {
		x.Logger = slog.Default()
	}
	if x.Interval == 0 {
		x.Interval = 30 * time.Second
	}
	if x.MaxSize == 0 {
		x.MaxSize = min(x.Stream.Conn.MaxPayload()-64<<10, 16<<20)
	}
	abs, err := filepath.Abs(x.Root)
	if err != nil {
		return err
	}
	if x.root, err = filepath.EvalSymlinks(abs); err != nil {
		return fmt.Errorf("content root: %w", err)
	}
	st, err := os.Stat(x.root)
	if err != nil {
		return fmt.Errorf("content root: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("content root %s is not a directory", x.Root)
	}
	return nil
}

// Run reconciles, then reconciles again every Interval until ctx ends. A failed reconcile
// is retried with backoff: nothing is lost, since the next one compares the whole tree.
func (x *Indexer) Run(ctx context.Context) error {
	if err := x.init(); err != nil {
		return err
	}
	backoff := time.Second
	for {
		sum, err := x.Reconcile(ctx)
		wait := x.Interval
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			x.Logger.Warn("reconcile failed; retrying", "err", err, "in", backoff)
			wait, backoff = backoff, min(2*backoff, x.Interval)
		} else {
			backoff = time.Second
			if sum.Published+sum.Deleted+sum.Failed > 0 || sum.Config == "published" {
				x.Logger.Info("reconciled", "summary", sum.String())
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

type file struct {
	rel  string
	abs  string // what to read: the file, or a symbolic link's target inside the root
	size int64
	mt   time.Time
	// status is set when the file is known unreadable without reading it.
	status events.Status
	reason string
}

// Reconcile compares the tree with the stream and publishes the differences, then waits
// for every ack. Scan events frame the changes; when nothing changed, nothing is published.
func (x *Indexer) Reconcile(ctx context.Context) (Summary, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.root == "" {
		if err := x.init(); err != nil {
			return Summary{}, err
		}
	}
	start := time.Now()
	state, _, err := x.Stream.Current(ctx, x.Project)
	if err != nil {
		return Summary{}, err
	}
	files, walkErrs := x.walk()
	sum := Summary{Documents: len(files), Failed: len(walkErrs)}
	for _, err := range walkErrs {
		x.Logger.Warn("cannot scan", "err", err)
	}

	var changed []file
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		seen[f.rel] = true
		if st, ok := state[f.rel]; ok && st.Op == events.OpUpsert && st.Size == f.size &&
			st.Mtime.Equal(f.mt) && (f.status == "" || f.status == st.Status) {
			sum.Unchanged++
			continue
		}
		changed = append(changed, f)
	}
	var deleted []string
	for p, st := range state {
		if !seen[p] && st.Op == events.OpUpsert {
			deleted = append(deleted, p)
		}
	}

	pub := x.Stream.Publisher()
	if err := x.reconcileConfig(ctx, pub, &sum); err != nil {
		return sum, err
	}
	scan := &events.Scan{ID: nuid.Next()}
	began := false
	begin := func() error {
		if began {
			return nil
		}
		began = true
		return pub.Publish(ctx, &events.Event{Op: events.OpScanBegin, Project: x.Project, Scan: scan})
	}

	// Read and hash changed files in parallel; publish from this goroutine.
	results := make(chan *events.Event, 64)
	work := make(chan file)
	var wg sync.WaitGroup
	for range max(2, runtime.NumCPU()) {
		wg.Go(func() {
			for f := range work {
				results <- x.read(f, state[f.rel])
			}
		})
	}
	go func() {
		defer close(work)
		for _, f := range changed {
			select {
			case work <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	var pubErr error
	for e := range results {
		if pubErr != nil {
			continue // drain
		}
		st, known := state[e.Path]
		if known && st.Op == events.OpUpsert && st.Hash == e.Hash && st.Status == e.Status {
			sum.Unchanged++ // touched, not changed
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
	if pubErr != nil {
		return sum, pubErr
	}
	for _, p := range deleted {
		if err := begin(); err != nil {
			return sum, err
		}
		if err := pub.Publish(ctx, &events.Event{Op: events.OpDelete, Project: x.Project, Path: p, PrevSeq: state[p].Seq}); err != nil {
			return sum, err
		}
		sum.Deleted++
	}
	if !began {
		// Nothing changed. Still frame an empty first scan, so that consumers of a new
		// project learn that they hold a complete snapshot.
		if !x.hasScan(ctx) {
			if err := begin(); err != nil {
				return sum, err
			}
		}
	}
	if began {
		scan.Documents, scan.Published, scan.Unchanged, scan.Deleted, scan.Failed =
			sum.Documents, sum.Published, sum.Unchanged, sum.Deleted, sum.Failed
		if err := pub.Publish(ctx, &events.Event{Op: events.OpScanEnd, Project: x.Project, Scan: scan}); err != nil {
			return sum, err
		}
		sum.ScanID = scan.ID
	}
	acks, err := pub.Flush(ctx)
	for _, a := range acks {
		sum.StreamSeq = max(sum.StreamSeq, a.Seq)
	}
	if err != nil {
		return sum, err
	}
	if sum.StreamSeq == 0 {
		if info, err := x.Stream.Info(ctx); err == nil {
			sum.StreamSeq = info.State.LastSeq
		}
	}
	sum.Duration = time.Since(start)
	sum.Millis = sum.Duration.Milliseconds()
	return sum, nil
}

func (x *Indexer) hasScan(ctx context.Context) bool {
	_, err := x.Stream.LatestScan(ctx, x.Project)
	return err == nil
}

// walk lists every document of the tree.
func (x *Indexer) walk() ([]file, []error) {
	var files []file
	var errs []error
	_ = filepath.WalkDir(x.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == x.root {
				errs = append(errs, err)
				return err
			}
			errs = append(errs, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == x.root {
			return nil
		}
		rel := filepath.ToSlash(p[len(x.root)+1:])
		if d.IsDir() {
			if vcsDirs[d.Name()] || (x.Skip != nil && x.Skip(rel, true)) {
				return fs.SkipDir
			}
			return nil
		}
		if x.Skip != nil && x.Skip(rel, false) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		f := file{rel: rel, abs: p, size: info.Size(), mt: info.ModTime().UTC()}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				f.status, f.reason = events.StatusUnreadable, "broken symbolic link"
				break
			}
			if !within(x.root, target) {
				f.status, f.reason, f.size = events.StatusOutsideRoot, "symbolic link to a file outside the project root", 0
				break
			}
			ti, err := os.Stat(target)
			if err != nil {
				f.status, f.reason = events.StatusUnreadable, err.Error()
				break
			}
			if ti.IsDir() {
				return nil // the folder is indexed where it really is
			}
			if !ti.Mode().IsRegular() {
				return nil
			}
			f.abs, f.size, f.mt = target, ti.Size(), ti.ModTime().UTC()
		case !d.Type().IsRegular():
			return nil // sockets, pipes, devices: not documents
		}
		files = append(files, f)
		return nil
	})
	return files, errs
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// read builds the upsert event of a file: its content when it is text within the size
// limit, else its metadata and a status that says why not.
func (x *Indexer) read(f file, prev events.DocState) *events.Event {
	e := &events.Event{Op: events.OpUpsert, Project: x.Project, Path: f.rel, Size: f.size,
		Mtime: f.mt, Status: f.status, Reason: f.reason, PrevSeq: prev.Seq}
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
