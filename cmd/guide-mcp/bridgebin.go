package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/guide/guide/internal/bridge"
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
