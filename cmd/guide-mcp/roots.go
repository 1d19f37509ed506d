package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/bridge"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/lineio"
	"github.com/guide/guide/internal/mcpserver"
)

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
