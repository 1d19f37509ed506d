package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/bridge"
	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/testkit"
)

// clientRoots are the roots an MCP client offers, as an editor's open folders.
type clientRoots struct {
	mu    sync.Mutex
	roots []mcp.Root
}

func (r *clientRoots) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &mcp.ListRootsResult{Roots: slices.Clone(r.roots)}, nil
}

// set makes the roots these URIs.
func (r *clientRoots) set(uris ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.roots = nil
	for _, u := range uris {
		r.roots = append(r.roots, mcp.Root{URI: u, Name: filepath.Base(u)})
	}
}

// fileURI is the file:// URI of a local path.
func fileURI(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }

// noRootClient starts the built guide-mcp over stdio with no --root, as a user whose data
// home is home; with roots set, the client offers them.
func noRootClient(t *testing.T, home string, roots *clientRoots) *client.Client {
	t.Helper()
	c, _ := noRootClientOf(t, filepath.Join(binDir, "guide-mcp"), home, roots)
	return c
}

// noRootClientOf is noRootClient of the program bin, with its process.
func noRootClientOf(t *testing.T, bin, home string, roots *clientRoots) (*client.Client, *exec.Cmd) {
	t.Helper()
	env := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data")}
	var cmd *exec.Cmd
	tr := transport.NewStdioWithOptions(bin, env, []string{"--idle-timeout", "2s"},
		transport.WithCommandFunc(func(_ context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd = exec.Command(command, args...)
			cmd.Env = append(os.Environ(), env...)
			return cmd, nil
		}))
	var opts []client.ClientOption
	if roots != nil {
		opts = append(opts, client.WithRootsHandler(roots))
	}
	c := client.NewClient(tr, opts...)
	testkit.NoErr(t, c.Start(testkit.Context(t)), "start guide-mcp")
	t.Cleanup(func() { _ = c.Close() })
	initialize(t, c)
	return c, cmd
}

// projectData is the default data directory of the project at root for a user's home.
func projectData(home, root string) string {
	return filepath.Join(home, "data", "guide", datadir.ProjectName(root))
}

// TestClientRootsServed: with no --root, guide-mcp serves the client's one root that is a
// local folder as guide-mcp --root would (the same project, through its owner, the same
// paths); roots that are not local folders are passed over.
func TestClientRootsServed(t *testing.T) {
	home := t.TempDir()
	a := testkit.CopyTree(t, "../../testdata/sample")
	b := t.TempDir()
	testkit.WriteFile(t, b, "other.md", "# Other\n")
	t.Cleanup(func() { stopOwners(t, datadir.Canonical(a)); stopOwners(t, datadir.Canonical(b)) })

	roots := &clientRoots{}
	roots.set("https://example.com/not-a-folder", fileURI(a), fileURI(filepath.Join(b, "other.md")))
	c := noRootClient(t, home, roots)
	st := testkit.WaitCaughtUp(t, c)
	testkit.Equal(t, st.Project, datadir.ProjectName(a), "project of the folder among the roots")
	testkit.RequireMatchesDisk(t, c, a)
	if !owner.Held(projectData(home, a)) {
		t.Errorf("no owner holds %s", projectData(home, a))
	}
	if owner.Held(projectData(home, b)) {
		t.Errorf("a file among the roots is served: want only the folder")
	}
}

// TestClientRootsChange: when the client's roots change, the new root is served, and the
// old project's session ends (its owner, with no client left, stops); before the client
// names a folder, a tool call says how to name one.
func TestClientRootsChange(t *testing.T) {
	home := t.TempDir()
	a := testkit.CopyTree(t, "../../testdata/sample")
	b := t.TempDir()
	testkit.WriteFile(t, b, "notes/b.md", "# B\n\nThe second folder.\n")
	t.Cleanup(func() { stopOwners(t, datadir.Canonical(a)); stopOwners(t, datadir.Canonical(b)) })

	roots := &clientRoots{} // no folder open yet
	c := noRootClient(t, home, roots)
	r := testkit.Call(t, c, "list", map[string]any{})
	if !r.IsError || !strings.Contains(testkit.Text(t, r), "--root") || !strings.Contains(testkit.Text(t, r), "no local folder") {
		t.Fatalf("list with no folder = %v %q; want an error naming --root", r.IsError, testkit.Text(t, r))
	}

	roots.set(fileURI(a))
	testkit.NoErr(t, c.RootListChanges(testkit.Context(t)), "roots changed")
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		r := testkit.Call(t, c, "list", map[string]any{})
		return !r.IsError, "still no folder served: " + testkit.Text(t, r)
	})
	testkit.Equal(t, testkit.WaitCaughtUp(t, c).Project, datadir.ProjectName(a), "project of the first root")
	testkit.RequireMatchesDisk(t, c, a)

	roots.set(fileURI(b))
	testkit.NoErr(t, c.RootListChanges(testkit.Context(t)), "roots changed")
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		st := testkit.ReadStatus(t, c)
		return st.Project == datadir.ProjectName(b), "serving " + st.Project
	})
	testkit.WaitCaughtUp(t, c)
	testkit.RequireMatchesDisk(t, c, b)
	// The old project's owner lost its only client: it stops once idle.
	testkit.Eventually(t, 30*time.Second, func() (bool, string) {
		return !owner.Held(projectData(home, a)), "the first root's owner still has a client"
	})
}

