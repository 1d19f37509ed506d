package main

// A replica: guide-mcp --nats follows a stream that an indexer fills elsewhere, and answers
// over stdio or HTTP (http.go); any number of them may follow one stream.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/lineio"
	"github.com/guide/guide/internal/mcpserver"
)

// runReplica serves the projections of the stream until ctx ends or, on stdio, until the
// client closes its end.
func (m *Main) runReplica(ctx context.Context, cancel context.CancelFunc) error {
	// The projections answer on their own: open them first and serve at once, and reach
	// NATS in the background. A restarted query process answers in the time it takes to
	// load its catalog, however long NATS takes to recover its stream.
	if m.project == "" && m.Config.DataDir == "" {
		if err := m.connect(ctx); err != nil { // the data directory is named after the project
			return err
		}
	}
	var err error
	if m.parts, err = m.partitionSet(ctx); err != nil {
		return err
	}
	if err := m.openCatalog(); err != nil {
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
	m.openServer(ctx)
	fatal := m.startFollowing(ctx, cancel)
	served := make(chan error, 1)
	if m.Config.HTTPAddr != "" {
		go func() { served <- m.serveHTTP(ctx) }()
	} else {
		go func() { served <- m.serveStdio(ctx) }()
	}
	return wait(fatal, served)
}

// connectReplica connects to the NATS servers of --nats, waits for an indexer to create
// the stream, and learns the project from it if none was named.
func (m *Main) connectReplica(ctx context.Context) error {
	opts, err := m.natsOptions()
	if err != nil {
		return err
	}
	b := &broker.Broker{URL: m.Config.NATSURL, Options: opts, Name: "guide-mcp", Logger: m.Logger}
	if err := b.Open(); err != nil {
		return err
	}
	stream := m.setBroker(b)
	if err := stream.AwaitBind(ctx, func(err error) {
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
	return m.checkPartitions()
}

// serveStdio serves MCP on stdio until the client closes its end or ctx ends.
func (m *Main) serveStdio(ctx context.Context) error {
	close(m.Ready)
	m.Logger.Info("serving MCP on stdio", "project", m.project)
	stdio := server.NewStdioServer(m.mcp)
	stdio.SetErrorLogger(slog.NewLogLogger(m.Logger.Handler(), slog.LevelError))
	// One message is bounded like an HTTP request body: a longer one is answered with a
	// parse error, and never held whole in memory.
	in := lineio.LimitLines(m.Stdin, m.Config.MaxBody, func() {
		m.Logger.Warn("refused a stdio message larger than --max-body", "max_bytes", m.Config.MaxBody)
	})
	err := stdio.Listen(ctx, in, m.Stdout)
	if err != nil && (errors.Is(err, io.EOF) || ctx.Err() != nil) {
		err = nil
	}
	return err
}
