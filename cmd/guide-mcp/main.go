// Command guide-mcp answers MCP clients from the projections of the event stream:
// over stdio (the default) or Streamable HTTP, all-in-one with --root, or following a
// stream that an indexer fills with --nats.
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
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/httpserve"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/lineio"
	"github.com/guide/guide/internal/logging"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/metrics"
	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/reconcile"
	"github.com/guide/guide/internal/session"
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
	Project    string // "" to learn it from the root, the data directory or the stream
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

	// One owner per project: ServeOwner runs this process as the owner daemon that stdio
	// bridges start; it exits after IdleTimeout without a client.
	ServeOwner  bool
	IdleTimeout time.Duration
}

// DefaultConfig returns the settings of a command line that gives none.
func DefaultConfig() Config {
	return Config{
		ToolPrefix:     os.Getenv("MCP_TOOL_PREFIX"),
		MaxChars:       query.DefaultLimits.MaxChars,
		LogLevel:       "info",
		SessionTTL:     session.DefaultTTL,
		SessionMaxSize: session.DefaultMaxDocBytes,
		PageSize:       mcpserver.DefaultPageSize,
		MaxBody:        httpserve.DefaultMaxBodyBytes,
		ShutdownWait:   httpserve.DefaultShutdownTimeout,
		IdleTimeout:    5 * time.Minute,
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
	lock       *owner.Lock  // the project's ownership, all-in-one
	attached   atomic.Int64 // bridges attached to this owner
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
	fs.StringVar(&c.Project, "project", "", "project to serve (default: the root's name and a short hash of its canonical path, e.g. docs-3f9a2c1b; or the only project on the stream)")
	fs.StringVar(&c.DataDir, "data", "", "where the projections live (default: "+filepath.Join(datadir.DataHome(), "<project>")+")")
	fs.StringVar(&c.HTTPAddr, "http", "", "serve Streamable HTTP on this address (endpoint /mcp, the web page at /) instead of stdio, e.g. 127.0.0.1:8080")
	fs.DurationVar(&c.Interval, "interval", 0, "all-in-one: time between safety rescans (default 5m)")
	fs.Func("ignore", "all-in-one: leave out paths matching this .gitignore-style rule (repeatable)", func(v string) error {
		c.Ignore = append(c.Ignore, v)
		return nil
	})
	fs.BoolVar(&c.NoGitignore, "no-gitignore", false, "all-in-one: do not honour .gitignore files, .git/info/exclude or the global git excludes file")
	fs.IntVar(&c.MaxChars, "max-chars", d.MaxChars, "largest response, in characters")
	fs.StringVar(&c.LogLevel, "log-level", d.LogLevel, "debug, info, warn or error")
	fs.DurationVar(&c.SessionTTL, "session-ttl", d.SessionTTL, "how long an idle MCP session keeps its attached documents")
	fs.Int64Var(&c.SessionMaxSize, "session-max-size", d.SessionMaxSize, "largest document a session may attach, in bytes")
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
	fs.DurationVar(&c.ShutdownWait, "shutdown-wait", d.ShutdownWait, "HTTP: on SIGTERM, how long in-flight calls may take to finish")
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
	if m.servesRoots() {
		return m.serveRoots(ctx)
	}
	if m.bridges() {
		return m.bridge(ctx)
	}
	if m.Config.Root != "" {
		if err := m.own(ctx); err != nil {
			return err
		}
		if m.lock == nil {
			return nil // another owner won the race to start
		}
		// The owner's NATS server recovers its stream while the catalog loads: a new owner
		// restores its bridges' sessions from the stream, and answers them once both are done.
		m.connecting = make(chan error, 1)
		m.wg.Go(func() { m.connecting <- m.connect(ctx) })
	}

	// The projections answer on their own: open them first and serve at once, and reach
	// NATS in the background. A restarted query process answers in the time it takes to
	// load its catalog, however long NATS takes to recover its stream.
	if m.project == "" && m.Config.DataDir == "" {
		if err := m.connect(ctx); err != nil { // the data directory is named after the project
			return err
		}
	}
	m.catalog = &projection.Catalog{Dir: filepath.Join(m.dataDir(), "query"), Logger: m.Logger}
	if err := m.catalog.Open(); err != nil {
		return err
	}
	if m.project == "" {
		// A replica restarting on its data directory serves the project it was built from.
		if _, p := m.catalog.Identity(); p != "" {
			m.project = p
		} else if err := m.connect(ctx); err != nil {
			return err
		}
	}
	// The full-text index lives next to the catalog; like it, it can be deleted at any
	// time and is rebuilt from the stream.
	// It opens in the background (seconds for a large one): view and tree need only the
	// catalog, and search says the index is opening until then.
	m.index = &index.Index{Dir: filepath.Join(m.dataDir(), "query", "index"), Logger: m.Logger}
	m.indexOpen = make(chan error, 1)
	go func() { m.indexOpen <- m.index.Open() }()
	// In all-in-one mode this is the only query process of the project, so at start every
	// session document on the stream of no recorded live session is one of a session that
	// did not survive the restart (stdio).
	m.sessions = &session.Registry{Project: m.project, Catalog: m.catalog,
		TTL: m.Config.SessionTTL, MaxDocBytes: m.Config.SessionMaxSize, Exclusive: m.Config.Root != "", Logger: m.Logger}
	m.srv = &mcpserver.Server{Project: m.project, Catalog: m.catalog, Index: m.index, Sessions: m.sessions,
		Limits: query.Limits{MaxChars: m.Config.MaxChars}, Logger: m.Logger, ToolPrefix: m.Config.ToolPrefix, PageSize: m.Config.PageSize}
	m.mcp = m.srv.New()

	fatal := make(chan error, 1)
	m.wg.Go(func() {
		if err := m.follow(ctx); err != nil && ctx.Err() == nil {
			fatal <- err
			cancel()
		}
	})

	served := make(chan error, 1)
	if m.lock != nil {
		ln, err := m.lock.Listen()
		if err != nil {
			return fmt.Errorf("the owner's socket: %w", err)
		}
		if m.Config.HTTPAddr == "" {
			close(m.Ready)
			m.Logger.Info("owner serving MCP on its socket", "socket", owner.Socket(m.dataDir()), "project", m.project)
			go m.exitWhenIdle(ctx, cancel)
		}
		m.wg.Go(func() {
			err := m.serveSocket(ctx, ln)
			if m.Config.HTTPAddr == "" {
				served <- err
			} else if err != nil {
				m.Logger.Error("the owner's socket", "err", err)
			}
		})
	}
	if m.lock != nil && m.Config.HTTPAddr == "" {
		// served by the socket
	} else if m.Config.HTTPAddr != "" {
		go func() { served <- m.serveHTTP(ctx) }()
	} else {
		close(m.Ready)
		m.Logger.Info("serving MCP on stdio", "project", m.project)
		stdio := server.NewStdioServer(m.mcp)
		stdio.SetErrorLogger(slog.NewLogLogger(m.Logger.Handler(), slog.LevelError))
		go func() {
			// One message is bounded like an HTTP request body: a longer one is answered
			// with a parse error, and never held whole in memory.
			in := lineio.LimitLines(m.Stdin, m.Config.MaxBody, func() {
				m.Logger.Warn("refused a stdio message larger than --max-body", "max_bytes", m.Config.MaxBody)
			})
			err := stdio.Listen(ctx, in, m.Stdout)
			if err != nil && (errors.Is(err, io.EOF) || ctx.Err() != nil) {
				err = nil
			}
			served <- err
		}()
	}
	select {
	case err := <-fatal:
		<-served
		return err
	case err := <-served:
		return err
	}
}

// connect opens the NATS connection and the stream (creating it in all-in-one mode, waiting
// for the indexer to create it otherwise), and learns the project if none was named.
func (m *Main) connect(ctx context.Context) error {
	if m.stream != nil {
		return nil
	}
	opts, err := m.Config.NATS.Options()
	if err != nil {
		return err
	}
	// A NATS server away at start is an outage like any other: the projections on disk
	// answer meanwhile, the status says the stream cannot be read, and the connection
	// keeps trying, so the process catches up once the server is back.
	opts = append(opts, nats.RetryOnFailedConnect(true))
	b := &broker.Broker{URL: m.Config.NATSURL, Options: opts, Name: "guide-mcp", Logger: m.Logger}
	if m.Config.Root != "" {
		// The project's other processes (an indexer) publish through this server: on
		// loopback, with a token written in the owner's record, readable by this user only.
		b.StoreDir, b.Listen, b.Token = filepath.Join(m.dataDir(), "nats"), "127.0.0.1:-1", owner.NewToken()
	}
	if err := b.Open(); err != nil {
		return err
	}
	if m.lock != nil {
		if err := m.lock.Publish(owner.Record{Role: "guide-mcp", Socket: owner.Socket(m.dataDir()),
			NATSURL: b.ClientURL(), Token: b.Token}); err != nil {
			return fmt.Errorf("the owner's record: %w", err)
		}
	}
	stream := &events.Stream{Conn: b.Conn}
	m.mu.Lock()
	m.broker, m.stream = b, stream
	m.mu.Unlock()
	if m.Config.Root != "" {
		if err := stream.Open(ctx); err != nil {
			return err
		}
	} else if err := stream.AwaitBind(ctx, func(err error) {
		m.Logger.Info("waiting for the stream; is an indexer running?", "err", err)
	}); err != nil {
		return err
	}
	if m.project == "" {
		p, err := stream.AwaitProject(ctx, func() {
			m.Logger.Info("waiting for a project on the stream; pass --project to name one")
		})
		if errors.Is(err, events.ErrSeveralProjects) {
			return fmt.Errorf("%w: %w; pass --project", mcpserver.ErrNoProject, err)
		}
		if err != nil {
			return err
		}
		m.project = p
	}
	return nil
}

// The projections apply at least releaseEvery events before their garbage is handed back
// to the system once they are idle again, and at most once every releaseGap: under a
// steady churn, every second's batch would otherwise pay for a full collection.
const (
	releaseEvery = 1000
	releaseGap   = 30 * time.Second
)

// releaseAfterCatchUp hands the memory a catch-up used back to the system once every
// projection has applied everything it was sent. A cold index of 100k documents leaves
// hundreds of megabytes the runtime would otherwise keep for a long time; what stays
// resident is what following the stream needs.
func releaseAfterCatchUp(ctx context.Context, r *projection.Runner) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var released uint64
	var at time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		applied := r.Applied()
		if applied < released+releaseEvery || time.Since(at) < releaseGap {
			continue
		}
		idle := true
		for _, p := range r.Projections {
			pending, _ := r.Lag(p)
			idle = idle && pending == 0 && p.Checkpoint() == applied
		}
		if idle {
			debug.FreeOSMemory()
			for _, p := range r.Projections {
				if m, ok := p.(interface{ Release() }); ok {
					m.Release() // pages of mapped files
				}
			}
			released, at = applied, time.Now()
		}
	}
}

