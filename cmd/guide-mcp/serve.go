package main

// What both serving modes (allinone.go, replica.go) share: the connection to the stream,
// the projections opened from the data directory, and the following of the stream.

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/backoff"
	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
	"github.com/guide/guide/internal/text"
)

// connect opens the NATS connection and the stream, once: on the owner's embedded server
// all-in-one, on the servers of --nats for a replica.
func (m *Main) connect(ctx context.Context) error {
	if m.stream != nil {
		return nil
	}
	if m.Config.Root != "" {
		return m.connectOwner(ctx)
	}
	return m.connectReplica(ctx)
}

// natsOptions are the options of the NATS connection.
func (m *Main) natsOptions() ([]nats.Option, error) {
	opts, err := m.Config.NATS.Options()
	if err != nil {
		return nil, err
	}
	// A NATS server away at start is an outage like any other: the projections on disk
	// answer meanwhile, the status says the stream cannot be read, and the connection
	// keeps trying, so the process catches up once the server is back.
	return append(opts, nats.RetryOnFailedConnect(true)), nil
}

// setBroker keeps the broker this process opened, and returns the stream on it.
func (m *Main) setBroker(b *broker.Broker) *events.Stream {
	stream := &events.Stream{Conn: b.Conn}
	m.mu.Lock()
	m.broker, m.stream = b, stream
	m.mu.Unlock()
	return stream
}

// markdownHandoff returns what the catalog hands the search index, made at the first call
// (before the projections open, on one goroutine).
func (m *Main) markdownHandoff() *text.MarkdownHandoff {
	if m.markdown == nil {
		m.markdown = text.NewMarkdownHandoff(text.HandoffDocuments)
	}
	return m.markdown
}

// openCatalog opens the catalog in the data directory.
func (m *Main) openCatalog() error {
	m.catalog = &projection.Catalog{Dir: filepath.Join(m.dataDir(), "query"), Logger: m.Logger, Markdown: m.markdownHandoff()}
	if !m.parts.Whole() {
		m.catalog.Holds, m.catalog.Fetch = m.parts.Holds, m.partitionClient().Fetch
		m.catalog.Partition = m.parts.Of
	}
	return m.catalog.Open()
}

// openServer opens the full-text index in the background, and builds the session registry
// and the MCP server over the projections.
func (m *Main) openServer(ctx context.Context) {
	// The full-text index lives next to the catalog; like it, it can be deleted at any
	// time and is rebuilt from the stream.
	// It opens in the background (seconds for a large one): view and tree need only the
	// catalog, and search says the index is opening until then.
	m.index = &index.Index{Dir: filepath.Join(m.dataDir(), "query", "index"), Logger: m.Logger, Markdown: m.markdownHandoff()}
	if !m.parts.Whole() {
		m.index.Holds, m.index.Fanout = m.parts.Holds, m.fanout()
	}
	m.indexOpen = make(chan error, 1)
	// In m.wg, so that Close waits for it: an open that Close outran would leave the
	// index open, and its directory locked, after the process let the project go.
	m.wg.Go(func() { m.indexOpen <- m.openIndex(ctx) })
	// In all-in-one mode this is the only query process of the project, so at start every
	// session document on the stream of no recorded live session is one of a session that
	// did not survive the restart (stdio).
	m.sessions = &session.Registry{Project: m.project, Catalog: m.catalog,
		TTL: m.Config.SessionTTL, MaxDocBytes: m.Config.SessionMaxSize, Exclusive: m.Config.Root != "", Logger: m.Logger,
		MaxSessions: m.Config.MaxSessions, MaxClientSessions: m.Config.MaxClientSessions, MaxAttachedBytes: m.Config.MaxAttachedBytes}
	m.srv = &mcpserver.Server{Project: m.project, Catalog: m.catalog, Index: m.index, Sessions: m.sessions,
		Limits: query.Limits{MaxChars: m.Config.MaxChars}, Logger: m.Logger, ToolPrefix: m.Config.ToolPrefix, PageSize: m.Config.PageSize}
	if m.cookies != nil {
		m.srv.Sync, m.srv.SyncWait = m.cookies.Sync, m.Config.SyncWait
	}
	m.mcp = m.srv.New()
}

// openIndex opens the search index, trying again while it fails for a reason of the
// environment (too many open files, permission denied): the index then is kept, not
// rebuilt (a damaged one is rebuilt by Open itself), and search says it is not open.
func (m *Main) openIndex(ctx context.Context) error {
	retry := backoff.Backoff{Initial: time.Second, Max: 30 * time.Second}
	for {
		err := m.index.Open()
		if err == nil || errors.Is(err, index.ErrLocked) {
			return err
		}
		m.Logger.Error("cannot open the search index; trying again", "err", err)
		if retry.Wait(ctx) != nil {
			return err
		}
	}
}

// sessionTTL is how long an idle MCP session lives, on HTTP and on the owner's socket.
func (m *Main) sessionTTL() time.Duration {
	if m.Config.SessionTTL > 0 {
		return m.Config.SessionTTL
	}
	return session.DefaultTTL
}

