package main

// The stdio bridge: guide-mcp over stdio (with --root, or with no --root when the client's
// roots name the folder) reaches the project's owner on this machine, and starts it as a
// daemon when none runs (owner.go, allinone.go). It replaces itself with the bridge binary
// installed beside it; installed alone, it runs the same bridge in its own process.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/bridge"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/mcpserver"
)

// bridges reports whether this process is a stdio bridge to a project's owner: a stdio
// client with --root, or with neither --root nor --nats.
func (m *Main) bridges() bool {
	return m.Config.NATSURL == "" && m.Config.HTTPAddr == "" && !m.Config.ServeOwner
}

// bridgeCommand is the bridge this process is: to the owner of the data directory, or with
// no --root to the owners of the client's roots, answering the handshake as this
// program's MCP server would; this program is the owner a bridge starts.
func (m *Main) bridgeCommand(ctx context.Context) (bridge.Command, error) {
	exe, err := os.Executable()
	if err != nil {
		return bridge.Command{}, err
	}
	c := bridge.Command{Dir: m.dataDir(), MaxLine: m.Config.MaxBody, LogLevel: m.Config.LogLevel, Owner: exe, Args: m.Args}
	if m.Config.Root == "" {
		// The client's roots name the folder: the bridge learns each root's data directory.
		c.Roots, c.Dir, c.Project = true, m.Config.DataDir, m.Config.Project
		c.Handshake, err = m.handshake(ctx)
	}
	return c, err
}

// execBridge replaces this process with the bridge binary installed beside it, when this
// process is a bridge: a client then holds a few megabytes rather than the whole server's
// binary and what its packages set up at start. It returns only when the bridge binary
// cannot run (not installed, say): this process then bridges itself, as well but larger.
func (m *Main) execBridge() {
	if !m.bridges() {
		return
	}
	m.project = m.Config.Project
	c, err := m.bridgeCommand(context.Background())
	if err != nil {
		m.Logger.Warn("bridging in this process", "err", err)
		return
	}
	path := filepath.Join(filepath.Dir(c.Owner), bridge.Binary)
	err = c.Exec(path)
	if errors.Is(err, os.ErrNotExist) {
		m.Logger.Debug("no bridge binary beside guide-mcp; bridging in this process", "path", path)
	} else {
		m.Logger.Warn("the bridge binary did not run; bridging in this process", "path", path, "err", err)
	}
}

// runBridge bridges a stdio client in this process, as the bridge binary does.
func (m *Main) runBridge(ctx context.Context) error {
	close(m.Ready)
	c, err := m.bridgeCommand(ctx)
	if err != nil {
		return err
	}
	return c.Run(ctx, m.Stdin, m.Stdout, m.Logger)
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
	h := &bridge.Handshake{Versions: map[string]string{}, Latest: mcp.NegotiateLegacyVersion("unknown"),
		ToolPrefix: m.Config.ToolPrefix}
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
