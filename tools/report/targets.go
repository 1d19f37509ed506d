package report

import (
	"fmt"
	"strings"
)

// Targets is every performance target of the project, in the order of the first table of
// BENCHMARKS.md. Each reads metrics of its area's latest record (the keys are listed in
// that area's record of BENCHMARKS.json). Adding a target is adding a line here; a new
// measure is a metric the scenario's record adds.
var Targets = []Target{
	{Area: "cold", What: "cold index of 10k generated documents, until the catalog holds the first scan", Goal: AtLeast("cold.docs-per-s@10k", PerSec(3000)), Baseline: []string{"cold.fts5@10k"}},
	{Area: "cold", What: "cold index of 10k, until every projection caught up, against SQLite FTS5", Goal: AtMost("cold.all/fts5@10k", Ratio(0.5)), Baseline: []string{"cold.fts5@10k", "cold.bleve@10k"}},
	{Area: "cold", What: "resident memory (VmRSS) two seconds after a first index of 100k", Goal: AtMost("cold.rss-settled@100k", MB(600))},
	{Area: "cold", What: "data directory after a first index of 100k, against the text", Goal: AtMost("cold.data/text@100k", Ratio(1.5)), Baseline: []string{"cold.fts5-db/text@100k"}},
	{Area: "cold", What: "cold index of 100k, until every projection caught up, against zoekt-index", Goal: AtMost("cold.all/zoekt@100k", Ratio(1.0)), Baseline: []string{"cold.zoekt@100k", "cold.fts5@100k", "cold.floor@100k"}},
	{Area: "cold", What: "cold index of $(go env GOROOT)/src, until every projection caught up, against zoekt-index", Goal: AtMost("cold.all/zoekt@goroot", Ratio(1.0)), Baseline: []string{"cold.zoekt@goroot", "cold.fts5@goroot"}},
	{Area: "cold", What: "stretch: cold index of 100k, until every projection caught up, against SQLite FTS5", Goal: AtMost("cold.all/fts5@100k", Ratio(1.0)), Baseline: []string{"cold.fts5@100k"}},
	{Area: "cold", What: "stretch: cold index of 100k against the floor (guide-floor)", Goal: AtMost("cold.all/floor@100k", Ratio(2.0)), Baseline: []string{"cold.floor@100k"}},
	{Area: "cold", What: "peak resident memory (VmHWM) of a first index of 100k, no GOMEMLIMIT", Goal: AtMost("cold.peak@100k", MB(600)), Baseline: []string{"cold.zoekt-peak@100k"}},
	{Area: "cold", What: "resident memory two seconds after a first index of 100k, against zoekt-webserver serving it", Goal: AtMost("cold.rss-settled/zoekt-web@100k", Ratio(1.0)).As("caught up"), Also: []Goal{AtMost("cold.rss-merged/zoekt-web@100k", Ratio(1.0)).As("merged")}, Baseline: []string{"cold.zoekt-web-rss@100k"}},
	{Area: "cold", What: "search index after a first index of 100k, against the text", Goal: AtMost("cold.index/text@100k", Ratio(0.8)), Baseline: []string{"cold.zoekt-index/text@100k", "cold.fts5-db/text@100k"}},
	{Area: "latency", What: "view p95 through MCP (stdio), 100k", Goal: AtMost("latency.view.p95@100k", Ms(2)), Baseline: []string{"latency.fs-view.p95@100k", "latency.os-view.p95@100k"}},
	{Area: "latency", What: "tree (depth 2) p95 through MCP (stdio), 100k", Goal: AtMost("latency.tree.p95@100k", Ms(10)), Baseline: []string{"latency.fs-tree.p95@100k", "latency.os-tree.p95@100k"}},
	{Area: "restart", What: "restart to first answer, 100k: worst of the runs after SIGKILL and after a clean stop", Goal: AtMost("restart.worst@100k", Ms(300)), Baseline: []string{"restart.fs@100k"}},
	{Area: "search", What: "search(word) p50 through MCP (stdio), 100k", Goal: AtMost("search.p50@100k", Ms(2)), Baseline: []string{"search.floor.p50@100k", "search.sdk.p50@100k"}},
	{Area: "search", What: "search(word) p95 through MCP (stdio), 100k", Goal: AtMost("search.p95@100k", Ms(10)), Baseline: []string{"search.floor.p95@100k"}},
	{Area: "search", What: "search against `rg -l -w -i -F`, median of per-word ratios, 100k", Goal: AtLeast("search.rg-ratio@100k", Ratio(100)), Baseline: []string{"search.rg.p50@100k"}},
	{Area: "search", What: "search index against the text, 100k", Goal: AtMost("search.index/text@100k", Ratio(3))},
	{Area: "content", What: "get_content of a pattern matching 10 documents, p95, 100k", Goal: AtMost("content.p95@100k", Ms(5)), Baseline: []string{"content.fs.p95@100k"}},
	{Area: "web", What: "a web page, whole answer read, p95 of the slowest kind of page, 100k", Goal: AtMost("web.worst.p95@100k", Ms(50))},
	{Area: "fresh", What: "saved file → view shows it, split mode, 10k", Goal: AtMost("fresh.view.p50@10k", Ms(50)).As("p50"), Also: []Goal{AtMost("fresh.view.p95@10k", Ms(150)).As("p95")}, Baseline: []string{"fresh.rescan@10k"}},
	{Area: "fresh", What: "saved file → search finds it, split mode, 10k", Goal: AtMost("fresh.search.p50@10k", Ms(50)).As("p50"), Also: []Goal{AtMost("fresh.search.p95@10k", Ms(150)).As("p95")}, Baseline: []string{"fresh.rescan@10k"}},
	{Area: "once", What: "indexer --once with nothing changed, whole process, 100k", Goal: AtMost("once.worst@100k", Seconds(2)).As("worst"), Also: []Goal{AtMost("once.events@100k", Number(0)).As("events")}, Baseline: []string{"once.walk@100k"}},
	{Area: "churn", What: "1,000 writes/s for 60 s, split mode: the query process never further behind, 10k", Goal: AtMost("churn.max-lag@10k", Seconds(1))},
	{Area: "ryw", What: "read-your-writes: what the sync adds to a call through the stdio bridge, 100k", Goal: AtMost("ryw.added.p50@100k", Ms(2)).As("p50, nothing changed for 1 s"), Also: []Goal{AtMost("ryw.added-after-save.p95@100k", Ms(60)).As("p95 at once after a save"), AtMost("ryw.stale@100k", Number(0)).As("stale answers")}, Baseline: []string{"ryw.off.p50@100k"}},
	{Area: "clients", What: "a second client on an indexed project, spawn to first answer, p95, 100k", Goal: AtMost("clients.second.p95@100k", Ms(300)), Baseline: []string{"clients.alone.p95@100k"}},
	{Area: "clients", What: "a bridge's resident memory (VmRSS), 100k", Goal: AtMost("clients.bridge-rss@100k", MB(20)), Baseline: []string{"clients.alone-rss@100k"}},
	{Area: "clients", What: "owner killed with 3 clients attached: all answer again, p95 over the kills, 100k", Goal: AtMost("clients.recovered.p95@100k", Seconds(2))},
	{Area: "clients", What: "5 clients' memory (owner and bridges) against 1 client's, 100k", Goal: AtMost("clients.five/one@100k", Ratio(1.2))},
	{Area: "load", What: "50 HTTP sessions calling view, search and get_content", Goal: AtLeast("load.calls-per-s", PerSec(2000)), Also: []Goal{AtMost("load.p99", Ms(50)).As("p99"), AtMost("load.errors", Number(0)).As("errors"), AtMost("load.rss-growth", Ratio(1.2)).As("RSS end / 5 s in")}},
	{Area: "sessions", What: "50 HTTP sessions with 6% attach and detach: the slowest tool's p99", Goal: AtMost("sessions.worst-tool.p99", Ms(100)), Also: []Goal{AtMost("sessions.errors", Number(0)).As("errors"), AtMost("sessions.orphans", Number(0)).As("session documents left")}},
	{Area: "replica", What: "a new replica (catalog and index) catches up with the stream", Goal: AtLeast("replica.events-per-s", PerSec(20000))},
	{Area: "changes", What: "changes: an answer of 1,000 changes since a cursor, p95, stream of 100k", Goal: AtMost("changes.p95@100k", Ms(20)), Baseline: []string{"changes.diff.p95@100k"}},
	{Area: "relevance", What: "known items, npm READMEs: guide's error (1 − MRR@10) against FTS5's; recall@10 not below", Goal: AtMost("relevance.error/fts5@npm", Ratio(0.5)), Also: []Goal{AtLeast("relevance.r10-fts5@npm", Points(0)).As("R@10 − FTS5's")}, Baseline: []string{"relevance.fts5.mrr@npm"}},
	{Area: "relevance", What: "known items, Go package synopses: the same", Goal: AtMost("relevance.error/fts5@go-synopsis", Ratio(0.5)), Also: []Goal{AtLeast("relevance.r10-fts5@go-synopsis", Points(0)).As("R@10 − FTS5's")}, Baseline: []string{"relevance.fts5.mrr@go-synopsis"}},
	{Area: "relevance", What: "known items, Go functions' doc sentences: the same", Goal: AtMost("relevance.error/fts5@go-func", Ratio(0.5)), Also: []Goal{AtLeast("relevance.r10-fts5@go-func", Points(0)).As("R@10 − FTS5's")}, Baseline: []string{"relevance.fts5.mrr@go-func"}},
	{Area: "scale", What: "time to searchable, 1M against 100k in the same run", Goal: AtMost("scale.searchable/100k@1M", Ratio(10.5)), Baseline: []string{"scale.bleve/100k@1M"}},
	{Area: "scale", What: "data directory, 1M against 100k in the same run", Goal: AtMost("scale.disk/100k@1M", Ratio(10.5))},
	{Area: "scale", What: "resident memory when searchable, 1M", Goal: AtMost("scale.rss@1M", MB(2000))},
	{Area: "scale", What: "peak resident memory (VmHWM) of a first index of 1M, no GOMEMLIMIT", Goal: AtMost("scale.peak@1M", MB(2000))},
	{Area: "scale", What: "search(word) p95 through MCP (stdio), 1M", Goal: AtMost("scale.search.p95@1M", Ms(20))},
	{Area: "partitions", What: "P = 4: every query's hits (paths, order, scores) through the fan-out as through the whole replica, 100k", Goal: AtMost("partitions.differ@100k", Number(0))},
	{Area: "partitions", What: "P = 4: a replica of one partition's data directory against a whole replica's, once their indexes merged, 100k", Goal: AtMost("partitions.data/whole@100k", Ratio(0.3))},
	{Area: "partitions", What: "P = 4: a replica of one partition's resident memory (VmRSS) against a whole replica's, once their indexes merged, 100k", Goal: AtMost("partitions.rss/whole@100k", Ratio(0.3))},
	{Area: "partitions", What: "P = 4: a replica of one partition's catch-up from empty against a whole replica's, 100k", Goal: AtMost("partitions.catchup/whole@100k", Ratio(0.3)), Baseline: []string{"partitions.catchup@100k"}},
	{Area: "partitions", What: "P = 4: search(word) through the fan-out against the whole replica, 100k", Goal: AtMost("partitions.p50/whole@100k", Ratio(2)).As("p50"), Also: []Goal{AtMost("partitions.p95/whole@100k", Ratio(2.5)).As("p95")}, Baseline: []string{"partitions.whole.p50@100k", "partitions.whole.p95@100k", "partitions.first-p50/whole@100k", "partitions.first-p95/whole@100k"}},
}

