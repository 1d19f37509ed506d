// Command guide-load drives a running guide-mcp --http with concurrent MCP sessions calling
// a weighted mix of tools, and prints throughput, p50/p99 and the server's memory over time.
// With --record it also puts the run into BENCHMARKS.json as that area's record and renders
// BENCHMARKS.md from it (scripts/bench-load.sh, in make bench).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/guide/guide/internal/httpserve"
	"github.com/guide/guide/tools/bench"
	"github.com/guide/guide/tools/load"
	"github.com/guide/guide/tools/report"
)

func main() {
	var cfg load.Config
	var mix, names, words, tokenFile string
	var asJSON bool
	var area, results, markdown, command, corpus string
	flag.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080/mcp", "MCP endpoint of a guide-mcp --http")
	flag.IntVar(&cfg.Sessions, "sessions", 50, "concurrent MCP sessions")
	flag.DurationVar(&cfg.Duration, "duration", 60*time.Second, "how long to run")
	flag.StringVar(&mix, "mix", "view=6,get_content=3,tree=1", "tools and their weights, e.g. view=5,search=3,get_content=2")
	flag.StringVar(&names, "names", "", "comma-separated categories or collections for get_content (default \"all\")")
	flag.StringVar(&words, "words", "", "comma-separated queries for search")
	flag.StringVar(&tokenFile, "token-file", "", "bearer token file (default: $GUIDE_TOKEN)")
	flag.DurationVar(&cfg.SampleEvery, "sample-every", 5*time.Second, "how often to read the server's memory")
	flag.BoolVar(&asJSON, "json", false, "print the report as JSON")
	flag.StringVar(&area, "record", "", "put the run into --results as this area's record (load, or sessions for the mix with session churn) and render --benchmarks")
	flag.StringVar(&results, "results", report.ResultsFile, "with --record: the results file")
	flag.StringVar(&markdown, "benchmarks", report.MarkdownFile, "with --record: the Markdown rendered from the results (\"\" for none)")
	flag.StringVar(&command, "command", "", "with --record: the command the record states (default: this one)")
	flag.StringVar(&corpus, "corpus", "the server's project", "with --record: what the server serves, in a few words")
	flag.Parse()
	var err error
	if cfg.Mix, err = load.ParseMix(mix); err != nil {
		fail(err)
	}
	if names != "" {
		cfg.Names = strings.Split(names, ",")
	}
	if words != "" {
		cfg.Words = strings.Split(words, ",")
	}
	if cfg.Token, err = httpserve.ReadToken(tokenFile, "GUIDE_TOKEN"); err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	machine, before := bench.ReadMachine(), bench.LoadAverage()
	rep, err := load.Run(ctx, cfg)
	if err != nil {
		fail(err)
	}
	if asJSON {
		_ = json.NewEncoder(os.Stdout).Encode(rep)
	} else {
		fmt.Print(rep.String())
	}
	if area != "" {
		rec := load.Record(area, rep)
		rec.Date, rec.Machine, rec.Commit = machine.Date, machine, bench.GitCommit()
		rec.Load = report.Load{Before: before, After: bench.LoadAverage()}
		rec.Command = command
		if rec.Command == "" {
			rec.Command = strings.Join(os.Args, " ")
		}
		rec.Notes = append(rec.Notes, load.About(cfg, corpus))
		if err := report.Update(results, markdown, rec); err != nil {
			fail(err)
		}
	}
	if rep.Errors > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "guide-load:", err)
	os.Exit(2)
}
