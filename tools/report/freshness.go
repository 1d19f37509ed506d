package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guide/guide/tools/stats"
)

// FreshResult is the freshness scenario: a saved file to view and search.
type FreshResult struct {
	Corpus   *Corpus
	Setup    time.Duration
	View     Latency // write to view showing the new content
	Search   Latency // write to search finding the new token
	Rescan   []OnceRun
	Timeouts int
	Load     Load
	Err      string
}

// OnceRun is one indexer --once.
type OnceRun struct {
	Duration  time.Duration
	Documents int   `json:"documents"`
	Published int   `json:"published"`
	Read      int   `json:"read"`
	Deleted   int   `json:"deleted"`
	Failed    int   `json:"failed"`
	Millis    int64 `json:"duration_ms"`
	// Known is where the run's knowledge of the stream came from (state file, stream).
	Known string `json:"known"`
	Err   string
}

// OnceResult is indexer --once with nothing changed, as a CI job runs it.
type OnceResult struct {
	Corpus  *Corpus
	Initial *OnceRun // the first --once, when this scenario had to fill the store itself
	Runs    []OnceRun
	Walk    IndexRun // baseline: walk + stat
	Hash    IndexRun // walk + read + sha256, for scale
	Store   string   // whose JetStream store the runs used
	Load    Load
}

// ChurnResult is sustained writes with the lag sampled.
type ChurnResult struct {
	Corpus     *Corpus
	Rate       int           // writes per second asked for
	For        time.Duration // for how long
	Writes     int           // writes made
	WriteTime  time.Duration // first to last write
	Samples    int
	CatalogLag []uint64        // stream_last_seq - applied_seq, per sample
	IndexLag   []uint64        // stream_last_seq - index applied_seq, per sample
	TimeLag    []time.Duration // age of the oldest write not yet visible to view, per sample
	SampleErrs int
	CatchUp    time.Duration // last write to the last write visible and the index caught up
	CatchUpErr string
	Load       Load
}

// medianOnce is the run of median duration.
func medianOnce(runs []OnceRun) OnceRun {
	return stats.PercentileFunc(runs, 50, func(a, b OnceRun) int { return cmp.Compare(a.Duration, b.Duration) })
}

