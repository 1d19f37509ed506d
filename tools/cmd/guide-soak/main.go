// Command guide-soak runs the soak: guide in split mode from its built binaries, under
// random file-system operations, kill -9 of its processes and MCP session churn, then
// checked against the disk, the stream and its own figures. `guide-soak --seed 7` replays
// the operations of seed 7. It exits 1 when a check fails, 2 when the soak cannot run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/guide/guide/tools/soak"
)

// Main is the guide-soak program.
type Main struct {
	Config soak.Config
	JSON   string // where to write the report as JSON ("" for nowhere)
	Keep   bool   // keep the work folder of a run that passed

	Stdout, Stderr io.Writer
}

func main() {
	m := &Main{Stdout: os.Stdout, Stderr: os.Stderr}
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "guide-soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(m.Run(ctx))
}

// ParseFlags reads the command line.
func (m *Main) ParseFlags(args []string) error {
	fs := flag.NewFlagSet("guide-soak", flag.ContinueOnError)
	c := &m.Config
	fs.Uint64Var(&c.Seed, "seed", uint64(time.Now().UnixNano()%100000), "seed of every random choice, printed at the start (the default comes from the clock)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Minute, "how long operations run")
	fs.IntVar(&c.MaxOps, "ops", 50000, "at most this many file-system operations")
	fs.IntVar(&c.Sessions, "sessions", 50, "concurrent MCP sessions over HTTP")
	fs.IntVar(&c.Docs, "docs", 2000, "documents of the generated corpus")
	fs.StringVar(&c.Bin, "bin", "bin", "folder of the built indexer and guide-mcp")
	fs.StringVar(&c.Work, "work", "", "folder for the tree, the data and the logs (default: a new temporary folder)")
	fs.DurationVar(&c.SessionTTL, "session-ttl", 30*time.Second, "guide-mcp --session-ttl")
	fs.DurationVar(&c.Settle, "settle", 2*time.Minute, "how long the system may take to settle at the end")
	fs.DurationVar(&c.DiskFull, "disk-full", 15*time.Second, "how long the data directories' tmpfs stays full after the kills (needs root to mount it; negative: no such phase)")
	fs.StringVar(&m.JSON, "json", "", "write the report as JSON to this file")
	fs.BoolVar(&m.Keep, "keep", false, "keep the work folder of a run that passed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Duration <= 0 || c.Sessions < 0 || c.Docs <= 0 || c.MaxOps <= 0 {
		return errors.New("--duration, --docs and --ops must be positive, --sessions not negative")
	}
	return nil
}

// Run runs the soak and returns the exit code.
func (m *Main) Run(ctx context.Context) int {
	m.Config.Progress = m.Stderr
	fmt.Fprintf(m.Stderr, "guide-soak: seed %d (replay: SEED=%d make soak)\n", m.Config.Seed, m.Config.Seed)
	rep, err := soak.Run(ctx, m.Config)
	if m.JSON != "" {
		if b, jerr := json.MarshalIndent(rep, "", "  "); jerr == nil {
			_ = os.WriteFile(m.JSON, append(b, '\n'), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "guide-soak: seed %d: could not run: %v\n", m.Config.Seed, err)
		if rep.Work != "" {
			fmt.Fprintf(m.Stderr, "guide-soak: logs in %s\n", rep.Work)
		}
		return 2
	}
	fmt.Fprint(m.Stdout, rep.String())
	if !rep.Passed() {
		fmt.Fprintf(m.Stderr, "\nguide-soak: FAILED with seed %d; replay with SEED=%d make soak (or guide-soak --seed %d).\n",
			rep.Seed, rep.Seed, rep.Seed)
		fmt.Fprintf(m.Stderr, "guide-soak: operations log %s (last lines below); processes' logs in %s\n", rep.OpLog, rep.Work)
		fmt.Fprintln(m.Stderr, soak.Tail(rep.OpLog, 40))
		return 1
	}
	if !m.Keep && m.Config.Work == "" {
		_ = os.RemoveAll(rep.Work)
	}
	return 0
}