// startFollowing follows the stream in the background (see follow). Should that fail, the
// process stops: ctx is cancelled, and the error sent on the channel returned.
func (m *Main) startFollowing(ctx context.Context, cancel context.CancelFunc) <-chan error {
	fatal := make(chan error, 1)
	m.wg.Go(func() {
		if err := m.follow(ctx); err != nil && ctx.Err() == nil {
			fatal <- err
			cancel()
		}
	})
	return fatal
}

// wait returns what stops the process: following the stream (once the transport, served,
// has stopped too), or the transport.
func wait(fatal, served <-chan error) error {
	select {
	case err := <-fatal:
		<-served
		return err
	case err := <-served:
		return err
	}
}

// The projections apply at least releaseEvery events before their garbage is handed back
// to the system once they are idle again, and at most once every releaseGap: under a
// steady churn, every second's batch would otherwise pay for a full collection. A
// catch-up of releaseLarge events or more is handed back as soon as it is done, whenever
// the release before it was.
const (
	releaseEvery = 1000
	releaseLarge = 10000
	releaseGap   = 30 * time.Second
	// releaseAgain is how long after a release the memory is handed back once more: the
	// stream's file store keeps the blocks written in the last ten seconds cached (4 MB
	// each, a hundred megabytes after a cold index of 100k documents; nats-server's
	// defaultCacheBufferExpiration, which a stream made through the API cannot change),
	// and hands them to a pool that two collections empty.
	releaseAgain = 11 * time.Second
	// releaseSettle is how long every projection must have been idle: during a cold index
	// they catch up with the indexer now and then for a moment, and a release then costs a
	// full collection and the faults of growing the heap back.
	releaseSettle = 500 * time.Millisecond
	releaseTick   = 250 * time.Millisecond
)

// releasePolicy decides when the memory of a catch-up is handed back.
type releasePolicy struct {
	released  uint64    // events applied at the last release
	at        time.Time // of the last release
	again     time.Time // when to release once more; zero for none
	idleSince time.Time // since when every projection has been idle; zero while one is not
}

// due says whether to release now, given the events applied so far and whether every
// projection has applied all it was sent.
func (p *releasePolicy) due(now time.Time, applied uint64, idle bool) bool {
	if !idle {
		p.idleSince = time.Time{}
		return false
	}
	if p.idleSince.IsZero() {
		p.idleSince = now
	}
	if now.Sub(p.idleSince) < releaseSettle {
		return false
	}
	more := applied - p.released
	switch {
	case more >= releaseLarge,
		more >= releaseEvery && now.Sub(p.at) >= releaseGap:
		p.released, p.at, p.again = applied, now, now.Add(releaseAgain)
		return true
	case !p.again.IsZero() && !now.Before(p.again):
		p.released, p.again = applied, time.Time{}
		return true
	}
	return false
}

// releaseAfterCatchUp hands the memory a catch-up used back to the system once every
// projection has applied everything it was sent, and once more when the stream's block
// caches have expired. A cold index of 100k documents leaves hundreds of megabytes the
// runtime would otherwise keep for a long time; what stays resident is what following the
// stream needs.
func releaseAfterCatchUp(ctx context.Context, r *projection.Runner) {
	t := time.NewTicker(releaseTick)
	defer t.Stop()
	var p releasePolicy
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		applied := r.Applied()
		idle := true
		for _, pr := range r.Projections {
			pending, _ := r.Lag(pr)
			idle = idle && pending == 0 && pr.Checkpoint() == applied
		}
		if !p.due(time.Now(), applied, idle) {
			continue
		}
		// A pool's buffers outlive one collection (sync.Pool keeps a victim cache): the
		// first empties the pools into their victims, FreeOSMemory's drops them.
		runtime.GC()
		debug.FreeOSMemory()
		for _, pr := range r.Projections {
			if m, ok := pr.(interface{ Release() }); ok {
				m.Release() // pages of mapped files
			}
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
	m.srv.ConnectSessions(ctx, m.stream) // the index may take seconds to open
	m.mu.Lock()
	if b := m.broker; b != nil {
		m.srv.Freshness.Writer(b.Err) // the embedded server's store, all-in-one
	}
	m.mu.Unlock()
	if err := <-m.indexOpen; err != nil {
		return err
	}
	if !m.parts.Whole() {
		// Other partitions' events headers-only, this replica's whole (events.Stream).
		m.stream.Folds = m.parts
	}
	runner := &projection.Runner{Stream: m.stream, Project: m.project,
		Projections: append([]projection.Projection{m.catalog, m.index}, m.Projections...), Logger: m.Logger}
	m.mu.Lock()
	m.runner = runner
	m.mu.Unlock()
	m.srv.Connect(ctx, m.stream, runner) // and the session registry with it
	m.servePartitions(ctx, runner.CaughtUp())
	var wg sync.WaitGroup
	wg.Go(func() { m.sessions.Run(ctx, runner.CaughtUp()) })
	wg.Go(func() { releaseAfterCatchUp(ctx, runner) })
	wg.Go(func() {
		if err := runner.Run(ctx); err != nil {
			m.Logger.Error("projections stopped", "err", err)
		}
	})
	if m.Config.Root != "" {
		wg.Go(func() { m.indexFolder(ctx) })
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
