package main

// All-in-one: guide-mcp --root indexes the folder in this process, into the stream of an
// embedded NATS server, and owns the project (owner.go): over HTTP (--http), or as the
// owner daemon that stdio bridges start (bridge.go).

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/cookie"
	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/internal/reconcile"
)

// runAllInOne owns the project, then serves it until ctx ends.
func (m *Main) runAllInOne(ctx context.Context, cancel context.CancelFunc) error {
	if err := m.own(ctx); err != nil {
		return err
	}
	if m.lock == nil {
		return nil // another owner won the race to start
	}
	// An owner whose data directory was deleted would serve deleted files while the next
	// client starts a second owner on a new one: it stops instead.
	lost := make(chan error, 1)
	m.wg.Go(func() {
		if err := m.lock.Watch(ctx, owner.LostCheck); err != nil {
			m.Logger.Error("this owner stops: its data directory is no longer its own", "data", m.dataDir(), "err", err)
			lost <- err
			cancel()
		}
	})
	// The owner's NATS server recovers its stream while the catalog loads: a new owner
	// restores its bridges' sessions from the stream, and answers them once both are done.
	m.connecting = make(chan error, 1)
	m.wg.Go(func() { m.connecting <- m.connect(ctx) })
	if m.Config.SyncWait > 0 {
		root, err := filepath.Abs(m.Config.Root)
		if err == nil {
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			return fmt.Errorf("--root: %w", err)
		}
		m.cookies = cookie.New(root)
	}
	if err := m.openCatalog(); err != nil {
		return err
	}
	m.openServer(ctx)
	fatal := m.startFollowing(ctx, cancel)
	served := make(chan error, 1)
	if err := m.serveOwner(ctx, cancel, served); err != nil {
		return err
	}
	if m.Config.HTTPAddr != "" {
		go func() { served <- m.serveHTTP(ctx) }()
	}
	err := wait(fatal, served)
	select {
	case l := <-lost:
		return l
	default:
		return err
	}
}

// connectOwner starts the project's NATS server, embedded, publishes the owner's record
// that names it, and opens (or creates) the stream on it.
func (m *Main) connectOwner(ctx context.Context) error {
	opts, err := m.natsOptions()
	if err != nil {
		return err
	}
	// The project's other processes (an indexer) publish through this server: on loopback,
	// with a token written in the owner's record, readable by this user only.
	b := &broker.Broker{Options: opts, Name: "guide-mcp", Logger: m.Logger,
		StoreDir: filepath.Join(m.dataDir(), "nats"), Listen: "127.0.0.1:-1", Token: owner.NewToken()}
	if err := b.Open(); err != nil {
		return err
	}
	if err := m.lock.Publish(owner.Record{Role: "guide-mcp", Socket: owner.Socket(m.dataDir()),
		NATSURL: b.ClientURL(), Token: b.Token}); err != nil {
		return fmt.Errorf("the owner's record: %w", err)
	}
	return m.setBroker(b).Open(ctx)
}

// indexFolder runs the indexer of the folder, publishing to the owner's stream, until ctx
// ends.
func (m *Main) indexFolder(ctx context.Context) {
	x := &reconcile.Indexer{Root: m.Config.Root, Project: m.project, Stream: m.stream, Interval: m.Config.Interval,
		Ignore: m.Config.Ignore, NoGitignore: m.Config.NoGitignore, ConfigFile: m.Config.ConfigFile, Logger: m.Logger, Skip: datadir.SkipInside(m.Config.Root, m.dataDir()),
		StateFile: filepath.Join(m.dataDir(), "nats", reconcile.StateFileName), Cookies: m.cookies}
	m.srv.Freshness.Writer(x.Err)
	if err := x.Run(ctx); err != nil {
		m.Logger.Error("indexer stopped", "err", err)
	}
}
