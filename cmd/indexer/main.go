// Command indexer watches a content tree and publishes every change to the event stream.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/logging"
	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/profiling"
	"github.com/guide/guide/internal/reconcile"
)

// Exit codes, documented in the README.
const (
	ExitOK      = 0
	ExitFailure = 1 // anything else
	ExitUsage   = 2 // bad flags or configuration (with --once: an invalid guide.yaml)
	ExitNATS    = 3 // NATS unreachable, or the stream cannot be opened
	ExitPartial = 4 // --once: some documents could not be published
)

// Config is every setting of the indexer: what the command line gives.
type Config struct {
	Root       string
	ConfigFile string // guide.yaml; "" for the one at the root
	Project    string // "" for the root's base name
	NATSURL    string // "" to run an embedded server
	DataDir    string // the embedded server's store; "" for one under the data home
	Listen     string
	Once       bool
	JSON       bool
	Interval   time.Duration
	NoWatch    bool
	Ignore     []string
	// NoGitignore leaves the repository's ignore rules out.
	NoGitignore bool
	MaxSize     int64
	Replicas    int
	// Partitions is P for a stream this indexer creates; 0 keeps the stream's own.
	Partitions int
	LogLevel   string
	// CPUProfile, when set, is written with a CPU profile of the run (for --once).
	CPUProfile string
	// MemProfile, when set, is written with a heap profile at start and on each SIGUSR1.
	MemProfile string
	NATS       broker.Security
}

// DefaultConfig returns the settings of a command line that gives none.
func DefaultConfig() Config {
	return Config{Listen: "127.0.0.1:4222", Replicas: 1, LogLevel: "info"}
}

// Main is the indexer program: its settings, what it is wired to, and its connection.
type Main struct {
	Config Config

	Stdout io.Writer
	Logger *slog.Logger

	broker  *broker.Broker
	lock    *owner.Lock // the project's ownership, when this process opens its store
	stream  *events.Stream
	profile *profiling.Profile // the CPU profile being written, with --cpuprofile
}

