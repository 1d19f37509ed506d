// Package testkit starts the real parts tests run against: an embedded NATS server with
// JetStream, the stream, and whole pipelines (indexer → stream → catalog → MCP server with
// an in-process MCP client). No test builds its own scaffolding.
package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/reconcile"
	"github.com/guide/guide/internal/text"
)

// Logger is a logger for tests: warnings and errors only, on stderr.
func Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Context returns a context that ends with the test, bounded so that a hang fails.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// NATS starts an embedded NATS server with JetStream in a temporary directory, with no
// network listener, and connects to it. Both stop when the test ends.
func NATS(t testing.TB) *broker.Broker {
	t.Helper()
	b := &broker.Broker{StoreDir: t.TempDir(), Name: t.Name(), Logger: Logger()}
	if err := b.Open(); err != nil {
		t.Fatalf("embedded NATS: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// NATSListening is NATS with a loopback listener on a free port, for other processes.
func NATSListening(t testing.TB) *broker.Broker {
	t.Helper()
	b := &broker.Broker{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1", Name: t.Name(), Logger: Logger()}
	if err := b.Open(); err != nil {
		t.Fatalf("embedded NATS: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// Stream opens the event stream on b.
func Stream(t testing.TB, b *broker.Broker) *events.Stream {
	t.Helper()
	s := &events.Stream{Conn: b.Conn}
	if err := s.Open(Context(t)); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return s
}

// CopyTree copies a tree (usually under testdata/) into a temporary directory, so that a
// test may change it.
func CopyTree(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

// CopyDir copies the files under src into dst (a data directory, to damage a copy of it).
func CopyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // sockets, locks' pipes
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// WriteFile writes a file of a tree, creating its folders.
func WriteFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Pipeline is a whole query pipeline over one content root: indexer, stream, catalog,
// runner, MCP server and an in-process MCP client.
type Pipeline struct {
	Root    string
	Project string
	DataDir string
	Broker  *broker.Broker
	Stream  *events.Stream
	Indexer *reconcile.Indexer
	Catalog *projection.Catalog
	Index   *index.Index
	Runner  *projection.Runner
	Server  *mcpserver.Server
	MCP     *server.MCPServer
	Client  *client.Client

	// Configure, when set, adjusts the MCP server before it is built (tool prefix, limits, clock).
	Configure func(*mcpserver.Server)

	t      testing.TB
	cancel context.CancelFunc
	done   chan struct{}
}

// NewPipeline starts a pipeline over root on b (a fresh embedded server when nil), with the
// catalog in dataDir (a temporary directory when ""). It does not scan: call Reconcile.
// configure, if given, adjusts the MCP server before it is built.
func NewPipeline(t testing.TB, b *broker.Broker, root, dataDir string, configure ...func(*mcpserver.Server)) *Pipeline {
	t.Helper()
	if b == nil {
		b = NATS(t)
	}
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	p := &Pipeline{Root: root, Project: "test", DataDir: dataDir, Broker: b, Stream: Stream(t, b), t: t}
	p.Indexer = &reconcile.Indexer{Root: root, Project: p.Project, Stream: p.Stream, Logger: Logger()}
	p.Configure = func(s *mcpserver.Server) {
		for _, c := range configure {
			c(s)
		}
	}
	p.Start()
	t.Cleanup(p.Stop)
	return p
}

// Start opens the catalog and the index, starts the runner and connects an MCP client.
func (p *Pipeline) Start() {
	t := p.t
	t.Helper()
	// As guide-mcp, the catalog hands the index the Markdown it parsed.
	md := text.NewMarkdownHandoff(1024)
	p.Catalog = &projection.Catalog{Dir: p.DataDir, Logger: Logger(), Markdown: md}
	if err := p.Catalog.Open(); err != nil {
		t.Fatalf("catalog: %v", err)
	}
	p.Index = &index.Index{Dir: filepath.Join(p.DataDir, "index"), Logger: Logger(), Markdown: md}
	if err := p.Index.Open(); err != nil {
		t.Fatalf("index: %v", err)
	}
	p.Runner = &projection.Runner{Stream: p.Stream, Project: p.Project,
		Projections: []projection.Projection{p.Catalog, p.Index}, Logger: Logger()}
	p.Server = &mcpserver.Server{Project: p.Project, Catalog: p.Catalog, Index: p.Index, Runner: p.Runner, Stream: p.Stream,
		Logger: Logger(), InitialWait: 10 * time.Second}
	if p.Configure != nil {
		p.Configure(p.Server)
	}
	p.MCP = p.Server.New()
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go func() { defer close(p.done); _ = p.Runner.Run(ctx) }()
	c, err := client.NewInProcessClient(p.MCP)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(Context(t)); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "testkit", Version: "0"}
	if _, err := c.Initialize(Context(t), init); err != nil {
		t.Fatal(err)
	}
	p.Client = c
}

// Stop stops the runner and closes the client and the catalog; the broker stays up.
func (p *Pipeline) Stop() {
	if p.cancel == nil {
		return
	}
	p.cancel()
	<-p.done
	_ = p.Client.Close()
	_ = p.Index.Close()
	_ = p.Catalog.Close()
	p.cancel = nil
}

// Watch runs the indexer with its watcher until the test ends (or Stop).
func (p *Pipeline) Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Indexer.Run(ctx) }()
	p.t.Cleanup(func() { cancel(); <-done })
}

// Reconcile runs the indexer once and waits until the catalog has applied what it published.
func (p *Pipeline) Reconcile() reconcile.Summary {
	t := p.t
	t.Helper()
	sum, err := p.Indexer.Reconcile(Context(t))
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	p.WaitApplied(sum.StreamSeq)
	return sum
}

// WaitApplied waits until the catalog and the index have applied the stream up to seq.
func (p *Pipeline) WaitApplied(seq uint64) {
	t := p.t
	t.Helper()
	Eventually(t, 30*time.Second, func() (bool, string) {
		c, x := p.Catalog.Checkpoint(), p.Index.Checkpoint()
		return c >= seq && x >= seq, fmt.Sprintf("catalog at %d, index at %d, want %d (runner: %v)", c, x, seq, p.Runner.Err())
	})
}

// Call calls a tool and returns its result.
func (p *Pipeline) Call(tool string, args map[string]any) *mcp.CallToolResult {
	p.t.Helper()
	return Call(p.t, p.Client, tool, args)
}

// Call calls a tool through any MCP client.
func Call(t testing.TB, c client.MCPClient, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(Context(t), req)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	return res
}

// ReadResource reads a resource through the pipeline's client and returns its text and MIME type.
func (p *Pipeline) ReadResource(uri string) (text, mimeType string) {
	t := p.t
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := p.Client.ReadResource(Context(t), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		if tc, ok := c.(mcp.TextResourceContents); ok {
			b.WriteString(tc.Text)
			mimeType = tc.MIMEType
		}
	}
	return b.String(), mimeType
}

// Text returns a tool result's text content.
func Text(t testing.TB, r *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Decode unmarshals a tool result's JSON text into v and fails on an error result.
func Decode(t testing.TB, r *mcp.CallToolResult, v any) {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", Text(t, r))
	}
	if err := json.Unmarshal([]byte(Text(t, r)), v); err != nil {
		t.Fatalf("decode %q: %v", Text(t, r), err)
	}
}

// Failure is the Result pattern's failure object.
type Failure struct {
	Success     bool   `json:"success"`
	Error       string `json:"error"`
	ErrorType   string `json:"error_type"`
	Instruction string `json:"instruction"`
}

// DecodeFailure returns the failure object of an error result, and fails on success.
func DecodeFailure(t testing.TB, r *mcp.CallToolResult) Failure {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want an error result, got %s", Text(t, r))
	}
	var f Failure
	if err := json.Unmarshal([]byte(Text(t, r)), &f); err != nil {
		t.Fatalf("decode failure %q: %v", Text(t, r), err)
	}
	return f
}

// Equal fails the test when got and want differ.
func Equal[T any](t testing.TB, got, want T, what string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}

// NoErr fails the test on an error.
func NoErr(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Catalog returns an open catalog holding files (path → content) and a completed scan,
// built by applying events directly, without NATS.
func Catalog(t testing.TB, files map[string]string) *projection.Catalog {
	t.Helper()
	c := &projection.Catalog{Dir: t.TempDir(), Logger: Logger()}
	if err := c.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var b events.Batch
	var seq uint64
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		seq++
		content := []byte(files[p])
		e := events.Event{Op: events.OpUpsert, Project: "test", Path: p, Size: int64(len(content)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(content), Status: events.StatusOK,
			Content: content, Seq: seq}
		if bytes.IndexByte(content, 0) >= 0 {
			e.Status, e.Reason, e.Content = events.StatusBinary, "binary content", nil
		}
		b.Events = append(b.Events, e)
	}
	seq++
	b.Events = append(b.Events, events.Event{Op: events.OpScanEnd, Project: "test", Seq: seq,
		Scan: &events.Scan{ID: "testkit", Documents: len(files), Published: len(files)}})
	if err := c.Apply(b); err != nil {
		t.Fatal(err)
	}
	return c
}

// NATSClient connects to a NATS server by URL for the test's duration.
func NATSClient(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// NATSClientEventually connects to a NATS server that may still be starting.
func NATSClientEventually(t testing.TB, url string, within time.Duration) *nats.Conn {
	t.Helper()
	var nc *nats.Conn
	Eventually(t, within, func() (bool, string) {
		var err error
		nc, err = nats.Connect(url)
		return err == nil, fmt.Sprintf("connect %s: %v", url, err)
	})
	t.Cleanup(nc.Close)
	return nc
}

// Current is the stream's latest state of every document of project, by path, and the
// sequence it was read up to (events.Stream.Current, gathered).
func Current(ctx context.Context, s *events.Stream, project string) (map[string]events.DocState, uint64, error) {
	docs := map[string]events.DocState{}
	upTo, err := s.Current(ctx, project, func(d events.DocState) { docs[d.Path] = d })
	return docs, upTo, err
}

// PublishDocs publishes n documents of project to s, the i-th at fmt.Sprintf(pathFmt, i)
// holding fmt.Sprintf(contentFmt, i), and waits for the stream to acknowledge them.
func PublishDocs(t testing.TB, s *events.Stream, project, pathFmt, contentFmt string, n int) {
	t.Helper()
	ctx := Context(t)
	pub := s.Publisher()
	for i := range n {
		c := fmt.Appendf(nil, contentFmt, i)
		e := &events.Event{Op: events.OpUpsert, Project: project, Path: fmt.Sprintf(pathFmt, i), Size: int64(len(c)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}
		NoErr(t, pub.Publish(ctx, e), "publish")
	}
	_, err := pub.Flush(ctx)
	NoErr(t, err, "flush")
}

// CPUTime is the process's user and system CPU time: benchmarks report it beside wall
// time, which a shared machine's load moves more.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
