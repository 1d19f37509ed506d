// Command guide-bench is `make bench`: it measures guide on generated corpora and on the
// Go toolchain's source tree, beside baselines in the same run, prints the tables and
// refreshes BENCHMARKS.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/guide/guide/internal/bench"
)

// Main is the benchmark program.
type Main struct {
	Config bench.Config
	Out    string // BENCHMARKS.md to refresh; "" for none

	Stdout io.Writer
}

func main() {
	m := &Main{Stdout: os.Stdout}
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "guide-bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := m.Run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "guide-bench:", err)
		os.Exit(1)
	}
}

// ParseFlags reads the command line.
func (m *Main) ParseFlags(args []string) error {
	fs := flag.NewFlagSet("guide-bench", flag.ContinueOnError)
	c := &m.Config
	sizes := fs.String("sizes", "1000,10000,100000", "generated corpora, in documents, comma-separated (\"\" for none)")
	fs.BoolVar(&c.GoRoot, "goroot", true, "also measure the Go toolchain's source tree, $(go env GOROOT)/src")
	fs.StringVar(&c.Dir, "dir", ".bench", "work directory: corpora (reused), data, logs, node_modules")
	fs.StringVar(&c.Bin, "bin", "bin/guide-mcp", "the guide-mcp binary to measure")
	fs.Uint64Var(&c.Seed, "seed", 1, "corpus and workload seed")
	fs.IntVar(&c.Views, "calls", 2000, "view calls per server and corpus")
	fs.IntVar(&c.Trees, "trees", 500, "tree(depth 2) calls per server and corpus")
	fs.IntVar(&c.Restarts, "restarts", 5, "restarts after SIGKILL, and as many after a clean stop")
	fs.IntVar(&c.Repeat, "repeat", 3, "cold index runs of guide per corpus (the median is reported)")
	fs.BoolVar(&c.FSServer, "fs-server", true, "also measure @modelcontextprotocol/server-filesystem (installed with npm under --dir)")
	fs.BoolVar(&c.InProcess, "inprocess", true, "also time the cold index with the pieces in this process")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the in-process cold index of the largest generated corpus")
	fs.StringVar(&m.Out, "out", "BENCHMARKS.md", "refresh the measured part of this file (\"\" for stdout only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, s := range strings.Split(*sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("--sizes: %q is not a positive number", s)
		}
		c.Sizes = append(c.Sizes, n)
	}
	if len(c.Sizes) == 0 && !c.GoRoot {
		return errors.New("nothing to measure: give --sizes or --goroot")
	}
	c.Log = os.Stderr
	return nil
}

// Run measures, prints the tables and refreshes the output file.
func (m *Main) Run(ctx context.Context) error {
	res, err := bench.Run(ctx, m.Config)
	if err != nil {
		return err
	}
	md := res.Markdown()
	fmt.Fprint(m.Stdout, md)
	if m.Out == "" {
		return nil
	}
	old, err := os.ReadFile(m.Out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp := m.Out + ".tmp"
	if err := os.WriteFile(tmp, []byte(bench.Splice(string(old), md)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, m.Out)
}
