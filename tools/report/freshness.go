package report

import (
	"cmp"
	"fmt"
	"slices"
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

func (r *Result) freshRecord() Record {
	f := r.Fresh
	if f == nil {
		rec := r.record("fresh", Load{Before: "?"})
		rec.Notes = append(rec.Notes, "split mode did not start: "+r.SplitErr)
		return rec
	}
	rec := r.record("fresh", f.Load)
	k := CorpusKey(f.Corpus)
	t := latencyTable(f.Corpus.Name, "what", f.View, f.Search)
	t.About = fmt.Sprintf("First scan applied by the index %s after the indexer was spawned.", FormatDuration(f.Setup))
	rec.Tables = append(rec.Tables, t)
	rec.putLatency("fresh.view", k, f.View, "guide")
	rec.putLatency("fresh.search", k, f.Search, "guide")
	if len(f.Rescan) > 0 {
		rt := NewTable("Baseline: a full re-scan after one file changed (indexer --once against the same NATS, whole process)", ">run", ">time", ">documents", ">read", ">published", "note")
		for i, x := range f.Rescan {
			rt.Add(i+1, FormatDuration(x.Duration), x.Documents, x.Read, x.Published, errText(x.Err))
		}
		m := medianOnce(f.Rescan)
		rt.Notes = append(rt.Notes, fmt.Sprintf("Median re-scan %s against the watcher's view p50 %s.", FormatDuration(m.Duration), FormatDuration(f.View.P50)))
		rec.Tables = append(rec.Tables, rt)
		rec.Metrics["fresh.rescan@"+k] = Metric{Value: m.Duration.Seconds(), Unit: UnitSeconds, What: "a full re-scan (indexer --once), median"}
	}
	return rec
}

func (r *Result) onceRecord() Record {
	o := r.Once
	rec := r.record("once", o.Load)
	k := CorpusKey(o.Corpus)
	t := NewTable(o.Corpus.Name, "what", ">time", ">documents", ">read", ">published", "note")
	t.About = fmt.Sprintf("Store: %s.", o.Store)
	if o.Initial != nil {
		t.Add("first run, empty store (not a target)", FormatDuration(o.Initial.Duration), o.Initial.Documents, o.Initial.Read, o.Initial.Published, errText(o.Initial.Err))
	}
	for i, x := range o.Runs {
		known := ""
		if x.Known != "" {
			known = "; the stream's state from the " + x.Known
		}
		t.Add(fmt.Sprintf("indexer --once, nothing changed, run %d", i+1), FormatDuration(x.Duration), x.Documents, x.Read, x.Published,
			fmt.Sprintf("reported %d ms inside the process%s%s", x.Millis, known, NoteSuffix(errText(x.Err))))
	}
	t.Add(o.Walk.What, FormatDuration(o.Walk.Duration), o.Walk.Docs, "", "", "")
	t.Add(o.Hash.What, FormatDuration(o.Hash.Duration), o.Hash.Docs, o.Hash.Docs, "", "for scale: what a re-scan that reads every file pays")
	rec.Tables = append(rec.Tables, t)
	if len(o.Runs) > 0 {
		m := medianOnce(o.Runs)
		worst := slices.MaxFunc(o.Runs, func(a, b OnceRun) int { return cmp.Compare(a.Duration, b.Duration) })
		events := 0
		failed := ""
		for _, x := range o.Runs {
			events += x.Published + x.Deleted
			if x.Err != "" {
				failed = "failed: " + x.Err
			}
		}
		rec.Metrics["once.worst@"+k] = Metric{Value: worst.Duration.Seconds(), Unit: UnitSeconds, What: "indexer --once, worst run",
			Note: fmt.Sprintf("median %s of %d runs", FormatDuration(m.Duration), len(o.Runs)), Err: failed}
		rec.Metrics["once.events@"+k] = Metric{Value: float64(events), Unit: UnitCount, What: "events published by the runs"}
	}
	if o.Walk.Duration > 0 {
		rec.Metrics["once.walk@"+k] = Metric{Value: o.Walk.Duration.Seconds(), Unit: UnitSeconds, What: "walk + stat"}
	}
	if o.Hash.Duration > 0 {
		rec.Metrics["once.hash@"+k] = Metric{Value: o.Hash.Duration.Seconds(), Unit: UnitSeconds, What: "walk + read + sha256"}
	}
	return rec
}

func (r *Result) churnRecord() Record {
	c := r.Churn
	if c == nil {
		rec := r.record("churn", Load{Before: "?"})
		rec.Notes = append(rec.Notes, "split mode did not start: "+r.SplitErr)
		return rec
	}
	rec := r.record("churn", c.Load)
	k := CorpusKey(c.Corpus)
	rate := float64(c.Writes) / max(c.WriteTime.Seconds(), 1e-9)
	t := NewTable(fmt.Sprintf("%s: %d writes/s for %s", c.Corpus.Name, c.Rate, c.For), "measure", ">value")
	t.About = fmt.Sprintf("Bounded at %d writes and %s.", int(float64(c.Rate)*c.For.Seconds()), c.For+5*time.Second)
	t.Add("writes made", fmt.Sprintf("%d in %s (%.0f/s)", c.Writes, FormatDuration(c.WriteTime), rate))
	t.Add("status samples", fmt.Sprintf("%d (%d failed)", c.Samples, c.SampleErrs))
	t.Add("lag in time (oldest write not shown by view): p50 / p99 / max", fmt.Sprintf("%s / %s / %s", FormatDuration(stats.Percentile(c.TimeLag, 50)), FormatDuration(stats.Percentile(c.TimeLag, 99)), FormatDuration(stats.Percentile(c.TimeLag, 100))))
	t.Add("catalog lag in events: p50 / p99 / max", fmt.Sprintf("%d / %d / %d", stats.Percentile(c.CatalogLag, 50), stats.Percentile(c.CatalogLag, 99), stats.Percentile(c.CatalogLag, 100)))
	t.Add("index lag in events: p50 / p99 / max", fmt.Sprintf("%d / %d / %d", stats.Percentile(c.IndexLag, 50), stats.Percentile(c.IndexLag, 99), stats.Percentile(c.IndexLag, 100)))
	catch := FormatDuration(c.CatchUp)
	if c.CatchUpErr != "" {
		catch = c.CatchUpErr
	}
	t.Add("last write to caught up (view shows it, index at stream_last_seq)", catch)
	rec.Tables = append(rec.Tables, t)
	m := Metric{Unit: UnitSeconds, What: "guide, the oldest write not shown"}
	switch {
	case c.Samples == 0:
		m.Err = "no status sample"
	case c.CatchUpErr != "":
		m.Err = c.CatchUpErr
	}
	if len(c.TimeLag) > 0 {
		m.Value = slices.Max(c.TimeLag).Seconds()
		m.Note = fmt.Sprintf("p99 %s over %d samples; %d writes at %.0f/s", FormatDuration(stats.Percentile(c.TimeLag, 99)), c.Samples, c.Writes, rate)
	}
	rec.Metrics["churn.max-lag@"+k] = m
	return rec
}
