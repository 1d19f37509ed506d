package bench

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/guide/guide/tools/report"
)

// runOnce times bin/indexer --once --json with args, whole process.
func runOnce(ctx context.Context, bin string, log io.Writer, args ...string) report.OnceRun {
	var r report.OnceRun
	cmd := exec.CommandContext(ctx, indexerBin(bin), append([]string{"--once", "--json"}, args...)...)
	cmd.Stderr = log
	start := time.Now()
	out, err := cmd.Output()
	r.Duration = time.Since(start)
	if err != nil {
		r.Err = err.Error()
	}
	if jerr := json.Unmarshal(out, &r); jerr != nil && r.Err == "" {
		r.Err = "summary: " + jerr.Error()
	}
	return r
}

// measureOnce runs indexer --once --json on c with its own embedded store under natsDir,
// filling it first when it is empty, then runs times with nothing changed.
func measureOnce(ctx context.Context, cfg Config, bin string, c *report.Corpus, natsDir, store string, log io.Writer) report.OnceResult {
	r := report.OnceResult{Corpus: c, Store: store, Load: report.Load{Before: LoadAverage()}}
	if _, err := os.Stat(natsDir); err != nil {
		cfg.logf("    filling a JetStream store with a first indexer --once")
		settle()
		in := runOnce(ctx, bin, log, "--root", c.Root, "--data", natsDir)
		r.Initial = &in
	}
	for range cfg.OnceRuns {
		settle()
		run := runOnce(ctx, bin, log, "--root", c.Root, "--data", natsDir)
		cfg.logf("    indexer --once: %s, %d published, %d read", report.FormatDuration(run.Duration), run.Published, run.Read)
		r.Runs = append(r.Runs, run)
	}
	settle()
	r.Walk = walkStat(c.Root)
	settle()
	r.Hash = hashTree(c.Root, max(2, runtime.NumCPU()))
	r.Load.After = LoadAverage()
	return r
}

// walkStat is the least a re-scan that trusts size and mtime must do: walk and stat.
func walkStat(root string) report.IndexRun {
	r := report.IndexRun{What: "baseline: walk + stat (filepath.WalkDir, DirEntry.Info), 1 goroutine"}
	start := time.Now()
	walkRegular(root, func(_ string, d fs.DirEntry) {
		if _, err := d.Info(); err == nil {
			r.Docs++
		}
	})
	r.Duration = time.Since(start)
	return r
}