// follow connects, then feeds the projections from the stream (and, all-in-one, runs the
// indexer) until ctx ends.
func (m *Main) follow(ctx context.Context) error {
	connected := m.connecting
	if connected == nil {
		connected = make(chan error, 1)
		connected <- m.connect(ctx)
	}
	if err := <-connected; err != nil {
		return err
	}
	m.srv.ConnectSessions(m.stream) // the index may take seconds to open
	if err := <-m.indexOpen; err != nil {
		return err
	}
	runner := &projection.Runner{Stream: m.stream, Project: m.project,
		Projections: append([]projection.Projection{m.catalog, m.index}, m.Projections...), Logger: m.Logger}
	m.mu.Lock()
	m.runner = runner
	m.mu.Unlock()
	m.srv.Connect(m.stream, runner) // and the session registry with it
	var wg sync.WaitGroup
	wg.Go(func() { m.sessions.Run(ctx, runner.CaughtUp()) })
	wg.Go(func() { releaseAfterCatchUp(ctx, runner) })
	wg.Go(func() {
		if err := runner.Run(ctx); err != nil {
			m.Logger.Error("projections stopped", "err", err)
		}
	})
	if m.Config.Root != "" {
		x := &reconcile.Indexer{Root: m.Config.Root, Project: m.project, Stream: m.stream, Interval: m.Config.Interval,
			Ignore: m.Config.Ignore, NoGitignore: m.Config.NoGitignore, ConfigFile: m.Config.ConfigFile, Logger: m.Logger, Skip: datadir.SkipInside(m.Config.Root, m.dataDir()),
			StateFile: filepath.Join(m.dataDir(), "nats", reconcile.StateFileName)}
		wg.Go(func() {
			if err := x.Run(ctx); err != nil {
				m.Logger.Error("indexer stopped", "err", err)
			}
		})
	}
	wg.Wait()
	// Sessions that live only in this process (stdio) end with it: their documents go
	// while the stream is still there (the broker closes after this returns). Issued
	// sessions (HTTP) live on in the session store, for this process restarted or another.
	ectx, ecancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ecancel()
	m.sessions.EndAll(ectx)
	return nil
}

