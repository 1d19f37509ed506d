package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/reconcile"
	"github.com/guide/guide/internal/testkit"
)

var binDir string

// TestMain builds the real binaries once, for the tests that drive them over stdio.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "guide-bin-")
	if err != nil {
		panic(err)
	}
	cmd := exec.Command("go", "build", "-o", dir, "./cmd/guide-mcp", "./cmd/guide-bridge", "./cmd/indexer")
	cmd.Dir = "../.."
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the binaries:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func initialize(t *testing.T, c *client.Client) {
	t.Helper()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "guide-test", Version: "0"}
	if _, err := c.Initialize(testkit.Context(t), req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

// stdioClient starts the built guide-mcp with args and connects to it over stdio.
func stdioClient(t *testing.T, args ...string) *client.Client {
	t.Helper()
	// With --root, the owner daemon it starts stops soon after its last client.
	c, err := client.NewStdioMCPClient(filepath.Join(binDir, "guide-mcp"), []string{"HOME=" + t.TempDir()}, append(args, "--idle-timeout", "2s")...)
	if err != nil {
		t.Fatalf("start guide-mcp: %v", err)
	}
	for i, a := range args {
		if a == "--data" && i+1 < len(args) {
			t.Cleanup(func() { stopOwners(t, args[i+1]) }) // after Close, below
		}
	}
	t.Cleanup(func() { _ = c.Close() })
	initialize(t, c)
	return c
}

// inProcess runs Main in this process with args; it stops when the test ends.
func inProcess(t *testing.T, args ...string) *Main {
	t.Helper()
	return inProcessWith(t, nil, args...)
}

// eternal is a stdin that never delivers anything.
type eternal struct{}

func (eternal) Read([]byte) (int, error) { select {} }

func httpClient(t *testing.T, m *Main) *client.Client {
	t.Helper()
	return testkit.HTTPClient(t, "http://"+m.Addr().String()+"/mcp", testkit.HTTP{})
}

func reconcileTree(t *testing.T, url, root string) reconcile.Summary {
	t.Helper()
	b := testkit.NATSClient(t, url)
	s := &events.Stream{Conn: b}
	testkit.NoErr(t, s.Open(testkit.Context(t)), "stream")
	x := &reconcile.Indexer{Root: root, Project: "sample", Stream: s, Logger: testkit.Logger()}
	sum, err := x.Reconcile(testkit.Context(t))
	testkit.NoErr(t, err, "reconcile")
	return sum
}

// TestSplitModeOverStdio: an indexer fills a stream on a NATS server; the built guide-mcp
// binary follows it and answers an MCP client over stdio with what is on disk.
func TestSplitModeOverStdio(t *testing.T) {
	nats := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	testkit.WriteFile(t, root, "deep/a/b/c/d/e/f/g/h.md", "below the depth limit of one tree call")
	reconcileTree(t, nats.ClientURL(), root)

	c := stdioClient(t, "--nats", nats.ClientURL(), "--data", t.TempDir())
	st := testkit.WaitCaughtUp(t, c)
	testkit.Equal(t, st.Project, "sample", "the only project on the stream")
	testkit.RequireMatchesDisk(t, c, root)

	// A change reaches the running query process.
	testkit.WriteFile(t, root, "Characters/Elara.md", "rewritten")
	testkit.NoErr(t, os.Remove(filepath.Join(root, "README.md")), "remove")
	reconcileTree(t, nats.ClientURL(), root)
	testkit.EventuallyMatchesDisk(t, c, root, 10*time.Second)
}

// TestAllInOneOverStdio: guide-mcp --root runs everything in one process.
func TestAllInOneOverStdio(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	data := t.TempDir()
	c := stdioClient(t, "--root", root, "--data", data)
	testkit.WaitCaughtUp(t, c)
	oneOwner(t, data) // the stdio process bridges to an owner daemon, stopped with the test
	testkit.RequireMatchesDisk(t, c, root)

	res, err := c.ListTools(testkit.Context(t), mcp.ListToolsRequest{})
	testkit.NoErr(t, err, "list tools")
	// focus, attach and detach change the session's state (never the project's documents).
	sessionState := map[string]bool{"focus": true, "attach": true, "detach": true}
	for _, tool := range res.Tools {
		a := tool.Annotations
		if sessionState[tool.Name] {
			if a.ReadOnlyHint == nil || *a.ReadOnlyHint {
				t.Errorf("tool %s changes the session but is annotated read-only", tool.Name)
			}
			continue
		}
		if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
			t.Errorf("tool %s is not annotated read-only and non-destructive: %+v", tool.Name, a)
		}
	}
}

