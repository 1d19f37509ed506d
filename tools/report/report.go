// Package report keeps what the benchmark harness measured and renders it: a run's
// results become one record per area (results.go), the records are kept in BENCHMARKS.json
// (the latest of each area), and the whole of BENCHMARKS.md is rendered from that file
// (render.go): every target with its figure first (targets.go), then each area's tables,
// then how each is measured (measured/*.md). Rendering does no I/O, so its output is tested
// with golden files.
package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Settings are the parts of the harness's configuration the report states.
type Settings struct {
	Views    int // view calls per server
	Trees    int // tree calls per server
	Restarts int // restarts each way
	Seed     uint64
}

// Result is everything one run measured.
type Result struct {
	Machine  Machine
	Settings Settings
	// Command is the command line of the run and Commit the build measured, as the
	// records state them; Scenarios are the scenarios it ran.
	Command   string
	Commit    string
	Scenarios []string
	Started   time.Time
	Duration  time.Duration
	Corpora   []CorpusResult
	Load      Load     // of the cold, latency and restart scenarios
	Notes     []string // what could not be measured, and why

	Search  []SearchResult
	Content *ContentResult
	Fresh   *FreshResult
	Once    *OnceResult
	Churn   *ChurnResult
	Web     *WebResult
	Clients *ClientsResult
	Replica *ReplicaResult
	Changes *ChangesResult
	Scale   *ScaleResult // opt-in: --scenarios scale
	// Partitions is opt-in: --scenarios partitions.
	Partitions *PartitionsResult
	RYW        *RYWResult
	// SplitErr says why the split-mode scenarios did not run.
	SplitErr string
}

// Machine is what the run ran on.
type Machine struct {
	CPUs   int    `json:"cpus"`
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
	Go     string `json:"go,omitempty"`
	Kernel string `json:"kernel,omitempty"`
	Date   string `json:"-"` // when the run began: the date of its records
}

// Load is the load average (1, 5, 15 min, as /proc/loadavg has it) when a scenario began
// and when it ended.
type Load struct {
	Before string `json:"before"`
	After  string `json:"after,omitempty"`
}

// String is how the tables state the load.
func (l Load) String() string {
	if l.After == "" {
		return fmt.Sprintf("load average (1, 5, 15 min) %s before", l.Before)
	}
	return fmt.Sprintf("load average (1, 5, 15 min) %s before, %s after", l.Before, l.After)
}

// Records turns what the run measured into one record per area it measured, for the
// results file.
func (r *Result) Records() []Record {
	var out []Record
	has := func(f func(CorpusResult) bool) bool { return slices.ContainsFunc(r.Corpora, f) }
	if has(func(c CorpusResult) bool { return len(c.Index) > 0 }) {
		out = append(out, r.coldRecord())
	}
	if has(func(c CorpusResult) bool { return len(c.Latency) > 0 }) {
		out = append(out, r.latencyRecord())
	}
	if has(func(c CorpusResult) bool { return len(c.Restarts) > 0 }) {
		out = append(out, r.restartRecord())
	}
	if len(r.Search) > 0 {
		out = append(out, r.searchRecord())
	}
	if r.Content != nil {
		out = append(out, r.contentRecord())
	}
	if r.Web != nil {
		out = append(out, r.webRecord())
	}
	if r.Fresh != nil || r.SplitErr != "" && r.Ran(AreaFresh) {
		out = append(out, r.freshRecord())
	}
	if r.Once != nil {
		out = append(out, r.onceRecord())
	}
	if r.Churn != nil || r.SplitErr != "" && r.Ran(AreaChurn) {
		out = append(out, r.churnRecord())
	}
	if r.Clients != nil {
		out = append(out, r.clientsRecord())
	}
	if r.Replica != nil {
		out = append(out, r.replicaRecord())
	}
	if r.Changes != nil {
		out = append(out, r.changesRecord())
	}
	if r.Scale != nil {
		out = append(out, r.scaleRecord())
	}
	if r.Partitions != nil {
		out = append(out, r.partitionsRecord())
	}
	if r.RYW != nil {
		out = append(out, r.rywRecord())
	}
	return out
}

// The areas whose records a failed split mode still writes.
const (
	AreaFresh = "fresh"
	AreaChurn = "churn"
	AreaRYW   = "ryw"
)

// Ran reports whether the run included the scenario.
func (r *Result) Ran(scenario string) bool { return slices.Contains(r.Scenarios, scenario) }

// record starts the record of an area for this run.
func (r *Result) record(area string, l Load) Record {
	m := r.Machine
	m.Date = "" // the record's own
	return Record{Area: area, Date: r.Machine.Date, Machine: m, Load: l, Command: r.Command, Commit: r.Commit,
		Metrics: map[string]Metric{}}
}

// CorpusKey names a corpus in metric keys: its size for a generated one (10k, 100k, 1M),
// goroot for the Go tree.
func CorpusKey(c *Corpus) string {
	if c.Generated {
		return SizeKey(len(c.Files))
	}
	if strings.Contains(c.Name, "GOROOT") {
		return "goroot"
	}
	return Anchor(c.Name)
}

// SizeKey writes a number of documents as metric keys do: 1k, 100k, 1M.
func SizeKey(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// putLatency adds the p50 and p95 of a latency as metrics PREFIX.p50@KEY and .p95@KEY;
// errors during the calls, or a failure, mark them.
func (rec *Record) putLatency(prefix, key string, l Latency, what string) {
	errs := ""
	switch {
	case l.Err != "":
		errs = "failed: " + l.Err
	case l.N == 0:
		errs = "no calls"
	case l.Errors > 0:
		errs = fmt.Sprintf("%d of %d calls failed", l.Errors, l.N)
	}
	rec.Metrics[prefix+".p50@"+key] = Metric{Value: l.P50.Seconds(), Unit: UnitSeconds, What: what, Err: errs}
	rec.Metrics[prefix+".p95@"+key] = Metric{Value: l.P95.Seconds(), Unit: UnitSeconds, What: what, Err: errs}
}

// Latency is the distribution of one kind of call.
type Latency struct {
	Server string
	Op     string
	N      int
	Errors int
	P50    time.Duration
	P95    time.Duration
	P99    time.Duration
	Max    time.Duration
	Note   string
	Err    string // why it was not measured
}

// latencyTable is a table of latencies, one row each; first names the first column.
func latencyTable(title, first string, ls ...Latency) Table {
	t := NewTable(title, first, "call", ">n", ">errors", ">p50", ">p95", ">p99", ">max", "note")
	for _, l := range ls {
		if l.Err != "" {
			t.Add(l.Server, l.Op, "", "", "", "", "", "", "not measured: "+l.Err)
			continue
		}
		t.Add(l.Server, l.Op, l.N, l.Errors, FormatDuration(l.P50), FormatDuration(l.P95), FormatDuration(l.P99), FormatDuration(l.Max), l.Note)
	}
	return t
}
