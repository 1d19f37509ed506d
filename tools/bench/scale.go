package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/guide/guide/tools/report"
	"github.com/guide/guide/tools/stats"
)

// scaleTimeout bounds one corpus of the scale scenario, index and searches: a 1M corpus
// takes tens of minutes on a small machine.
const scaleTimeout = 3 * time.Hour

// warmReaders is how many files the scale scenario reads at once to bring a corpus into
// the page cache: a disk serves small files faster with many reads in flight.
const warmReaders = 16

// measureScale indexes each generated corpus of cfg.ScaleSizes from an empty data
// directory and times search on it: how time, memory, disk and search grow with size.
func measureScale(ctx context.Context, cfg Config, bin string, log io.Writer) report.ScaleResult {
	r := report.ScaleResult{Reps: cfg.SearchReps, Load: report.Load{Before: LoadAverage()}}
	for _, n := range cfg.ScaleSizes {
		c, err := generated(cfg.Dir, n, cfg.Seed, cfg.logf)
		if err != nil {
			r.Runs = append(r.Runs, report.ScaleRun{Corpus: &report.Corpus{Name: fmt.Sprintf("generated %d", n)}, Err: err.Error()})
			continue
		}
		if c.GenTime > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s was generated in this run, in %s", c.Name, report.FormatDuration(c.GenTime)))
		}
		cfg.logf("scale on %s: %d documents, %.1f MB", c.Name, len(c.Files), float64(c.Bytes)/1e6)
		// Read from the page cache, guide and the baseline after it alike: a tree read from
		// the disk for the first time is bound by the disk's reads of small files (a
		// million files took longer to read than to index on this 2-core machine).
		warm := hashTree(c.Root, warmReaders)
		r.Notes = append(r.Notes, fmt.Sprintf("%s read once before guide's index, %d files in %s with %d readers, so that guide and the baseline after it read from the page cache",
			c.Name, warm.Docs, report.FormatDuration(warm.Duration), warmReaders))
		data := filepath.Join(cfg.Dir, "data", fmt.Sprintf("scale-%d", n))
		run := scaleRun(ctx, cfg, bin, c, data, log)
		if run.Err == "" {
			cfg.logf("    searchable after %s (catalog %s), RSS %s, data %s, search p95 %s",
				report.FormatDuration(run.Searchable), report.FormatDuration(run.Catalog), report.FormatMB(run.RSS),
				report.FormatMB(run.Disk), report.FormatDuration(run.Search.P95))
		} else {
			cfg.logf("    failed: %s", run.Err)
		}
		_ = os.RemoveAll(data)
		// The engine alone on the same files, after guide: how its own time grows with size.
		cfg.logf("    baseline: Bleve alone (one text field, no positions)")
		settle()
		run.Bleve = bleveBaseline(ctx, c, filepath.Join(cfg.Dir, "data", fmt.Sprintf("scale-bleve-%d", n)))
		cfg.logf("      %s; %s", report.FormatDuration(run.Bleve.Duration), run.Bleve.Note)
		r.Runs = append(r.Runs, run)
	}
	r.Load.After = LoadAverage()
	return r
}

// scaleRun is one corpus of the scale scenario.
func scaleRun(ctx context.Context, cfg Config, bin string, c *report.Corpus, data string, log io.Writer) report.ScaleRun {
	run := report.ScaleRun{Corpus: c}
	if err := os.RemoveAll(data); err != nil {
		run.Err = err.Error()
		return run
	}
	ctx, cancel := context.WithTimeout(ctx, scaleTimeout)
	defer cancel()
	settle()
	start := time.Now()
	s, err := spawn(ctx, log, bin, "--root", c.Root, "--data", data)
	if err != nil {
		run.Err = err.Error()
		return run
	}
	defer s.stop()
	_, run.Catalog, err = s.waitSearchable(ctx, 100*time.Millisecond)
	run.Searchable = time.Since(start)
	if err != nil {
		run.Err = err.Error()
		return run
	}
	run.RSS, run.Peak, _ = s.memory()
	run.Disk = dirSize(data)
	wait, segments, merged := s.waitMerged(ctx) // search is timed on the settled index
	if merged {
		// Not while the merge still runs: its memory is no settled figure.
		run.Settled, _, _ = s.memory()
	}
	words := vocabulary(c, 10)
	var kept []string
	for _, w := range words {
		if _, err := s.call(ctx, "search", map[string]any{"query": w}); err == nil {
			kept = append(kept, w) // a stop word is refused, as in the search scenario
		}
	}
	run.Words = len(kept)
	var ds []time.Duration
	per := make(map[string][]time.Duration, len(kept))
	errs := 0
	var firstErr error
	for range cfg.SearchReps {
		for _, w := range kept {
			t := time.Now()
			_, err := s.call(ctx, "search", map[string]any{"query": w})
			d := time.Since(t)
			ds = append(ds, d)
			per[w] = append(per[w], d)
			if err != nil {
				errs++
				firstErr = cmpErr(firstErr, err)
			}
		}
	}
	run.Search = summarize("guide (bin/guide-mcp, stdio)", "search(word)", ds, errs)
	// The log names the slowest words, for whoever looks into the tail.
	slices.SortFunc(kept, func(a, b string) int { return cmp.Compare(slices.Max(per[b]), slices.Max(per[a])) })
	for _, w := range kept[:min(5, len(kept))] {
		cfg.logf("    %s: p50 %s, max %s", w, report.FormatDuration(stats.Median(per[w])), report.FormatDuration(slices.Max(per[w])))
	}
	run.Search.Note = mergedNote(wait, segments, merged)
	if n := errNote(firstErr); n != "" {
		run.Search.Note += "; " + n
	}
	return run
}
