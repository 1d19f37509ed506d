package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/bridge"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/lineio"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/owner"
)

// bridges reports whether this process is a stdio bridge to the project's owner: a stdio
// client with --root.
func (m *Main) bridges() bool {
	return m.Config.Root != "" && m.Config.HTTPAddr == "" && !m.Config.ServeOwner
}

// servesRoots reports whether this process serves the client's roots: a stdio client with
// no --root (nor --nats).
func (m *Main) servesRoots() bool {
	return m.Config.Root == "" && m.Config.NATSURL == "" && m.Config.HTTPAddr == "" && !m.Config.ServeOwner
}

// execBridge replaces this process with the bridge binary installed beside it, when this
// process is a bridge: a client then holds a few megabytes rather than the whole server's
// binary and what its packages set up at start. It returns only when the bridge binary
// cannot run (not installed, say): this process then bridges itself, as well but larger.
func (m *Main) execBridge() {
	if !m.bridges() && !m.servesRoots() {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		m.Logger.Debug("bridging in this process", "err", err)
		return
	}
	m.project = m.Config.Project
	path := filepath.Join(filepath.Dir(exe), bridge.Binary)
	c := bridge.Command{Dir: m.dataDir(), MaxLine: m.Config.MaxBody, LogLevel: m.Config.LogLevel, Owner: exe, Args: m.Args}
	env := os.Environ()
	if m.Config.Root == "" {
		// The client's roots name the folder: the bridge answers the handshake as this
		// program's server would, and learns each root's data directory.
		c.Roots, c.Dir, c.Project = true, m.Config.DataDir, m.Config.Project
		h, err := m.handshake(context.Background())
		if err != nil {
			m.Logger.Warn("serving the client's roots in this process", "err", err)
			return
		}
		b, err := json.Marshal(h)
		if err != nil {
			m.Logger.Warn("serving the client's roots in this process", "err", err)
			return
		}
		env = append(env, bridge.HandshakeEnv+"="+string(b))
	}
	err = syscall.Exec(path, append([]string{path}, c.Argv()...), env)
	if errors.Is(err, os.ErrNotExist) {
		m.Logger.Debug("no bridge binary beside guide-mcp; bridging in this process", "path", path)
	} else {
		m.Logger.Warn("the bridge binary did not run; bridging in this process", "path", path, "err", err)
	}
}

// bridge serves a stdio client through the project's owner, starting one if none runs.
func (m *Main) bridge(ctx context.Context) error {
	close(m.Ready)
	// One message is bounded as the owner bounds a request body: a longer one is answered
	// with a parse error, and never held whole in memory.
	in := lineio.LimitLines(m.Stdin, m.Config.MaxBody, func() {
		m.Logger.Warn("refused a stdio message larger than --max-body", "max_bytes", m.Config.MaxBody)
	})
	b := &bridge.Bridge{Dir: m.dataDir(), Start: m.startOwner, In: in, Out: m.Stdout, Logger: m.Logger}
	return b.Run(ctx)
}

// startOwner starts this program as the project's owner daemon, with the client's flags.
func (m *Main) startOwner() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return owner.StartDaemon(m.dataDir(), exe, append([]string{"--serve-owner"}, m.Args...))
}

// serveRoots serves a stdio client that named no folder: the client's roots name it (see
// bridge.Front); each root is served exactly as guide-mcp --root would serve it.
func (m *Main) serveRoots(ctx context.Context) error {
	close(m.Ready)
	h, err := m.handshake(ctx)
	if err != nil {
		return err
	}
	f := &bridge.Front{
		// One message is bounded as on the owner: a longer one is a parse error.
		In: lineio.LimitLines(m.Stdin, m.Config.MaxBody, func() {
			m.Logger.Warn("refused a stdio message larger than --max-body", "max_bytes", m.Config.MaxBody)
		}),
		Out: m.Stdout, Logger: m.Logger, Handshake: h, Serve: m.serveRoot,
	}
	return f.Run(ctx)
}

// handshake is what this program's MCP server answers to initialize and tools/list, with
// these flags, before any project is open.
func (m *Main) handshake(ctx context.Context) (*bridge.Handshake, error) {
	srv := (&mcpserver.Server{Index: &index.Index{}, Logger: m.Logger, ToolPrefix: m.Config.ToolPrefix,
		PageSize: 1 << 20}).New() // every tool on one page
	ask := func(method mcp.MCPMethod, params any, into any) error {
		req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		if err != nil {
			return err
		}
		answer, err := json.Marshal(srv.HandleMessage(ctx, req))
		if err != nil {
			return err
		}
		var r struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(answer, &r); err != nil || r.Result == nil {
			return fmt.Errorf("the server's %s: %s", method, answer)
		}
		return json.Unmarshal(r.Result, into)
	}
	h := &bridge.Handshake{Versions: map[string]string{}, Latest: mcp.NegotiateLegacyVersion("unknown")}
	for _, v := range append([]string{""}, mcp.ValidProtocolVersions...) {
		h.Versions[v] = mcp.NegotiateLegacyVersion(v)
	}
	if err := ask(mcp.MethodInitialize, map[string]any{"protocolVersion": h.Latest, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "guide-mcp", "version": mcpserver.Version}}, &h.Initialize); err != nil {
		return nil, err
	}
	delete(h.Initialize, "protocolVersion")
	if err := ask(mcp.MethodToolsList, map[string]any{}, &h.Tools); err != nil {
		return nil, err
	}
	return h, nil
}

// serveRoot is guide-mcp --root root, with the rest of this command line, on in and out.
func (m *Main) serveRoot(ctx context.Context, root string, in io.Reader, out io.Writer) error {
	args := append([]string{"--root", root}, m.Args...)
	sub := &Main{Args: args, Stdin: in, Stdout: out, Logger: m.Logger.With("root", root)}
	if err := sub.ParseFlags(args); err != nil {
		return err
	}
	err := sub.Run(ctx)
	return errors.Join(err, sub.Close())
}