func main() {
	m := &Main{Stdout: os.Stdout}
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(ExitOK)
		}
		fmt.Fprintln(os.Stderr, "indexer:", err)
		os.Exit(ExitUsage)
	}
	if err := m.startProfile(); err != nil {
		fmt.Fprintln(os.Stderr, "indexer: cpuprofile:", err)
		os.Exit(ExitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := m.Run(ctx)
	stop()
	if err := m.Close(); err != nil {
		m.Logger.Error("closing", "err", err)
	}
	os.Exit(code)
}

// startProfile starts writing the CPU profile that --cpuprofile asks for; Close ends it.
func (m *Main) startProfile() (err error) {
	m.profile, err = profiling.Start(m.Config.CPUProfile, m.Config.MemProfile)
	return err
}

// ParseFlags reads the command line.
func (m *Main) ParseFlags(args []string) error {
	fs := flag.NewFlagSet("indexer", flag.ContinueOnError)
	c, d := &m.Config, DefaultConfig()
	fs.StringVar(&c.Root, "root", "", "content tree to index (required)")
	fs.StringVar(&c.ConfigFile, "config", "", "project configuration file (default: guide.yaml at the root, if present)")
	fs.StringVar(&c.Project, "project", "", "project name (default: the root's name and a short hash of its canonical path, e.g. docs-3f9a2c1b)")
	fs.StringVar(&c.NATSURL, "nats", "", "NATS server URL(s), comma-separated; empty: run an embedded server")
	fs.StringVar(&c.DataDir, "data", "", "embedded server's JetStream directory, and the indexer's state file (default: "+filepath.Join(datadir.DataHome(), "<project>", "nats")+"); guide-mcp's --data names the same store")
	fs.StringVar(&c.Listen, "listen", d.Listen, "embedded server's listen address; \"\" for in-process only")
	fs.BoolVar(&c.Once, "once", false, "scan and reconcile once, wait for every ack, print a summary and exit")
	fs.BoolVar(&c.JSON, "json", false, "with --once: print the summary as JSON")
	fs.DurationVar(&c.Interval, "interval", 0, "time between safety rescans (default 5m with the watcher, 30s with --no-watch)")
	fs.BoolVar(&c.NoWatch, "no-watch", false, "do not watch the tree; only rescan every --interval")
	fs.Func("ignore", "leave out paths matching this .gitignore-style rule (repeatable)", func(v string) error {
		c.Ignore = append(c.Ignore, v)
		return nil
	})
	fs.BoolVar(&c.NoGitignore, "no-gitignore", false, "do not honour .gitignore files, .git/info/exclude or the global git excludes file")
	fs.Int64Var(&c.MaxSize, "max-size", 0, "largest document whose content is published, in bytes (default: what the server accepts, at most 16 MiB)")
	fs.IntVar(&c.Replicas, "replicas", d.Replicas, "stream replicas, on a NATS cluster")
	fs.IntVar(&c.Partitions, "partitions", 0, "partitions of a stream this creates (fixed for its life; default 1); query replicas choose theirs with guide-mcp --partitions")
	fs.StringVar(&c.LogLevel, "log-level", d.LogLevel, "debug, info, warn or error")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write a heap profile to this file at start and each time the process receives SIGUSR1")
	c.NATS.Flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		return fmt.Errorf("--replicas %d: want 1 to 5", c.Replicas)
	}
	if c.Root == "" {
		return errors.New("--root is required")
	}
	if st, err := os.Stat(c.Root); err != nil || !st.IsDir() {
		return fmt.Errorf("--root %s: not a directory", c.Root)
	}
	if c.Project == "" {
		c.Project = datadir.ProjectName(c.Root)
	}
	if c.DataDir == "" {
		c.DataDir = filepath.Join(datadir.DataHome(), c.Project, "nats")
	} else if owner.IsDataDir(c.DataDir) {
		// The project's data directory, as guide-mcp's --data names it: its store, and
		// its owner, are those of guide-mcp, not a second store beside them.
		c.DataDir = filepath.Join(c.DataDir, "nats")
	}
	var err error
	if m.Logger == nil {
		m.Logger, err = logging.New(c.LogLevel)
	}
	return err
}

// Run indexes until ctx ends, or once with --once, and returns the exit code.
func (m *Main) Run(ctx context.Context) int {
	opts, err := m.Config.NATS.Options()
	if err != nil {
		m.Logger.Error("NATS connection settings", "err", err)
		return ExitUsage
	}
	b := &broker.Broker{URL: m.Config.NATSURL, Options: opts, StoreDir: m.Config.DataDir, Listen: m.Config.Listen, Name: "guide-indexer", Logger: m.Logger}
	if m.Config.Once {
		b.Listen = ""
	}
	if b.URL == "" {
		if code := m.own(ctx, b); code != ExitOK {
			return code
		}
	}
	if err := b.Open(); err != nil {
		msg := "cannot reach NATS"
		if b.URL == "" {
			msg = "cannot start the embedded NATS server"
		}
		m.Logger.Error(msg, "err", err)
		return ExitNATS
	}
	m.broker = b
	if b.Server != nil && b.Listen != "" {
		m.Logger.Info("embedded NATS listening", "url", b.ClientURL(), "store", m.Config.DataDir)
	}
	if m.lock != nil && b.Listen != "" {
		if err := m.lock.Publish(owner.Record{Role: "indexer", NATSURL: b.ClientURL()}); err != nil {
			m.Logger.Error("the owner's record", "err", err)
			return ExitFailure
		}
	}
	m.stream = &events.Stream{Conn: b.Conn, Replicas: m.Config.Replicas, Partitions: m.Config.Partitions}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = m.stream.Open(octx)
	cancel()
	if err != nil {
		m.Logger.Error("cannot open the stream", "err", err)
		return ExitNATS
	}
	x := &reconcile.Indexer{Root: m.Config.Root, Project: m.Config.Project, Stream: m.stream, MaxSize: m.Config.MaxSize,
		Interval: m.Config.Interval, NoWatch: m.Config.NoWatch, Ignore: m.Config.Ignore, NoGitignore: m.Config.NoGitignore, ConfigFile: m.Config.ConfigFile, Logger: m.Logger,
		Skip: datadir.SkipInside(m.Config.Root, m.Config.DataDir), Progress: progressBar(os.Stderr),
		StateFile: filepath.Join(m.Config.DataDir, reconcile.StateFileName)}
	if !m.Config.Once {
		m.Logger.Info("indexing", "root", m.Config.Root, "project", m.Config.Project, "interval", m.Config.Interval)
		if err := x.Run(ctx); err != nil {
			m.Logger.Error("indexer stopped", "err", err)
			return ExitFailure
		}
		return ExitOK
	}
	sum, err := x.Reconcile(ctx)
	if m.Config.JSON {
		out := struct {
			reconcile.Summary
			Project string `json:"project"`
			Error   string `json:"error,omitempty"`
		}{Summary: sum, Project: m.Config.Project}
		if err != nil {
			out.Error = err.Error()
		}
		_ = json.NewEncoder(m.Stdout).Encode(out)
	} else if err == nil {
		fmt.Fprintln(m.Stdout, sum.String())
	}
	switch {
	case err != nil:
		m.Logger.Error("reconcile failed", "err", err)
		return ExitFailure
	case sum.ConfigError != "":
		fmt.Fprintln(os.Stderr, "indexer:", sum.ConfigError)
		return ExitUsage
	case sum.Failed > 0:
		return ExitPartial
	}
	return ExitOK
}

