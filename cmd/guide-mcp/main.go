// Command guide-mcp answers MCP clients from the projections of the event stream. It runs
// in one of four modes, each in a file of its own; this one holds the flags, the settings
// and the choice of mode.
//
//   - bridge.go: over stdio (the default), a bridge to the project's owner on this machine,
//     which it starts when none runs; with no --root, the client's roots are served. It
//     replaces itself with guide-bridge, when installed beside it.
//   - allinone.go: --root with --http, or as the owner daemon a bridge starts: the folder
//     indexed in this process, into an embedded NATS server's stream;
//   - owner.go: what makes that process the project's owner: the lock, the socket on which
//     it serves the bridges, and the daemon's stop when idle;
//   - replica.go: --nats: following a stream that an indexer fills, over stdio or HTTP.
//
// serve.go opens the projections and follows the stream for both serving modes, and
// http.go is their HTTP transport.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/cookie"
	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/httpserve"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/logging"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/metrics"
	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/partition"
	"github.com/guide/guide/internal/profiling"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
	"github.com/guide/guide/internal/text"
	"github.com/guide/guide/internal/web"
)

// tokenEnv is the environment variable that holds the HTTP bearer token, when no
// --token-file is given: secrets come from the environment, not the command line.
const tokenEnv = "GUIDE_TOKEN"

// Config is every setting of the query process: what the command line gives.
type Config struct {
	Root       string
	ConfigFile string // guide.yaml, all-in-one; "" for the one at the root
	ToolPrefix string
	NATSURL    string
	// Partitions, with --nats: the partitions this replica folds (events.PartitionSet);
	// none: the whole project.
	Partitions []int
	Project    string // "" to learn it from the root, the data directory or the stream
	// CPUProfile, when set, is written with a CPU profile of the process's life.
	CPUProfile string
	// MemProfile, when set, is written with a heap profile at start and on each SIGUSR1.
	MemProfile string
	DataDir    string
	HTTPAddr   string
	Interval   time.Duration
	Ignore     []string
	// NoGitignore, all-in-one: leave the repository's ignore rules out.
	NoGitignore bool
	MaxChars    int
	LogLevel    string
	// SessionTTL is how long an idle session keeps its documents; SessionMaxSize bounds one
	// session document.
	SessionTTL     time.Duration
	SessionMaxSize int64
	// MaxSessions bounds the MCP sessions the process holds, MaxClientSessions those of one
	// client address; MaxAttachedBytes the session documents of every session together.
	MaxSessions       int
	MaxClientSessions int
	MaxAttachedBytes  int64

	// Scaled out: how to reach the NATS cluster, and how to serve HTTP to a team.
	NATS           broker.Security
	TokenFile      string
	AllowedHosts   []string
	AllowedOrigins []string
	TLSCert        string
	TLSKey         string
	MaxBody        int64
	ReadyMaxLag    uint64
	ShutdownWait   time.Duration
	PageSize       int
	SignInsPerMin  int

	// One owner per project: ServeOwner runs this process as the owner daemon that stdio
	// bridges start; it exits after IdleTimeout without a client.
	ServeOwner  bool
	IdleTimeout time.Duration

	// SyncWait, all-in-one: how long a call waits to see every change saved before it
	// (read-your-writes); 0 answers at once.
	SyncWait time.Duration
}

// DefaultConfig returns the settings of a command line that gives none.
func DefaultConfig() Config {
	return Config{
		ToolPrefix:        os.Getenv("MCP_TOOL_PREFIX"),
		MaxChars:          query.DefaultLimits.MaxChars,
		LogLevel:          "info",
		SessionTTL:        session.DefaultTTL,
		SessionMaxSize:    session.DefaultMaxDocBytes,
		MaxSessions:       session.DefaultMaxSessions,
		MaxClientSessions: session.DefaultMaxClientSessions,
		MaxAttachedBytes:  session.DefaultMaxAttachedBytes,
		PageSize:          mcpserver.DefaultPageSize,
		MaxBody:           httpserve.DefaultMaxBodyBytes,
		ShutdownWait:      httpserve.DefaultShutdownTimeout,
		SignInsPerMin:     web.DefaultSignInsPerMinute,
		IdleTimeout:       5 * time.Minute,
		SyncWait:          mcpserver.DefaultSyncWait,
	}
}

