package report

import (
	"fmt"
	"slices"
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

// ratio is the five clients' memory over the one client's.
func (c *ClientsResult) ratio() float64 { return float64(c.FiveRSS) / float64(max(c.OneRSS, 1)) }

func (r *Result) clientsRecord() Record {
	c := r.Clients
	rec := r.record("clients", c.Load)
	k := CorpusKey(c.Corpus)
	if c.Err != "" {
		rec.Notes = append(rec.Notes, "stopped early: "+c.Err)
	}
	t := NewTable(c.Corpus.Name, "what", ">n", ">p50", ">p95", ">max", ">VmRSS")
	t.About = fmt.Sprintf("%d files, %s.", len(c.Corpus.Files), FormatMB(c.Corpus.Bytes))
	row := func(what string, ts []time.Duration, rss string) {
		if len(ts) == 0 {
			return
		}
		t.Add(what, len(ts), FormatDuration(stats.Median(ts)), FormatDuration(stats.Percentile(ts, 95)), FormatDuration(slices.Max(ts)), rss)
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
	if c.OneRSS > 0 && c.FiveRSS > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("Memory (VmRSS, the owner's and the bridges'): 1 client %s, 5 clients %s, %.2f×.", FormatMB(c.OneRSS), FormatMB(c.FiveRSS), c.ratio()))
	}
	rec.Tables = append(rec.Tables, t)

	if len(c.Second) > 0 {
		rec.Metrics["clients.second.p95@"+k] = Metric{Value: stats.Percentile(c.Second, 95).Seconds(), Unit: UnitSeconds, What: "guide, through guide-bridge",
			Note: fmt.Sprintf("p50 %s, %d clients", FormatDuration(stats.Median(c.Second)), len(c.Second))}
	}
	if len(c.Alone) > 0 {
		rec.Metrics["clients.alone.p95@"+k] = Metric{Value: stats.Percentile(c.Alone, 95).Seconds(), Unit: UnitSeconds, What: "guide-mcp bridging in its own process"}
	}
	if len(c.BridgeRSS) > 0 {
		rec.Metrics["clients.bridge-rss@"+k] = Metric{Value: float64(slices.Max(c.BridgeRSS)), Unit: UnitBytes, What: "guide-bridge, the largest",
			Note: fmt.Sprintf("%d bridges", len(c.BridgeRSS))}
	}
	if c.AloneRSS > 0 {
		rec.Metrics["clients.alone-rss@"+k] = Metric{Value: float64(c.AloneRSS), Unit: UnitBytes, What: "guide-mcp bridging in its own process"}
	}
	if len(c.Recovered) > 0 {
		rec.Metrics["clients.recovered.p95@"+k] = Metric{Value: stats.Percentile(c.Recovered, 95).Seconds(), Unit: UnitSeconds, What: "every client answering again",
			Note: fmt.Sprintf("%d kills; median %s", len(c.Recovered), FormatDuration(stats.Median(c.Recovered)))}
	}
	if c.OneRSS > 0 && c.FiveRSS > 0 {
		rec.Metrics["clients.five/one@"+k] = Metric{Value: c.ratio(), Unit: UnitTimes, What: "5 clients' memory against 1's",
			Note: fmt.Sprintf("%s against %s", FormatMB(c.FiveRSS), FormatMB(c.OneRSS))}
	}
	return rec
}
