package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/reconcile"
)

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
