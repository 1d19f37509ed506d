package load

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guide/guide/tools/report"
)

// Record is a run's record for the results file (area "load", or "sessions" for the mix
// with session churn): the totals, each tool's share and the server's memory over time, and
// the metrics the area's targets read. The caller fills in when, where and how.
func Record(area string, r Report) report.Record {
	rec := report.Record{Area: area, Metrics: map[string]report.Metric{}}
	sec := func(d interface{ Seconds() float64 }) float64 { return d.Seconds() }
	put := func(name string, v float64, unit report.Unit, what, note string) {
		rec.Metrics[area+"."+name] = report.Metric{Value: v, Unit: unit, What: what, Note: note}
	}
	put("calls-per-s", r.PerSecond, report.UnitPerSecond, "tool calls per second, all sessions", fmt.Sprintf("%d calls in %s", r.Calls, report.FormatDuration(r.Duration)))
	put("p50", sec(r.P50), report.UnitSeconds, "every call", "")
	put("p99", sec(r.P99), report.UnitSeconds, "every call", "")
	put("errors", float64(r.Errors), report.UnitCount, "calls that failed", "")
	if r.Orphaned >= 0 {
		put("orphans", float64(r.Orphaned), report.UnitCount, "session documents left once the sessions ended", "after "+report.FormatDuration(r.Drain))
	}
	tools := slices.Sorted(mapsKeys(r.ByTool))
	if len(tools) > 0 {
		worst := slices.MaxFunc(tools, func(a, b string) int { return int(r.ByTool[a].P99 - r.ByTool[b].P99) })
		put("worst-tool.p99", sec(r.ByTool[worst].P99), report.UnitSeconds, "the slowest tool's p99", worst)
	}
	// Memory flat: the largest resident set from 5 s in to the end of the calls against
	// the one 5 s in, once the server has warmed up.
	if g, ok := growth(r.Memory); ok {
		put("rss-growth", g, report.UnitTimes, "the server's largest VmRSS during the run against its VmRSS 5 s in", "")
	}

	t := report.NewTable("", ">sessions", ">duration", ">calls", ">calls/s", ">p50", ">p99", ">max", ">errors", ">session documents left")
	left := "not reported"
	if r.Orphaned >= 0 {
		left = fmt.Sprintf("%d after %s", r.Orphaned, report.FormatDuration(r.Drain))
	}
	t.Add(r.Sessions, report.FormatDuration(r.Duration), r.Calls, fmt.Sprintf("%.0f", r.PerSecond), report.FormatDuration(r.P50),
		report.FormatDuration(r.P99), report.FormatDuration(r.Max), r.Errors, left)
	for _, k := range slices.Sorted(mapsKeys(r.ErrorKinds)) {
		t.Notes = append(t.Notes, fmt.Sprintf("Error %s: %d.", k, r.ErrorKinds[k]))
	}
	rec.Tables = append(rec.Tables, t)
	bt := report.NewTable("Per tool", "tool", ">calls", ">p50", ">p99")
	for _, k := range tools {
		s := r.ByTool[k]
		bt.Add(k, s.Calls, report.FormatDuration(s.P50), report.FormatDuration(s.P99))
	}
	rec.Tables = append(rec.Tables, bt)
	if len(r.Memory) > 0 {
		mt := report.NewTable("The server's memory (from its /metrics)", ">at", ">VmRSS", ">heap in use", ">goroutines", ">calls by then")
		for _, s := range r.Memory {
			mt.Add(fmt.Sprintf("%.0f s", s.At.Seconds()), fmt.Sprintf("%.0f MiB", s.RSSBytes/(1<<20)), fmt.Sprintf("%.0f MiB", s.HeapInUs/(1<<20)),
				fmt.Sprintf("%.0f", s.Goroutines), s.Calls)
		}
		mt.Notes = append(mt.Notes, "The last row is after the sessions ended.")
		rec.Tables = append(rec.Tables, mt)
	}
	return rec
}

// growth is the largest resident set from the second sample (5 s in) to the end of the
// calls, the sample after the sessions ended left out, against the second sample's.
func growth(mem []Sample) (float64, bool) {
	if len(mem) < 4 || mem[1].RSSBytes <= 0 {
		return 0, false
	}
	top := 0.0
	for _, s := range mem[1 : len(mem)-1] {
		top = max(top, s.RSSBytes)
	}
	return top / mem[1].RSSBytes, true
}

// About describes a run's workload in one sentence, for a record's notes.
func About(cfg Config, corpus string) string {
	var mix []string
	for _, k := range slices.Sorted(mapsKeys(cfg.Mix)) {
		mix = append(mix, fmt.Sprintf("%s=%d", k, cfg.Mix[k]))
	}
	return fmt.Sprintf("%d sessions for %s, mix %s, over %s.", cfg.Sessions, cfg.Duration, strings.Join(mix, ","), corpus)
}