// Target is a goal for one or more metrics of an area's record, with the baselines measured
// in the same run shown beside them.
type Target struct {
	Area     string
	What     string
	Goal     Goal
	Also     []Goal   // further conditions, all to be met
	Baseline []string // metric keys of the baselines
}

// Goal bounds one metric from above or below.
type Goal struct {
	Metric string
	Bound  Quantity
	AtMost bool   // else at least
	Name   string // names the metric in a target of several goals ("p95")
}

// Quantity is a value in a unit: a goal's bound.
type Quantity struct {
	Value float64
	Unit  Unit
}

// AtMost is the goal that a metric be at most the bound.
func AtMost(metric string, bound Quantity) Goal {
	return Goal{Metric: metric, Bound: bound, AtMost: true}
}

// AtLeast is the goal that a metric be at least the bound.
func AtLeast(metric string, bound Quantity) Goal { return Goal{Metric: metric, Bound: bound} }

// As names the goal's metric in its target's cells.
func (g Goal) As(name string) Goal { g.Name = name; return g }

// Ms is milliseconds.
func Ms(v float64) Quantity { return Quantity{v / 1e3, UnitSeconds} }

// Seconds is seconds.
func Seconds(v float64) Quantity { return Quantity{v, UnitSeconds} }

// MB is megabytes (10^6 bytes).
func MB(v float64) Quantity { return Quantity{v * 1e6, UnitBytes} }