func (r *Result) freshMarkdown() string {
	var b strings.Builder
	l := Load{Before: "?", After: "?"}
	switch {
	case r.Once != nil:
		l.Before = r.Once.Load.Before
	case r.Fresh != nil:
		l.Before = r.Fresh.Load.Before
	case r.Churn != nil:
		l.Before = r.Churn.Load.Before
	}
	switch {
	case r.Churn != nil:
		l.After = r.Churn.Load.After
	case r.Fresh != nil:
		l.After = r.Fresh.Load.After
	case r.Once != nil:
		l.After = r.Once.Load.After
	}
	var names []string
	for _, x := range []struct {
		name string
		ran  bool
	}{{"fresh", r.Fresh != nil}, {"once", r.Once != nil}, {"churn", r.Churn != nil}} {
		if x.ran {
			names = append(names, x.name)
		}
	}
	r.header(&b, strings.Join(names, ","), l)
	var ts []Target
	if f := r.Fresh; f != nil {
		for _, x := range []Latency{f.View, f.Search} {
			ts = append(ts, Target{What: x.Op + " (split mode, " + f.Corpus.Name + ")", Goal: "p50 ≤ 50 ms, p95 ≤ 150 ms",
				Measured: fmt.Sprintf("p50 %s, p95 %s (%d samples, %d timed out)", FormatDuration(x.P50), FormatDuration(x.P95), x.N, x.Errors),
				Met:      verdict(x.N > 0 && x.Errors == 0 && x.P50 <= 50*time.Millisecond && x.P95 <= 150*time.Millisecond)})
		}
	}
	if o := r.Once; o != nil && len(o.Runs) > 0 {
		m := medianOnce(o.Runs)
		worst := slices.MaxFunc(o.Runs, func(a, b OnceRun) int { return int(a.Duration - b.Duration) })
		pub := 0
		for _, x := range o.Runs {
			pub += x.Published + x.Deleted
		}
		ts = append(ts, Target{What: "indexer --once with nothing changed, " + o.Corpus.Name, Goal: "≤ 2 s and 0 events",
			Measured: fmt.Sprintf("median %s, worst %s; %d events published in %d runs", FormatDuration(m.Duration), FormatDuration(worst.Duration), pub, len(o.Runs)),
			Met:      at100k(len(o.Corpus.Files), verdict(worst.Duration <= 2*time.Second && pub == 0 && worst.Err == ""))})
	}
	if c := r.Churn; c != nil {
		maxLag := time.Duration(0)
		if len(c.TimeLag) > 0 {
			maxLag = slices.Max(c.TimeLag)
		}
		ok := c.Samples > 0 && maxLag <= time.Second && c.CatchUpErr == ""
		ts = append(ts, Target{What: fmt.Sprintf("%d writes/s for %s: query process never more than 1 s behind (split mode, %s)", c.Rate, c.For, c.Corpus.Name),
			Goal: "max lag ≤ 1 s", Measured: fmt.Sprintf("max %s, p99 %s over %d samples; %d writes at %.0f/s",
				FormatDuration(maxLag), FormatDuration(stats.Percentile(c.TimeLag, 99)), c.Samples, c.Writes, float64(c.Writes)/max(c.WriteTime.Seconds(), 1e-9)),
			Met: verdict(ok)})
	}
	targetTable(&b, "Targets (freshness and CI)", ts)
	if r.SplitErr != "" {
		fmt.Fprintf(&b, "- Split mode did not start: %s\n\n", r.SplitErr)
	}
	if f := r.Fresh; f != nil {
		fmt.Fprintf(&b, "#### fresh: a saved file, in split mode (%s)\n\n", f.Corpus.Name)
		fmt.Fprintf(&b, "`bin/indexer --root COPY --data D --listen 127.0.0.1:PORT` (embedded NATS on a free loopback port, watching) and `bin/guide-mcp --nats nats://127.0.0.1:PORT --data Q` over stdio; first scan applied by the index %s after the indexer was spawned. "+
			"Each sample writes a unique token into a random document (os.WriteFile) and polls view (until its content holds the token) and search (until it finds the token), ~1 ms apart. %s.\n\n", FormatDuration(f.Setup), f.Load)
		latencyRows(&b, f.View, f.Search)
		if len(f.Rescan) > 0 {
			b.WriteString("Baseline, what a tool without a watcher needs: a full re-scan after one file changed, `bin/indexer --once --json --root COPY --nats URL` against the same running NATS, whole process:\n\n")
			b.WriteString("| run | time | documents | read | published | note |\n|---|---:|---:|---:|---:|---|\n")
			for i, x := range f.Rescan {
				fmt.Fprintf(&b, "| %d | %s | %d | %d | %d | %s |\n", i+1, FormatDuration(x.Duration), x.Documents, x.Read, x.Published, errText(x.Err))
			}
			fmt.Fprintf(&b, "\nMedian re-scan %s against the watcher's view p50 %s. (The running indexer's watcher may publish the change before the re-scan reaches the file, so the re-scan can publish 0.)\n\n",
				FormatDuration(medianOnce(f.Rescan).Duration), FormatDuration(f.View.P50))
		}
	}
	if o := r.Once; o != nil {
		fmt.Fprintf(&b, "#### once: `indexer --once --json` with nothing changed (%s)\n\n", o.Corpus.Name)
		fmt.Fprintf(&b, "Store: %s. Whole process: start, embedded NATS recovering the stream, walk, compare, exit. %s.\n\n", o.Store, o.Load)
		b.WriteString("| what | time | documents | read | published | note |\n|---|---:|---:|---:|---:|---|\n")
		if o.Initial != nil {
			fmt.Fprintf(&b, "| first run, empty store (not a target) | %s | %d | %d | %d | %s |\n", FormatDuration(o.Initial.Duration), o.Initial.Documents, o.Initial.Read, o.Initial.Published, errText(o.Initial.Err))
		}
		for i, x := range o.Runs {
			known := ""
			if x.Known != "" {
				known = "; the stream's state from the " + x.Known
			}
			fmt.Fprintf(&b, "| indexer --once, nothing changed, run %d | %s | %d | %d | %d | reported %d ms inside the process%s%s |\n",
				i+1, FormatDuration(x.Duration), x.Documents, x.Read, x.Published, x.Millis, known, NoteSuffix(errText(x.Err)))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | | | |\n", o.Walk.What, FormatDuration(o.Walk.Duration), o.Walk.Docs)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | | for scale: what a re-scan that reads every file pays |\n\n", o.Hash.What, FormatDuration(o.Hash.Duration), o.Hash.Docs, o.Hash.Docs)
	}
	if c := r.Churn; c != nil {
		fmt.Fprintf(&b, "#### churn: %d writes/s for %s, split mode (%s)\n\n", c.Rate, c.For, c.Corpus.Name)
		fmt.Fprintf(&b, "Writes go round-robin over the documents, each appending `churnstamp SEQ UNIXNANO`; bounded at %d writes and %s. Every 100 ms the harness reads `guide://_status` (lag in events: `stream_last_seq − applied_seq` for the catalog and for the index) and finds, with `view` and bisection over its write log, the oldest write the query process does not show yet (lag in time: its age when view did not show it). %s.\n\n",
			int(float64(c.Rate)*c.For.Seconds()), c.For+5*time.Second, c.Load)
		rate := float64(c.Writes) / max(c.WriteTime.Seconds(), 1e-9)
		b.WriteString("| measure | value |\n|---|---:|\n")
		fmt.Fprintf(&b, "| writes made | %d in %s (%.0f/s) |\n", c.Writes, FormatDuration(c.WriteTime), rate)
		fmt.Fprintf(&b, "| status samples | %d (%d failed) |\n", c.Samples, c.SampleErrs)
		fmt.Fprintf(&b, "| lag in time (oldest write not shown by view): p50 / p99 / max | %s / %s / %s |\n", FormatDuration(stats.Percentile(c.TimeLag, 50)), FormatDuration(stats.Percentile(c.TimeLag, 99)), FormatDuration(stats.Percentile(c.TimeLag, 100)))
		fmt.Fprintf(&b, "| catalog lag in events: p50 / p99 / max | %d / %d / %d |\n", stats.Percentile(c.CatalogLag, 50), stats.Percentile(c.CatalogLag, 99), stats.Percentile(c.CatalogLag, 100))
		fmt.Fprintf(&b, "| index lag in events: p50 / p99 / max | %d / %d / %d |\n", stats.Percentile(c.IndexLag, 50), stats.Percentile(c.IndexLag, 99), stats.Percentile(c.IndexLag, 100))
		catch := FormatDuration(c.CatchUp)
		if c.CatchUpErr != "" {
			catch = c.CatchUpErr
		}
		fmt.Fprintf(&b, "| last write to caught up (view shows it, index at stream_last_seq) | %s |\n\n", catch)
		if r.Fresh != nil && len(r.Fresh.Rescan) > 0 {
			fmt.Fprintf(&b, "Baseline: a tool that re-scans instead of watching is at least one re-scan behind: %s here (fresh, above).\n\n", FormatDuration(medianOnce(r.Fresh.Rescan).Duration))
		}
	}
	return b.String()
}
