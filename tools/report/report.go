// Package report renders what the benchmark harness measured as the Markdown of
// BENCHMARKS.md: data types in, Markdown out. It does no I/O and starts no process, so
// its output is tested with golden files.
package report

import (
	"fmt"
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
	Started  time.Time
	Duration time.Duration
	Corpora  []CorpusResult
	Load     Load     // of the cold, latency and restart scenarios
	Notes    []string // what could not be measured, and why

	Search  []SearchResult
	Content *ContentResult
	Fresh   *FreshResult
	Once    *OnceResult
	Churn   *ChurnResult
	Web     *WebResult
	Clients *ClientsResult
	Scale   *ScaleResult // opt-in: --scenarios scale
	// SplitErr says why the split-mode scenarios did not run.
	SplitErr string
}

// Machine is what the run ran on.
type Machine struct {
	CPUs   int
	CPU    string
	Memory string
	Go     string
	Kernel string
	Date   string
}

// Load is the load average when a scenario began and when it ended.
type Load struct{ Before, After string }

// String is how the tables state the load.
func (l Load) String() string {
	return fmt.Sprintf("load average (1, 5, 15 min) %s before, %s after", l.Before, l.After)
}

// Target is a performance goal beside the figure measured for it.
type Target struct {
	What     string
	Goal     string
	Measured string
	Met      string // "met", "not met", or "not measured"
}

// Block is one part of BENCHMARKS.md the harness writes, between its own markers, so
// that a run of some scenarios leaves the others' tables as they were.
type Block struct {
	Name     string // "" for the block of the cold, latency and restart scenarios
	Markdown string
}

// Blocks renders every part this run measured.
func (r *Result) Blocks() []Block {
	var out []Block
	if len(r.Corpora) > 0 {
		out = append(out, Block{Markdown: r.Markdown()})
	}
	if len(r.Search) > 0 {
		out = append(out, Block{Name: "search", Markdown: r.searchMarkdown()})
	}
	if r.Content != nil {
		out = append(out, Block{Name: "content", Markdown: r.contentMarkdown()})
	}
	if r.Fresh != nil || r.Once != nil || r.Churn != nil || r.SplitErr != "" {
		out = append(out, Block{Name: "freshness", Markdown: r.freshMarkdown()})
	}
	if r.Web != nil {
		out = append(out, Block{Name: "web", Markdown: r.webMarkdown()})
	}
	if r.Clients != nil {
		out = append(out, Block{Name: "clients", Markdown: r.clientsMarkdown()})
	}
	if r.Scale != nil {
		out = append(out, Block{Name: "scale", Markdown: r.scaleMarkdown()})
	}
	return out
}

// verdict is a target's last column.
func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// at100k qualifies a verdict on a corpus of another size than the target's.
func at100k(docs int, v string) string {
	if docs != 100_000 {
		return fmt.Sprintf("%s (on %d documents, not the target's 100k)", v, docs)
	}
	return v
}

func (r *Result) header(b *strings.Builder, what string, l Load) {
	fmt.Fprintf(b, "Measured by `make bench --scenarios %s` on %s (%d CPUs, %s); %s.\n\n",
		what, r.Machine.Date, r.Machine.CPUs, r.Machine.Go, l)
}

func targetTable(b *strings.Builder, title string, ts []Target) {
	fmt.Fprintf(b, "### %s\n\n| target | goal | measured | |\n|---|---|---|---|\n", title)
	for _, t := range ts {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.What, t.Goal, t.Measured, t.Met)
	}
	b.WriteString("\n")
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

func latencyRows(b *strings.Builder, ls ...Latency) {
	b.WriteString("| what | call | n | errors | p50 | p95 | p99 | max | note |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, l := range ls {
		if l.Err != "" {
			fmt.Fprintf(b, "| %s | %s | | | | | | | not measured: %s |\n", l.Server, l.Op, l.Err)
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", l.Server, l.Op, l.N, l.Errors,
			FormatDuration(l.P50), FormatDuration(l.P95), FormatDuration(l.P99), FormatDuration(l.Max), l.Note)
	}
	b.WriteString("\n")
}