// Ratio is a ratio of two figures.
func Ratio(v float64) Quantity { return Quantity{v, UnitTimes} }

// PerSec is a rate.
func PerSec(v float64) Quantity { return Quantity{v, UnitPerSecond} }

// Number is a count.
func Number(v float64) Quantity { return Quantity{v, UnitCount} }

// Points is a score, or a difference of scores.
func Points(v float64) Quantity { return Quantity{v, UnitScore} }

// String is the goal as a table cell: "≤ 2 ms", or "p95 ≤ 150 ms" when named.
func (g Goal) String() string {
	op := "≥"
	if g.AtMost {
		op = "≤"
	}
	bound := g.Bound.Unit.Format(g.Bound.Value)
	if g.Bound.Value == 0 {
		bound = "0"
	}
	s := op + " " + bound
	if g.Name != "" {
		s = g.Name + " " + s
	}
	return s
}

func (g Goal) met(m Metric) bool {
	if m.Err != "" {
		return false
	}
	const eps = 1e-9
	if g.AtMost {
		return m.Value <= g.Bound.Value*(1+eps)+eps
	}
	return m.Value >= g.Bound.Value*(1-eps)-eps
}

// The verdicts of a target.
const (
	Met         = "met"
	NotMet      = "not met"
	NotMeasured = "not measured"
)

