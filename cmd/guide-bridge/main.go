// Command guide-bridge is the stdio side of guide-mcp --root, and of guide-mcp with no
// --root, which serves the client's roots: guide-mcp replaces itself with it (exec)
// as soon as it has read its command line, and it copies the client's JSON-RPC to
// the project's owner daemon, starting guide-mcp as the owner when none runs. It links only
// the bridge and the standard library, so a client costs a few megabytes; users configure
// guide-mcp, never this program.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/guide/guide/internal/bridge"
	"github.com/guide/guide/internal/logging"
)

// memoryLimit is the bridge's soft memory limit: its heap holds a few answers at a time,
// and with several roots it parses each (see bridge.Front), so the collector runs before
// garbage grows the process; GOMEMLIMIT, given for the owner it starts, is left to it.
const memoryLimit = 8 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
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
	if err := c.Run(ctx, os.Stdin, os.Stdout, logger); err != nil {
		logger.Error("guide-mcp stopped", "err", err)
		stop()
		os.Exit(1)
	}
}