func (m *Main) serveHTTP(ctx context.Context) error {
	token, err := httpserve.ReadToken(m.Config.TokenFile, tokenEnv)
	if err != nil {
		return err
	}
	met := metrics.New(m.srv.Freshness, m.Config.ReadyMaxLag)
	m.metrics = met
	met.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "guide_session_documents",
		Help: "Documents attached to MCP sessions, in the catalog.",
	}, func() float64 { return float64(m.sessions.Documents()) }))
	m.mcp.Use(mcpserver.ToolObserver(met.ObserveTool))
	hs := &httpserve.Server{
		Addr: m.Config.HTTPAddr, Token: token, AllowedHosts: m.Config.AllowedHosts, AllowedOrigins: m.Config.AllowedOrigins,
		TLSCert: m.Config.TLSCert, TLSKey: m.Config.TLSKey, MaxBodyBytes: m.Config.MaxBody, ShutdownWait: m.Config.ShutdownWait,
		// The transport's own localhost check knows no --allowed-host; httpserve checks Host.
		MCP: m.srv.HTTPHandler(m.mcp, server.WithEndpointPath("/mcp"),
			server.WithDisableLocalhostProtection(true),
			server.WithSessionIdleTTL(m.sessionTTL()), // which ends an idle session here too
			server.WithStreamableHTTPLogger(m.Logger)),
		Metrics: met.Handler(),
		Web: (&web.Server{Project: m.project, Catalog: m.catalog, Index: m.index, Sessions: m.sessions,
			Limits: query.Limits{MaxChars: m.Config.MaxChars}, Freshness: m.srv.Freshness,
			Token: token, Secure: m.Config.TLSCert != "", MaxBodyBytes: m.Config.MaxBody, Logger: m.Logger}).Handler(),
		Health: func(ctx context.Context) (bool, any) {
			h := m.srv.Freshness.Health(ctx, m.Config.ReadyMaxLag)
			return h.Ready, h
		},
		Logger: m.Logger,
	}
	if err := hs.Listen(); err != nil {
		return err
	}
	m.addr = hs.ListenAddr()
	m.Logger.Info("serving MCP over Streamable HTTP and the web page", "url", hs.URL()+"/mcp", "page", hs.URL()+"/", "project", m.project,
		"token", token != "", "tls", m.Config.TLSCert != "")
	close(m.Ready)
	return hs.Serve(ctx)
}

func (m *Main) sessionTTL() time.Duration {
	if m.Config.SessionTTL > 0 {
		return m.Config.SessionTTL
	}
	return session.DefaultTTL
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
	return errors.Join(errs...)
}