// Main is the query process: its settings, what it is wired to, and what it runs.
type Main struct {
	Config Config

	Stdin  io.Reader
	Stdout io.Writer
	Logger *slog.Logger
	// Args is the command line, given again to the owner daemon a stdio bridge starts.
	Args []string

	// Projections are further projections the runner feeds after the catalog (the search
	// index goes here). A document is processing until every one has applied it.
	Projections []projection.Projection

	// Ready is closed when the server answers: the catalog is open and the MCP server built.
	Ready chan struct{}

	project  string // the project served: Config.Project, or learnt while starting
	broker   *broker.Broker
	stream   *events.Stream
	catalog  *projection.Catalog
	index    *index.Index
	parts    events.PartitionSet // the partitions folded here (--partitions)
	partsOut *partition.Client   // asks the other partitions (partitions.go)
	runner   *projection.Runner
	mcp      *server.MCPServer
	srv      *mcpserver.Server
	sessions *session.Registry
	addr     net.Addr
	wg       sync.WaitGroup
	mu       sync.Mutex // guards broker, stream and runner, set while serving
	// indexOpen reports the background open of the index, once.
	indexOpen chan error
	// connecting reports the owner's connect, begun as soon as it holds the lock.
	connecting chan error
	metrics    *metrics.Metrics
	lock       *owner.Lock // the project's ownership, all-in-one
	// cookies are the sync cookies of the folder, all-in-one (read-your-writes): the
	// indexer's watcher delivers them, calls wait on them; nil when off.
	cookies *cookie.Jar
	profile *profiling.Profile // the CPU profile being written, with --cpuprofile
	// markdown is what the catalog hands the search index (markdownHandoff).
	markdown *text.MarkdownHandoff
}