// TestNoRootsNamesTheFix: a client that offers no roots, and no --root: the handshake
// succeeds and the tools are listed, and every call says how to name the folder.
func TestNoRootsNamesTheFix(t *testing.T) {
	c := noRootClient(t, t.TempDir(), nil)
	tools, err := c.ListTools(testkit.Context(t), mcp.ListToolsRequest{})
	testkit.NoErr(t, err, "list tools")
	root := testkit.CopyTree(t, "../../testdata/sample")
	want, err := stdioClient(t, "--root", root, "--data", t.TempDir()).ListTools(testkit.Context(t), mcp.ListToolsRequest{})
	testkit.NoErr(t, err, "list the tools of a project")
	if got, want := toolNames(tools.Tools), toolNames(want.Tools); !slices.Equal(got, want) {
		t.Errorf("tools = %v; want a project's tools, %v", got, want)
	}
	r := testkit.Call(t, c, "search", map[string]any{"query": "x"})
	text := testkit.Text(t, r)
	for _, want := range []string{"no MCP roots", `"args": ["--root", "/path/to/docs"]`, "guide-mcp --root /path/to/docs"} {
		if !r.IsError || !strings.Contains(text, want) {
			t.Errorf("search with no folder = %v %q; want an error that says %q", r.IsError, text, want)
		}
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "guide://_status"
	if _, err := c.ReadResource(testkit.Context(t), req); err == nil || !strings.Contains(err.Error(), "--root") {
		t.Errorf("read status with no folder: err = %v; want one naming --root", err)
	}
}

func toolNames(tools []mcp.Tool) []string {
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestHandshakeAnswersAsTheServer: the handshake a front answers before it serves a root is
// the one the MCP server answers, whatever protocol version the client asks for.
func TestHandshakeAnswersAsTheServer(t *testing.T) {
	m := &Main{Logger: testkit.Logger()}
	testkit.NoErr(t, m.ParseFlags([]string{"--tool-prefix", "g_"}), "flags")
	h, err := m.handshake(testkit.Context(t))
	testkit.NoErr(t, err, "handshake")
	srv := (&mcpserver.Server{Index: &index.Index{}, Logger: m.Logger, ToolPrefix: "g_"}).New()
	for _, v := range append([]string{"", "1999-01-01"}, mcp.ValidProtocolVersions...) {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, v)
		want, err := json.Marshal(srv.HandleMessage(testkit.Context(t), []byte(req)))
		testkit.NoErr(t, err, "marshal")
		sameJSON(t, h.Answer(testkit.Context(t), []byte(req)), want, "initialize asking for "+v)
	}
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	want, err := json.Marshal(srv.HandleMessage(testkit.Context(t), req))
	testkit.NoErr(t, err, "marshal")
	sameJSON(t, h.Answer(testkit.Context(t), req), want, "tools/list")
}

func sameJSON(t *testing.T, got, want []byte, what string) {
	t.Helper()
	var g, w any
	testkit.NoErr(t, json.Unmarshal(got, &g), what)
	testkit.NoErr(t, json.Unmarshal(want, &w), what)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// TestNoRootRunsTheBridgeBinary: with no --root, guide-mcp replaces itself with the small
// bridge binary too, which serves the client's roots; installed alone, guide-mcp serves
// them in its own process.
func TestNoRootRunsTheBridgeBinary(t *testing.T) {
	alone := filepath.Join(t.TempDir(), "guide-mcp")
	copyFile(t, filepath.Join(binDir, "guide-mcp"), alone, 0o755)
	for _, tc := range []struct{ bin, runs string }{
		{filepath.Join(binDir, "guide-mcp"), bridge.Binary},
		{alone, "guide-mcp"},
	} {
		t.Run(tc.runs, func(t *testing.T) {
			home, root := t.TempDir(), testkit.CopyTree(t, "../../testdata/sample")
			t.Cleanup(func() { stopOwners(t, datadir.Canonical(root)) })
			roots := &clientRoots{}
			roots.set(fileURI(root))
			c, cmd := noRootClientOf(t, tc.bin, home, roots)
			testkit.Equal(t, testkit.WaitCaughtUp(t, c).Project, datadir.ProjectName(root), "project of the root")
			testkit.RequireMatchesDisk(t, c, root)
			testkit.Equal(t, exeOf(t, cmd.Process.Pid), tc.runs, "the client's process runs")
		})
	}
}
