// Command guide-bridge is the stdio side of guide-mcp --root: guide-mcp replaces itself with
// it (exec) as soon as it has read its command line, and it copies the client's JSON-RPC to
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
	"syscall"

	"github.com/guide/guide/internal/lineio"
	"github.com/guide/guide/internal/logging"
	"github.com/guide/guide/internal/owner"
)

func main() {
	c, err := owner.ParseBridgeCommand(os.Args[1:])
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
	b := &owner.Bridge{Dir: c.Dir, In: in, Out: os.Stdout, Logger: logger,
		Start: func() error { return owner.StartDaemon(c.Dir, c.Owner, append([]string{"--serve-owner"}, c.Args...)) }}
	if err := b.Run(ctx); err != nil {
		logger.Error("guide-mcp stopped", "err", err)
		stop()
		os.Exit(1)
	}
}