func main() {
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Args: os.Args[1:]}
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "guide-mcp:", err)
		os.Exit(2)
	}
	m.execBridge() // returns only when the bridge binary cannot run
	if err := m.startProfile(); err != nil {
		fmt.Fprintln(os.Stderr, "guide-mcp: cpuprofile:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := m.Run(ctx)
	stop()
	if cerr := m.Close(); cerr != nil {
		m.Logger.Error("guide-mcp: closing", "err", cerr)
	}
	if err != nil {
		m.Logger.Error("guide-mcp stopped", "err", err)
		os.Exit(1)
	}
}

// ParseFlags reads the command line.
func (m *Main) ParseFlags(args []string) error {
	fs := flag.NewFlagSet("guide-mcp", flag.ContinueOnError)
	c, d := &m.Config, DefaultConfig()
	fs.StringVar(&c.Root, "root", "", "all-in-one: index this content tree in-process, with an embedded NATS server (over stdio, default: the first of the client's MCP roots)")
	fs.StringVar(&c.ConfigFile, "config", "", "all-in-one: project configuration file (default: guide.yaml at the root, if present)")
	fs.StringVar(&c.ToolPrefix, "tool-prefix", d.ToolPrefix, "prefix for every tool name, e.g. \"guide_\" (default: $MCP_TOOL_PREFIX, else none)")
	fs.StringVar(&c.NATSURL, "nats", "", "follow the stream on this NATS server (comma-separated URLs)")
	fs.Func("partitions", "with --nats: fold only these partitions of a partitioned stream, e.g. 0 or 1,3, and search the others through their replicas", partitionsFlag(c))
	fs.StringVar(&c.Project, "project", "", "project to serve (default: the root's name and a short hash of its canonical path, e.g. docs-3f9a2c1b; or the only project on the stream)")
	fs.StringVar(&c.DataDir, "data", "", "where the projections live (default: "+filepath.Join(datadir.DataHome(), "<project>")+")")
	fs.StringVar(&c.HTTPAddr, "http", "", "serve Streamable HTTP on this address (endpoint /mcp, the web page at /) instead of stdio, e.g. 127.0.0.1:8080")
	fs.DurationVar(&c.Interval, "interval", 0, "all-in-one: time between safety rescans (default 5m)")
	fs.Func("ignore", "all-in-one: leave out paths matching this .gitignore-style rule (repeatable)", func(v string) error {
		c.Ignore = append(c.Ignore, v)
		return nil
	})
	fs.DurationVar(&c.SyncWait, "sync-wait", d.SyncWait, "all-in-one: how long a call waits until the answer holds every change saved before it (past it, the answer says it is partial); 0 answers at once")
	fs.BoolVar(&c.NoGitignore, "no-gitignore", false, "all-in-one: do not honour .gitignore files, .git/info/exclude or the global git excludes file")
	fs.IntVar(&c.MaxChars, "max-chars", d.MaxChars, "largest response, in characters")
	fs.StringVar(&c.LogLevel, "log-level", d.LogLevel, "debug, info, warn or error")
	fs.DurationVar(&c.SessionTTL, "session-ttl", d.SessionTTL, "how long an idle MCP session keeps its attached documents")
	fs.Int64Var(&c.SessionMaxSize, "session-max-size", d.SessionMaxSize, "largest document a session may attach, in bytes")
	fs.IntVar(&c.MaxSessions, "max-sessions", d.MaxSessions, "most MCP sessions held at once; past it, a new session ends the one unused longest (if unused for a minute), or is refused")
	fs.IntVar(&c.MaxClientSessions, "max-client-sessions", d.MaxClientSessions, "HTTP: most MCP sessions of one client address, as --max-sessions")
	fs.Int64Var(&c.MaxAttachedBytes, "max-attached-bytes", d.MaxAttachedBytes, "most bytes of documents attached by every session together")
	fs.IntVar(&c.PageSize, "page-size", d.PageSize, "items per page of tools/list, resources/list and resources/templates/list")
	fs.BoolVar(&c.ServeOwner, "serve-owner", false, "run as the project's owner daemon, as guide-mcp --root starts it (not for direct use)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", d.IdleTimeout, "owner daemon: exit after this long without a client")
	c.NATS.Flags(fs)
	fs.StringVar(&c.TokenFile, "token-file", "", "HTTP: file holding the bearer token clients must send (default: $"+tokenEnv+"); required on a non-loopback address")
	fs.Func("allowed-host", "HTTP: accept this Host header besides loopback names (repeatable; \"*\" for any)", func(v string) error {
		c.AllowedHosts = append(c.AllowedHosts, v)
		return nil
	})
	fs.Func("allowed-origin", "HTTP: accept browser requests from this Origin, e.g. https://app.example.com (repeatable)", func(v string) error {
		c.AllowedOrigins = append(c.AllowedOrigins, v)
		return nil
	})
	fs.StringVar(&c.TLSCert, "tls-cert", "", "HTTP: serve HTTPS with this certificate (PEM)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "HTTP: key of --tls-cert (PEM)")
	fs.Int64Var(&c.MaxBody, "max-body", d.MaxBody, "largest request body (HTTP) or message (stdio), in bytes")
	fs.Uint64Var(&c.ReadyMaxLag, "ready-max-lag", 0, "HTTP: /healthz says ready while at most this many events are not yet applied")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the process's life to this file")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write a heap profile to this file at start and each time the process receives SIGUSR1")
	fs.DurationVar(&c.ShutdownWait, "shutdown-wait", d.ShutdownWait, "HTTP: on SIGTERM, how long in-flight calls may take to finish")
	fs.IntVar(&c.SignInsPerMin, "signin-limit", d.SignInsPerMin, "HTTP: wrong tokens the web page's sign-in takes from one address a minute; beyond, it refuses every sign-in from there for a while (0: no limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Root == "" && c.NATSURL == "" && (c.HTTPAddr != "" || c.ServeOwner) {
		// Over stdio the folder may come from the client's roots; over HTTP nothing names it.
		return errors.New("no folder to serve; name it with: guide-mcp --root /path/to/docs (or follow a stream with --nats URL)")
	}
	if len(c.Partitions) > 0 && c.NATSURL == "" {
		return errors.New("--partitions needs --nats: partitions are a stream's, served by several replicas")
	}
	if c.Root != "" && c.NATSURL != "" {
		return errors.New("give --root DIR (all-in-one) or --nats URL (follow a stream), not both")
	}
	if c.Root != "" {
		if st, err := os.Stat(c.Root); err != nil || !st.IsDir() {
			return fmt.Errorf("--root %s: not a directory", c.Root)
		}
		if c.Project == "" {
			c.Project = datadir.ProjectName(c.Root)
		}
	}
	var err error
	if m.Logger == nil {
		m.Logger, err = logging.New(c.LogLevel)
	}
	return err
}

func (m *Main) dataDir() string {
	if m.Config.DataDir != "" {
		return m.Config.DataDir
	}
	return filepath.Join(datadir.DataHome(), m.project)
}

// Run serves until ctx ends or, on stdio, until the client closes its end.
func (m *Main) Run(ctx context.Context) error {
	if m.Ready == nil {
		m.Ready = make(chan struct{})
	}
	m.project = m.Config.Project
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	switch {
	case m.bridges():
		return m.runBridge(ctx)
	case m.Config.Root != "":
		return m.runAllInOne(ctx, cancel)
	default:
		return m.runReplica(ctx, cancel)
	}
}

// Sessions is the session registry, once Ready.
func (m *Main) Sessions() *session.Registry { return m.sessions }

// Addr is the HTTP listener's address, once Ready.
func (m *Main) Addr() net.Addr { return m.addr }

// MCP is the MCP server, once Ready.
func (m *Main) MCP() *server.MCPServer { return m.mcp }

// Runner is the projection runner, once Ready.
func (m *Main) Runner() *projection.Runner {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runner
}

// Close stops the background work and releases everything, in reverse order of opening,
// and reports every failure to release.
func (m *Main) Close() error {
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	if m.index != nil {
		errs = append(errs, m.index.Close())
	}
	if m.catalog != nil {
		errs = append(errs, m.catalog.Close())
	}
	if m.broker != nil {
		errs = append(errs, m.broker.Close())
	}
	errs = append(errs, m.lock.Release()) // last: the next owner opens what this one closed
	errs = append(errs, m.profile.Stop())
	m.profile = nil
	return errors.Join(errs...)
}

// startProfile starts writing the CPU profile that --cpuprofile asks for; Close ends it.
// A stdio bridge writes none: the owner it starts, given the same flags, does the work
// and writes it.
func (m *Main) startProfile() (err error) {
	if !m.bridges() {
		m.profile, err = profiling.Start(m.Config.CPUProfile, m.Config.MemProfile)
	}
	return err
}
