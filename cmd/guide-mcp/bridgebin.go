package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/guide/guide/internal/owner"
)

// bridges reports whether this process is a stdio bridge to the project's owner: a stdio
// client with --root.
func (m *Main) bridges() bool {
	return m.Config.Root != "" && m.Config.HTTPAddr == "" && !m.Config.ServeOwner
}

// execBridge replaces this process with the bridge binary installed beside it, when this
// process is a bridge: a client then holds a few megabytes rather than the whole server's
// binary and what its packages set up at start. It returns only when the bridge binary
// cannot run (not installed, say): this process then bridges itself, as well but larger.
func (m *Main) execBridge() {
	if !m.bridges() {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		m.Logger.Debug("bridging in this process", "err", err)
		return
	}
	m.project = m.Config.Project
	path := filepath.Join(filepath.Dir(exe), owner.BridgeBinary)
	c := owner.BridgeCommand{Dir: m.dataDir(), MaxLine: m.Config.MaxBody, LogLevel: m.Config.LogLevel, Owner: exe, Args: m.Args}
	err = syscall.Exec(path, append([]string{path}, c.Argv()...), os.Environ())
	if errors.Is(err, os.ErrNotExist) {
		m.Logger.Debug("no bridge binary beside guide-mcp; bridging in this process", "path", path)
	} else {
		m.Logger.Warn("the bridge binary did not run; bridging in this process", "path", path, "err", err)
	}
}