// Status is a target read against the results.
type Status struct {
	Target
	Goal     string // every goal, as written in the tables
	Measured string
	Baseline string
	Verdict  string
	Date     string // of the record read; "" when there is none
}

// Check reads the target against the results.
func (t Target) Check(res *Results) Status {
	goals := append([]Goal{t.Goal}, t.Also...)
	var gs []string
	for _, g := range goals {
		gs = append(gs, g.String())
	}
	st := Status{Target: t, Goal: strings.Join(gs, ", "), Measured: "—", Baseline: "—", Verdict: NotMeasured}
	rec, ok := res.Record(t.Area)
	if !ok {
		return st
	}
	st.Date = rec.Date
	if rec.NotMeasured != "" {
		st.Verdict = "not measured since " + day(rec.Date)
		return st
	}
	var measured []string
	met := true
	absent := true             // every metric's baseline is not on this machine: not measured, rather than not met
	shown := map[string]bool{} // an error is stated once, not beside every metric it marks
	for _, g := range goals {
		m, ok := rec.Metrics[g.Metric]
		if !ok {
			st.Measured = "not in the run of " + day(rec.Date)
			return st
		}
		met = met && g.met(m)
		absent = absent && strings.HasPrefix(m.Err, "not on this machine")
		if shown[m.Err] {
			m.Err = ""
		}
		shown[m.Err] = true
		s := m.String()
		if g.Name != "" {
			s = g.Name + " " + s
		}
		measured = append(measured, s)
	}
	st.Measured = strings.Join(measured, ", ")
	st.Verdict = NotMet
	if met {
		st.Verdict = Met
	} else if absent {
		st.Verdict = NotMeasured
	}
	var bs []string
	for _, k := range t.Baseline {
		if m, ok := rec.Metrics[k]; ok {
			bs = append(bs, fmt.Sprintf("%s: %s", m.What, m))
		}
	}
	if len(bs) > 0 {
		st.Baseline = strings.Join(bs, "; ")
	}
	return st
}

// day is the date part of a record's date.
func day(date string) string {
	if len(date) >= 10 {
		return date[:10]
	}
	return date
}