func TestInputSchemaValidation(t *testing.T) {
	m := inProcess(t, "--root", testkit.CopyTree(t, "../../testdata/sample"), "--data", t.TempDir(), "--http", "127.0.0.1:0")
	c := httpClient(t, m)
	for name, args := range map[string]map[string]any{
		"ErrDepthTooLarge": {"folder": "", "depth": 9},
		"ErrDepthNotInt":   {"folder": "", "depth": "deep"},
		"ErrFolderNotText": {"folder": 42},
	} {
		t.Run(name, func(t *testing.T) {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "tree", args
			res, err := c.CallTool(testkit.Context(t), req)
			if err == nil && !res.IsError {
				t.Fatalf("tree(%v) accepted: %s", args, testkit.Text(t, res))
			}
		})
	}
}

// TestHTTP: the Streamable HTTP transport serves the same tools.
func TestHTTP(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	m := inProcess(t, "--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0")
	c := httpClient(t, m)
	testkit.WaitCaughtUp(t, c)
	testkit.RequireMatchesDisk(t, c, root)
	f := testkit.DecodeFailure(t, testkit.Call(t, c, "view", map[string]any{"path": "../../etc/passwd"}))
	testkit.Equal(t, [2]any{f.Success, f.ErrorType}, [2]any{false, "invalid_path"}, "traversal refused")
}

// TestRestartResumesFromCheckpoint: stop the query process, change files, start it again:
// it resumes after its checkpoint instead of replaying, and ends equal to the disk.
func TestRestartResumesFromCheckpoint(t *testing.T) {
	nats := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	first := reconcileTree(t, nats.ClientURL(), root)
	data := t.TempDir()

	start := func() (*Main, *client.Client, context.CancelFunc, chan error) {
		m := &Main{Logger: testkit.Logger(), Stdin: eternal{}}
		testkit.NoErr(t, m.ParseFlags([]string{"--nats", nats.ClientURL(), "--data", data, "--http", "127.0.0.1:0"}), "flags")
		ctx, cancel := context.WithCancel(context.Background())
		m.Ready = make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		<-m.Ready
		return m, httpClient(t, m), cancel, done
	}
	m, c, cancel, done := start()
	testkit.WaitCaughtUp(t, c)
	testkit.RequireMatchesDisk(t, c, root)
	_ = c.Close()
	cancel()
	testkit.NoErr(t, <-done, "first run")
	m.Close()

	testkit.WriteFile(t, root, "Characters/Elara.md", "changed while the query process was down")
	testkit.WriteFile(t, root, "Plot/new.md", "new")
	testkit.NoErr(t, os.RemoveAll(filepath.Join(root, "Worldbuilding")), "remove folder")
	reconcileTree(t, nats.ClientURL(), root)

	m, c, cancel, done = start()
	defer func() { cancel(); <-done; m.Close() }()
	testkit.WaitCaughtUp(t, c)
	testkit.Equal(t, m.Runner().ResumedFrom(), first.StreamSeq, "resumed after the checkpoint of the first run")
	testkit.RequireMatchesDisk(t, c, root)
}

// TestDeletedDataDirRebuilds: the projections are disposable; deleting them rebuilds them
// from the stream.
func TestDeletedDataDirRebuilds(t *testing.T) {
	nats := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	reconcileTree(t, nats.ClientURL(), root)
	data := t.TempDir()
	c := stdioClient(t, "--nats", nats.ClientURL(), "--data", data)
	testkit.WaitCaughtUp(t, c)
	_ = c.Close()
	testkit.NoErr(t, os.RemoveAll(data), "remove data")
	c = stdioClient(t, "--nats", nats.ClientURL(), "--data", data)
	testkit.WaitCaughtUp(t, c)
	testkit.RequireMatchesDisk(t, c, root)
}

// TestNewStreamRebuildsProjections: a stream deleted and created again is a new history;
// a catalog built from the old one is discarded, not mixed in.
func TestNewStreamRebuildsProjections(t *testing.T) {
	nats := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/sample")
	reconcileTree(t, nats.ClientURL(), root)
	data := t.TempDir()
	c := stdioClient(t, "--nats", nats.ClientURL(), "--data", data)
	testkit.WaitCaughtUp(t, c)
	_ = c.Close()

	s := &events.Stream{Conn: testkit.NATSClient(t, nats.ClientURL())}
	testkit.NoErr(t, s.Open(testkit.Context(t)), "stream")
	testkit.NoErr(t, s.JS.DeleteStream(testkit.Context(t), s.Name), "delete stream")
	other := testkit.CopyTree(t, "../../testdata/sample")
	testkit.NoErr(t, os.RemoveAll(filepath.Join(other, "Characters")), "trim")
	reconcileTree(t, nats.ClientURL(), other)

	c = stdioClient(t, "--nats", nats.ClientURL(), "--data", data)
	testkit.WaitCaughtUp(t, c)
	testkit.RequireMatchesDisk(t, c, other)
}
