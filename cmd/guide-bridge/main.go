// Command guide-bridge is the stdio side of guide-mcp --root, and of guide-mcp with no
// --root, which serves the client's first root: guide-mcp replaces itself with it (exec)
// as soon as it has read its command line, and it copies the client's JSON-RPC to
// the project's owner daemon, starting guide-mcp as the owner when none runs. It links only
// the bridge and the standard library, so a client costs a few megabytes; users configure
// guide-mcp, never this program.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/guide/guide/internal/bridge"
	"github.com/guide/guide/internal/lineio"
	"github.com/guide/guide/internal/logging"
	"github.com/guide/guide/internal/owner"
)

func main() {
	c, err := bridge.ParseCommand(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "guide-bridge:", err)
		os.Exit(2)
	}
	logger, err := logging.New(c.LogLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "guide-bridge:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// One message is bounded as the owner bounds a request body: a longer one is answered
	// with a parse error, and never held whole in memory.
	in := lineio.LimitLines(os.Stdin, c.MaxLine, func() {
		logger.Warn("refused a stdio message larger than --max-body", "max_bytes", c.MaxLine)
	})
	var run func(context.Context) error
	if c.Roots {
		run, err = roots(c, in, logger)
		if err != nil {
			fmt.Fprintln(os.Stderr, "guide-bridge:", err)
			os.Exit(2)
		}
	} else {
		b := &bridge.Bridge{Dir: c.Dir, In: in, Out: os.Stdout, Logger: logger,
			Start: func() error { return owner.StartDaemon(c.Dir, c.Owner, append([]string{"--serve-owner"}, c.Args...)) }}
		run = b.Run
	}
	if err := run(ctx); err != nil {
		logger.Error("guide-mcp stopped", "err", err)
		stop()
		os.Exit(1)
	}
}

// roots serves a client that named no folder: its first root, as guide-mcp --root would,
// through that project's owner.
func roots(c bridge.Command, in io.Reader, logger *slog.Logger) (func(context.Context) error, error) {
	var h bridge.Handshake
	if err := json.Unmarshal([]byte(os.Getenv(bridge.HandshakeEnv)), &h); err != nil {
		return nil, fmt.Errorf("$%s: %w", bridge.HandshakeEnv, err)
	}
	os.Unsetenv(bridge.HandshakeEnv) // not the owner daemon's
	f := &bridge.Front{In: in, Out: os.Stdout, Logger: logger, Handshake: &h,
		Serve: func(ctx context.Context, root string, in io.Reader, out io.Writer) error {
			dir, args := c.DataDir(root), append([]string{"--serve-owner", "--root", root}, c.Args...)
			b := &bridge.Bridge{Dir: dir, In: in, Out: out, Logger: logger.With("root", root),
				Start: func() error { return owner.StartDaemon(dir, c.Owner, args) }}
			return b.Run(ctx)
		}}
	return f.Run, nil
}
