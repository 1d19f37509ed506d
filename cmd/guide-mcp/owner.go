package main

// The owner: guide-mcp --root, as the daemon a stdio bridge starts (--serve-owner) or over
// HTTP, holds the project's lock before it opens anything, and serves the bridges on its
// unix socket; the daemon stops once no bridge has been attached for --idle-timeout.

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/owner"
)

// own takes the project's lock before anything opens its store. An owner daemon that finds
// another owner leaves quietly (m.lock stays nil); --http fails and says what serves it.
func (m *Main) own(ctx context.Context) error {
	if !m.Config.ServeOwner {
		l, err := owner.Acquire(m.dataDir())
		if errors.Is(err, owner.ErrHeld) {
			return fmt.Errorf("%w: %s is served on this machine already; stdio clients reach it with guide-mcp --root %s, or stop that process first",
				err, m.Config.Root, m.Config.Root)
		}
		m.lock = l
		return err
	}
	l, err := owner.AcquireWait(ctx, m.dataDir(), owner.RaceWait)
	if errors.Is(err, owner.ErrHeld) {
		m.Logger.Info("the project has an owner already", "err", err)
		return nil
	}
	m.lock = l
	return err
}

// serveOwner serves MCP to the bridges on the owner's socket, in the background. The
// daemon (no --http) is ready then, sends on served when the socket stops, and calls stop
// once idle.
func (m *Main) serveOwner(ctx context.Context, stop context.CancelFunc, served chan<- error) error {
	ln, err := m.lock.Listen()
	if err != nil {
		return fmt.Errorf("the owner's socket: %w", err)
	}
	s := &owner.Server{
		// Session ids are the registry's, recorded on the stream: a new owner accepts a
		// bridge's id and restores its session.
		MCP: m.srv.HTTPHandler(m.mcp, server.WithEndpointPath("/mcp"),
			server.WithSessionIdleTTL(m.sessionTTL()), server.WithStreamableHTTPLogger(m.Logger)),
		MaxBody: m.Config.MaxBody, ShutdownWait: m.Config.ShutdownWait, Lost: m.lock.Lost,
	}
	daemon := m.Config.HTTPAddr == ""
	if daemon {
		close(m.Ready)
		m.Logger.Info("owner serving MCP on its socket", "socket", owner.Socket(m.dataDir()), "project", m.project)
		go func() {
			if s.AwaitIdle(ctx, m.Config.IdleTimeout) {
				m.Logger.Info("no client for a while; the owner stops", "idle", m.Config.IdleTimeout)
				stop()
			}
		}()
	}
	m.wg.Go(func() {
		err := s.Serve(ctx, ln)
		if daemon {
			served <- err
		} else if err != nil {
			m.Logger.Error("the owner's socket", "err", err)
		}
	})
	return nil
}