// own settles who opens the project's store, before any server does: this process, when
// no other owns the project (it takes the lock), or the owner, whose NATS server b then
// connects to with the token of its record. Two servers never open one store.
func (m *Main) own(ctx context.Context, b *broker.Broker) int {
	dir := filepath.Dir(m.Config.DataDir) // the project's data directory holds the store
	for {
		l, err := owner.Acquire(dir)
		if err == nil {
			m.lock = l
			return ExitOK
		}
		if !errors.Is(err, owner.ErrHeld) {
			m.Logger.Error("cannot lock the project's data directory", "dir", dir, "err", err)
			return ExitNATS
		}
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		r, err := owner.Await(actx, dir)
		cancel()
		if errors.Is(err, owner.ErrNoOwner) {
			continue // the owner stopped meanwhile: try to own the project
		}
		if err != nil {
			m.Logger.Error("the project's owner publishes no NATS server", "err", err)
			return ExitNATS
		}
		m.Logger.Info("publishing through the project's owner", "pid", r.PID, "role", r.Role, "url", r.NATSURL)
		b.URL, b.Listen = r.NATSURL, ""
		if r.Token != "" {
			b.Options = append(b.Options, nats.Token(r.Token))
		}
		return ExitOK
	}
}

// progressBar draws the first scan's progress on a terminal; elsewhere it draws nothing
// and the summary line says it all.
func progressBar(f *os.File) func(reconcile.Progress) {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	start := time.Now()
	finished := false
	return func(p reconcile.Progress) {
		if finished {
			return
		}
		const width = 30
		done := width
		if p.Total > 0 {
			done = width * p.Read / p.Total
		}
		rate := float64(p.Read) / max(time.Since(start).Seconds(), 1e-3)
		fmt.Fprintf(f, "\r[%s%s] %d/%d read, %d published, %d files  %.0f/s ",
			strings.Repeat("#", done), strings.Repeat(".", width-done), p.Read, p.Total, p.Published, p.Files, rate)
		if p.Done {
			fmt.Fprintln(f)
			finished = true
		}
	}
}

// Close releases the connection, stops the embedded server and ends the CPU profile,
// and reports every failure to do so.
func (m *Main) Close() error {
	var errs []error
	if m.broker != nil {
		errs = append(errs, m.broker.Close())
	}
	errs = append(errs, m.lock.Release())
	errs = append(errs, m.profile.Stop())
	m.profile = nil
	return errors.Join(errs...)
}
