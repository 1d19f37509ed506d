// Package reconcile turns a content tree into events: it scans the tree, compares it with
// what the stream says, and publishes only the differences; then it watches the tree and
// does the same for every path the watcher says may have changed.
package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guide/guide/internal/contentroot"
	"github.com/guide/guide/internal/cookie"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/guideyaml"
	"github.com/guide/guide/internal/ignore"
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
	// StateFile, when set, is where the indexer keeps what it knows of the stream between
	// runs (see state.go), so that a run reads only the events after it; "" for none.
	StateFile string
	// Progress, when set, is told how a full reconcile advances.
	Progress func(Progress)
	// Cookies, when set, are the tree's sync cookies: Run's watcher delivers them, and
	// once what was delivered before one is published, Run tells the jar at which
	// sequence (read-your-writes; see package cookie). Run closes the jar when it stops
	// watching.
	Cookies *cookie.Jar
	Logger  *slog.Logger

	lastConfigErr string
	// err is the last failure to publish, until a publish succeeds (Err).
	err atomic.Pointer[error]

	// What init derives from the settings, which it leaves as they were set.
	root      string            // Root, absolute, with its own symbolic links resolved
	tree      *contentroot.Root // every read of the tree goes through it
	subjects  events.Subjects
	log       *slog.Logger
	maxSize   int64
	configRel string // the configuration file's path in the tree; "" outside it
	// standIns maps the stand-in path of each document too long for a subject to its real
	// path, as scans find them, so that moving its folder away deletes it too.
	standIns sync.Map
	// notFiles holds the paths of the FIFOs, sockets and devices already logged as left
	// out, so that each is logged once, not on every scan.
	notFiles sync.Map
	// linkTargets maps each symbolic link that is a document to the path, relative to the
	// root, of the file it shows: a change to that file is a change to the link's document.
	linkTargets sync.Map

	mu    sync.Mutex
	known map[string]knownDoc // the stream's state as this indexer last saw it
	seq   uint64              // every event up to this sequence is in known
	id    string              // the stream known was read from (events.ID)
	fresh bool                // known is in step with the stream
	dirty bool                // known changed since the state file was written
	// ignored is swapped whole when the rules are reloaded: the watcher reads it from its
	// own goroutine.
	ignored atomic.Pointer[ignore.Matcher]
	// acked is the highest sequence an event this indexer published was acked at: every
	// change it published is at or below it.
	acked atomic.Uint64
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
	Config      string `json:"config,omitempty"`
	ConfigError string `json:"config_error,omitempty"` // file:line: problem, when invalid
	StreamSeq   uint64 `json:"stream_seq"`
	// Known says where the stream's state came from: "memory" (a running indexer's, in
	// step), "state file", "state file and events after it", or "stream" (read whole).
	Known string `json:"known,omitempty"`
	// StateFile says why the state file was set aside, when it was.
	StateFile string        `json:"state_file,omitempty"`
	Duration  time.Duration `json:"-"`
	Millis    int64         `json:"duration_ms"`
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
	x.log = x.Logger
	if x.log == nil {
		x.log = slog.Default()
	}
	x.maxSize = x.MaxSize
	if x.maxSize == 0 {
		x.maxSize = min(x.Stream.Conn.MaxPayload()-64<<10, 16<<20)
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
	tree, err := contentroot.Open(root)
	if err != nil {
		return fmt.Errorf("content root: %w", err)
	}
	x.root, x.tree, x.subjects = root, tree, events.NewSubjects(x.Project)
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
		x.log.Error("ignore rules not applied; the previous ones stay in force", "err", err)
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
	if !dir && cookie.Stray(rel) {
		return true
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

// Err says why the indexer's last attempt to publish failed, while it retries; nil once
// one succeeds.
func (x *Indexer) Err() error {
	if p := x.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (x *Indexer) setErr(err error) {
	if err == nil {
		x.err.Store(nil)
		return
	}
	err = fmt.Errorf("indexer: publishing: %w", err)
	x.err.Store(&err)
}

// interval is the time between safety rescans that Interval asks for, or its default.
func (x *Indexer) interval() time.Duration {
	switch {
	case x.Interval != 0:
		return x.Interval
	case x.NoWatch:
		return 30 * time.Second
	}
	return 5 * time.Minute
}
