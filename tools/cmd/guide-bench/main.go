// Command guide-bench is `make bench`: it measures guide on generated corpora and on the
// Go toolchain's source tree, beside baselines in the same run, prints the tables, puts
// one record per area it measured into BENCHMARKS.json (keeping the other areas' records)
// and renders the whole of BENCHMARKS.md from that file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guide/guide/tools/bench"
	"github.com/guide/guide/tools/report"
)

// Main is the benchmark program.
type Main struct {
	Config  bench.Config
	Results string // the results file to update; "" for none
	Out     string // the Markdown to render from it; "" for none
	// Render renders Out from Results and measures nothing.
	Render bool

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
	build := fs.Bool("build", true, "build the binaries into --bin's folder from this tree first (go build ./cmd/... ./tools/cmd/...), so that the figures are of the build the results name; false, or --bin given, measures the binaries as they are")
	fs.Uint64Var(&c.Seed, "seed", 1, "corpus and workload seed")
	fs.IntVar(&c.Views, "calls", 2000, "view calls per server and corpus")
	fs.IntVar(&c.Trees, "trees", 500, "tree(depth 2) calls per server and corpus")
	fs.IntVar(&c.Restarts, "restarts", 5, "restarts after SIGKILL, and as many after a clean stop")
	fs.IntVar(&c.Repeat, "repeat", 3, "cold index runs of guide per corpus of up to 10k documents (the median is reported); larger ones (GOROOT, 100k) get one")
	fs.BoolVar(&c.FSServer, "fs-server", true, "also measure @modelcontextprotocol/server-filesystem (installed with npm under --dir)")
	fs.BoolVar(&c.InProcess, "inprocess", true, "also time the cold index with the pieces in this process")
	fs.StringVar(&c.ZoektSrc, "zoekt-src", "", "a checkout of sourcegraph/zoekt, built into --dir as a baseline of the cold scenario (default $ZOEKT_SRC, else DIR/zoekt; absent: the table says so)")
	fs.StringVar(&c.ZoektCommit, "zoekt-commit", "", "the commit of --zoekt-src, when it is not a git repository")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the in-process cold index of the largest generated corpus, with heap profiles beside it: at the peak (.peak) and once caught up (.heap)")
	scenarios := fs.String("scenarios", strings.Join(bench.AllScenarios, ","), "scenarios to run, comma-separated: "+strings.Join(bench.AllScenarios, ", ")+", or all; opt-in, only when named: "+strings.Join(bench.OptInScenarios, ", "))
	quick := fs.Bool("quick", false, "a quick run (a few minutes): 1k corpus for cold/latency/restart, 10k for search/content/web/once/clients, 1k for fresh/churn, fewer calls, 10 s of churn; explicit flags still win; writes no file unless --out is given")
	fs.IntVar(&c.SearchDocs, "search-docs", 100_000, "generated corpus of the search, content, web, once and clients scenarios, in documents")
	fs.IntVar(&c.SearchReps, "search-reps", 10, "searches of each word")
	fs.IntVar(&c.ContentCalls, "content-calls", 200, "get_content calls, and as many on the reference server")
	fs.IntVar(&c.FreshDocs, "fresh-docs", 10_000, "generated corpus of the fresh and churn scenarios (a copy is written to)")
	fs.IntVar(&c.FreshSamples, "fresh-samples", 100, "saved files timed to view and search")
	fs.IntVar(&c.Rescans, "rescans", 3, "indexer --once re-scans timed as the fresh scenario's baseline")
	fs.IntVar(&c.OnceRuns, "once-runs", 3, "indexer --once runs with nothing changed")
	fs.IntVar(&c.WebCalls, "web-calls", 200, "web: requests of each kind of page")
	fs.IntVar(&c.ClientRuns, "client-runs", 10, "clients: second clients spawned (through guide-bridge, and as many through guide-mcp alone), and owner kills")
	fs.IntVar(&c.ChurnRate, "churn-rate", 1000, "churn: file writes per second")
	fs.DurationVar(&c.ChurnFor, "churn-for", time.Minute, "churn: for how long")
	fs.IntVar(&c.RYWDocs, "ryw-docs", 100_000, "ryw: generated corpus, in documents (a copy is written to)")
	fs.IntVar(&c.RYWCalls, "ryw-calls", 200, "ryw: calls of each kind timed")
	fs.IntVar(&c.PartitionDocs, "partition-docs", 100_000, "partitions (opt-in scenario): generated corpus, in documents")
	scaleSizes := fs.String("scale-sizes", "10000,100000,1000000", "scale (opt-in scenario): generated corpora, in documents, comma-separated")
	fs.StringVar(&m.Results, "results", report.ResultsFile, "put the records of the areas measured into this results file (\"\" for none)")
	fs.StringVar(&m.Out, "out", report.MarkdownFile, "render this Markdown file from the results (\"\" for none)")
	fs.BoolVar(&m.Render, "render", false, "measure nothing: render --out from --results")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	binGiven := false
	fs.Visit(func(f *flag.Flag) { binGiven = binGiven || f.Name == "bin" })
	c.Build = *build && !binGiven && !m.Render
	var err error
	if c.Scenarios, err = bench.ParseScenarios(*scenarios); err != nil {
		return fmt.Errorf("--scenarios: %w", err)
	}
	if *quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		quickly := map[string]string{"sizes": "1000", "goroot": "false", "calls": "200", "trees": "50", "restarts": "1",
			"repeat": "1", "inprocess": "false", "search-docs": "10000", "search-reps": "3", "content-calls": "50", "web-calls": "50", "client-runs": "3",
			"fresh-docs": "1000", "fresh-samples": "20", "ryw-docs": "1000", "ryw-calls": "50", "rescans": "1", "once-runs": "1", "churn-for": "10s",
			// A quick run's figures must not replace a full run's unless asked to.
			"results": "", "out": ""}
		for name, v := range quickly {
			if !set[name] {
				if err := fs.Set(name, v); err != nil {
					return err
				}
			}
		}
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
	for _, s := range strings.Split(*scaleSizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("--scale-sizes: %q is not a positive number", s)
		}
		c.ScaleSizes = append(c.ScaleSizes, n)
	}
	if len(c.Sizes) == 0 && !c.GoRoot && slices.ContainsFunc(c.Scenarios, func(s string) bool {
		return s == bench.ScenarioCold || s == bench.ScenarioLatency || s == bench.ScenarioRestart
	}) {
		return errors.New("nothing to measure: give --sizes or --goroot")
	}
	c.Log = os.Stderr
	c.Command = commandLine("go run ./tools/cmd/guide-bench", args)
	return nil
}

// commandLine is the command as a shell would take it back.
func commandLine(name string, args []string) string {
	s := name
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'$*?;&|<>()") {
			a = strconv.Quote(a)
		}
		s += " " + a
	}
	return s
}

// Run measures, prints the tables, updates the results file and renders the Markdown.
func (m *Main) Run(ctx context.Context) error {
	if m.Render {
		return report.Update(m.Results, m.Out)
	}
	res, err := bench.Run(ctx, m.Config)
	if err != nil {
		return err
	}
	recs := res.Records()
	var shown report.Results
	shown.Put(recs...)
	fmt.Fprint(m.Stdout, report.RenderRecords(&shown))
	if m.Results == "" && m.Out == "" {
		return nil
	}
	return report.Update(m.Results, m.Out, recs...)
}
