package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/owner"
)

// serveRoots serves a stdio client that named no folder: the client's roots name it (see
// owner.Front). The handshake is answered by a server with the same tools as a project's,
// built here; each root is served exactly as guide-mcp --root would serve it.
func (m *Main) serveRoots(ctx context.Context) error {
	close(m.Ready)
	template := (&mcpserver.Server{Index: &index.Index{}, Logger: m.Logger, ToolPrefix: m.Config.ToolPrefix,
		PageSize: m.Config.PageSize}).New()
	f := &owner.Front{
		// One message is bounded as on the owner: a longer one is a parse error.
		In: mcpserver.LimitLines(m.Stdin, m.Config.MaxBody, func() {
			m.Logger.Warn("refused a stdio message larger than --max-body", "max_bytes", m.Config.MaxBody)
		}),
		Out:    m.Stdout,
		Logger: m.Logger,
		Answer: func(ctx context.Context, msg []byte) []byte {
			b, err := json.Marshal(template.HandleMessage(ctx, msg))
			if err != nil {
				panic(err) // a message the server built
			}
			return b
		},
		Serve: m.serveRoot,
	}
	return f.Run(ctx)
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
