package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/owner"
)

// raceWait is how long an owner daemon tries for the lock before it leaves the project to
// the process holding it: a bridge checks the lock for a moment while it elects.
const raceWait = time.Second

// own takes the project's lock before anything opens its store. An owner daemon that finds
// another owner leaves quietly (m.lock stays nil); --http fails and says what serves it.
func (m *Main) own(ctx context.Context) error {
	dir := m.dataDir()
	deadline := time.Now().Add(raceWait)
	for {
		l, err := owner.Acquire(dir)
		if err == nil {
			m.lock = l
			return nil
		}
		if !errors.Is(err, owner.ErrHeld) {
			return err
		}
		if !m.Config.ServeOwner {
			return fmt.Errorf("%w: %s is served on this machine already; stdio clients reach it with guide-mcp --root %s, or stop that process first",
				err, m.Config.Root, m.Config.Root)
		}
		if time.Now().After(deadline) {
			m.Logger.Info("the project has an owner already", "err", err)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// serveSocket serves MCP Streamable HTTP to the bridges on the owner's unix socket, and
// counts them by the request each holds open on /attach.
func (m *Main) serveSocket(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	// Session ids are the registry's, recorded on the stream: a new owner accepts a bridge's
	// id and restores its session.
	mux.Handle("/mcp", m.srv.HTTPHandler(m.mcp, server.WithEndpointPath("/mcp"),
		server.WithSessionIdleTTL(m.sessionTTL()), server.WithStreamableHTTPLogger(m.Logger)))
	mux.HandleFunc("/attach", func(w http.ResponseWriter, r *http.Request) {
		m.attached.Add(1)
		defer m.attached.Add(-1)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-ctx.Done():
		}
	})
	// A message larger than HTTP clients may send is refused here too (413).
	hs := &http.Server{Handler: http.MaxBytesHandler(mux, m.Config.MaxBody), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownWait)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// exitWhenIdle ends the owner daemon once no bridge has been attached for IdleTimeout.
func (m *Main) exitWhenIdle(ctx context.Context, stop context.CancelFunc) {
	idle := m.Config.IdleTimeout
	if idle <= 0 {
		return
	}
	tick := time.NewTicker(min(idle/4, time.Second))
	defer tick.Stop()
	since := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if m.attached.Load() > 0 {
			since = time.Now()
		} else if time.Since(since) >= idle {
			m.Logger.Info("no client for a while; the owner stops", "idle", idle)
			stop()
			return
		}
	}
}
