package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guide/guide/tools/stats"
)

// ClientsResult is several stdio clients on one indexed project: one owner, a bridge each.
type ClientsResult struct {
	Corpus *Corpus
	// Second is each second client's time from spawn to its first tree answer, through
	// bin/guide-mcp as installed (it execs guide-bridge); Alone the same through a
	// guide-mcp with no guide-bridge beside it, which bridges in its own process.
	Second, Alone []time.Duration
	// BridgeRSS is each bridge's VmRSS after its first answer; AloneRSS the same of the
	// guide-mcp that bridges in its own process.
	BridgeRSS []int64
	AloneRSS  int64
	// OneRSS is the owner's and one bridge's VmRSS; FiveRSS the owner's and five bridges'.
	OneRSS, FiveRSS int64
	// Attached clients each time the owner was killed; Recovered, per kill, the time
	// until every one of them had answered again; Answers, every client's time.
	Attached  int
	Recovered []time.Duration
	Answers   []time.Duration
	Load      Load
	Err       string
}

// The goals asked of several clients on one project.
const (
	secondClientGoal = 300 * time.Millisecond
	bridgeRSSGoal    = 20_000_000
	recoveredGoal    = 2 * time.Second
	fiveClientsGoal  = 1.2
)

// ratio is the five clients' memory over the one client's.
func (c *ClientsResult) ratio() float64 { return float64(c.FiveRSS) / float64(max(c.OneRSS, 1)) }

func (r *Result) clientsMarkdown() string {
	var b strings.Builder
	c := r.Clients
	r.header(&b, "clients", c.Load)
	docs := len(c.Corpus.Files)
	ts := []Target{
		{What: "a second client on an indexed project, spawn to first answer, " + c.Corpus.Name, Goal: "≤ 300 ms"},
		{What: "a bridge's resident memory (VmRSS)", Goal: "≤ 20 MB"},
		{What: fmt.Sprintf("the owner killed (SIGKILL) with %d clients attached: every client answering again, p95 over the kills", c.Attached), Goal: "≤ 2 s"},
		{What: "5 clients' memory (owner and bridges, VmRSS) against 1 client's", Goal: "≤ 1.2×"},
	}
	for i := range ts {
		ts[i].Measured, ts[i].Met = "—", "not measured"
	}
	if len(c.Second) > 0 {
		p95 := stats.Percentile(c.Second, 95)
		ts[0].Measured = fmt.Sprintf("p50 %s, p95 %s (%d clients)", FormatDuration(stats.Median(c.Second)), FormatDuration(p95), len(c.Second))
		ts[0].Met = at100k(docs, verdict(p95 <= secondClientGoal))
	}
	if len(c.BridgeRSS) > 0 {
		worst := slices.Max(c.BridgeRSS)
		ts[1].Measured = fmt.Sprintf("at most %s (%d bridges)", FormatMB(worst), len(c.BridgeRSS))
		ts[1].Met = verdict(worst <= bridgeRSSGoal)
	}
	if len(c.Recovered) > 0 {
		p95 := stats.Percentile(c.Recovered, 95)
		ts[2].Measured = fmt.Sprintf("%s (%d kills; median %s)", FormatDuration(p95), len(c.Recovered), FormatDuration(stats.Median(c.Recovered)))
		ts[2].Met = at100k(docs, verdict(p95 <= recoveredGoal))
	}
	if c.OneRSS > 0 && c.FiveRSS > 0 {
		ts[3].Measured = fmt.Sprintf("%.2f× (%s against %s)", c.ratio(), FormatMB(c.FiveRSS), FormatMB(c.OneRSS))
		ts[3].Met = verdict(c.ratio() <= fiveClientsGoal)
	}
	targetTable(&b, "Targets (several clients, one owner)", ts)
	if c.Err != "" {
		fmt.Fprintf(&b, "Stopped early: %s\n\n", c.Err)
	}
	fmt.Fprintf(&b, "%d files, %s; stdio clients of `bin/guide-mcp --root DIR --data D` (mcp-go's client), with the project's owner daemon running and its search index caught up.\n\n",
		docs, FormatMB(c.Corpus.Bytes))
	b.WriteString("| what | n | p50 | p95 | max | VmRSS |\n|---|---:|---:|---:|---:|---:|\n")
	row := func(what string, ts []time.Duration, rss string) {
		if len(ts) == 0 {
			return
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", what, len(ts), FormatDuration(stats.Median(ts)),
			FormatDuration(stats.Percentile(ts, 95)), FormatDuration(slices.Max(ts)), rss)
	}
	bridge := "—"
	if len(c.BridgeRSS) > 0 {
		bridge = fmt.Sprintf("%s to %s", FormatMB(slices.Min(c.BridgeRSS)), FormatMB(slices.Max(c.BridgeRSS)))
	}
	row("a second client (bin/guide-mcp, which execs bin/guide-bridge): spawn to first tree(\"\", 2) answer", c.Second, bridge)
	alone := "—"
	if c.AloneRSS > 0 {
		alone = FormatMB(c.AloneRSS)
	}
	row("baseline: guide-mcp with no guide-bridge beside it (bridges in its own process): the same", c.Alone, alone)
	row(fmt.Sprintf("the owner killed with %d clients attached: until every one answers tree again", c.Attached), c.Recovered, "")
	row("the same, each client's answer", c.Answers, "")
	b.WriteString("\n")
	if c.OneRSS > 0 && c.FiveRSS > 0 {
		fmt.Fprintf(&b, "Memory (VmRSS, the owner's and the bridges'): 1 client %s, 5 clients %s, %.2f×.\n\n",
			FormatMB(c.OneRSS), FormatMB(c.FiveRSS), c.ratio())
	}
	return b.String()
}
