package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guide/guide/tools/stats"
)

// Corpus is a tree the harness measures.
type Corpus struct {
	Name      string
	Root      string // absolute
	Generated bool
	Files     []string // documents, relative slash paths, sorted
	Folders   []string // folders holding a document at any depth; "" is the root
	Bytes     int64
	GenTime   time.Duration // when generated in this run
}

// CorpusResult is what was measured on one corpus.
type CorpusResult struct {
	Corpus   *Corpus
	Index    []IndexRun
	Latency  []Latency
	Restarts []Restart
	RSSIndex int64 // guide's resident set after the first scan
	RSSCalls int64 // ...and after the view and tree calls
	PeakRSS  int64
	ScanLog  string // what guide logged of its last first reconcile
}

// IndexRun is one way of going through a whole tree, timed.
type IndexRun struct {
	What     string
	Docs     int
	Bytes    int64
	Duration time.Duration
	Note     string
	Err      string
}

// DocsPerSec is the documents handled per second.
func (r IndexRun) DocsPerSec() float64 { return float64(r.Docs) / r.Duration.Seconds() }

// MBPerSec is the megabytes (10^6) read per second.
func (r IndexRun) MBPerSec() float64 { return float64(r.Bytes) / 1e6 / r.Duration.Seconds() }

// Restart is the time from spawning a server until its first answer.
type Restart struct {
	What  string
	Times []time.Duration
	Err   string
	Note  string // what else was measured on the way, such as memory
}

// Median of the times.
func (r Restart) Median() time.Duration { return stats.Median(r.Times) }

// Max of the times.
func (r Restart) Max() time.Duration {
	if len(r.Times) == 0 {
		return 0
	}
	return slices.Max(r.Times)
}

// Targets compares the run with the targets.
func (r *Result) Targets() []Target {
	find := func(docs int) *CorpusResult {
		for i := range r.Corpora {
			c := &r.Corpora[i]
			if c.Corpus.Generated && len(c.Corpus.Files) == docs {
				return c
			}
		}
		return nil
	}
	t := []Target{
		{What: "cold index of 10k generated documents, all-in-one", Goal: "≥ 3,000 documents/s"},
		{What: "cold index of 10k, spawn until every projection caught up, against SQLite FTS5 in the same run", Goal: "≤ 0.5× FTS5's time"},
		{What: "view p95 on 100k documents", Goal: "≤ 2 ms"},
		{What: "tree (depth 2) p95 on 100k documents", Goal: "≤ 10 ms"},
		{What: "query process restart to first answer on 100k documents", Goal: "≤ 300 ms"},
	}
	for i := range t {
		t[i].Measured, t[i].Met = "—", "not measured"
	}
	if c := find(10_000); c != nil {
		for _, run := range c.Index {
			if strings.HasPrefix(run.What, "guide all-in-one") && run.Err == "" && t[0].Met == "not measured" {
				t[0].Measured = fmt.Sprintf("%.0f documents/s (%s)", run.DocsPerSec(), FormatDuration(run.Duration))
				t[0].Met = verdict(run.DocsPerSec() >= 3000)
			}
		}
		var fts, all time.Duration
		for _, run := range c.Index {
			switch {
			case run.Err != "":
			case strings.HasPrefix(run.What, "baseline: SQLite FTS5"):
				fts = run.Duration
			case strings.HasPrefix(run.What, "guide all-in-one: spawn until every projection"):
				all = run.Duration
			}
		}
		if fts > 0 && all > 0 {
			r := all.Seconds() / fts.Seconds()
			t[1].Measured = fmt.Sprintf("%.2f× (%s against %s)", r, FormatDuration(all), FormatDuration(fts))
			t[1].Met = verdict(r <= 0.5)
		}
	}
	if c := find(100_000); c != nil {
		for _, l := range c.Latency {
			if !strings.HasPrefix(l.Server, "guide") || l.N == 0 {
				continue
			}
			switch l.Op {
			case "view(document)":
				t[2].Measured, t[2].Met = FormatDuration(l.P95), verdict(l.P95 <= 2*time.Millisecond && l.Errors == 0)
			case "tree(folder, depth 2)":
				t[3].Measured, t[3].Met = FormatDuration(l.P95), verdict(l.P95 <= 10*time.Millisecond && l.Errors == 0)
			}
		}
		if len(c.Restarts) >= 2 && len(c.Restarts[0].Times) > 0 && len(c.Restarts[1].Times) > 0 {
			k, s := c.Restarts[0], c.Restarts[1]
			worst := max(k.Max(), s.Max())
			t[4].Measured = fmt.Sprintf("median %s after SIGKILL, %s after a clean stop; worst %s",
				FormatDuration(k.Median()), FormatDuration(s.Median()), FormatDuration(worst))
			t[4].Met = verdict(worst <= 300*time.Millisecond)
		}
	}
	return t
}

// Markdown renders the run: machine, targets, then one section per corpus.
func (r *Result) Markdown() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Measured by `make bench` on %s.\n\n", m.Date)
	fmt.Fprintf(&b, "| machine | |\n|---|---|\n")
	fmt.Fprintf(&b, "| CPUs (`nproc`) | %d |\n| CPU | %s |\n| memory | %s |\n| Go | %s |\n| kernel | %s |\n",
		m.CPUs, m.CPU, m.Memory, m.Go, m.Kernel)
	fmt.Fprintf(&b, "| run | %s; %d views and %d trees per server; %d restarts each way; seed %d |\n\n",
		FormatDuration(r.Duration.Round(time.Second)), r.Settings.Views, r.Settings.Trees, r.Settings.Restarts, r.Settings.Seed)
	fmt.Fprintf(&b, "Machine shared with other work during this run: %s (from `/proc/loadavg`, as `uptime` prints it).\n\n", r.Load)

	b.WriteString("### Targets (cold index, latency, restart)\n\n| target | goal | measured | |\n|---|---|---|---|\n")
	for _, t := range r.Targets() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.What, t.Goal, t.Measured, t.Met)
	}
	b.WriteString("\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- Note: %s\n", n)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}

	for _, cr := range r.Corpora {
		c := cr.Corpus
		fmt.Fprintf(&b, "### %s\n\n", c.Name)
		fmt.Fprintf(&b, "%d files, %s, %d folders, mean %.1f kB per file",
			len(c.Files), FormatMB(c.Bytes), len(c.Folders), float64(c.Bytes)/1e3/float64(max(1, len(c.Files))))
		if c.Generated {
			b.WriteString("; generated by `tools/corpus`")
			if c.GenTime > 0 {
				fmt.Fprintf(&b, " in %s", FormatDuration(c.GenTime))
			}
		}
		b.WriteString(".\n\n")

		if len(cr.Index) > 0 {
			b.WriteString("**Cold index** (warm page cache)\n\n| what | documents | time | documents/s | MB/s | note |\n|---|---:|---:|---:|---:|---|\n")
			for _, run := range cr.Index {
				if run.Err != "" {
					fmt.Fprintf(&b, "| %s | | | | | failed: %s |\n", run.What, run.Err)
					continue
				}
				mbs := "—"
				if run.Bytes > 0 {
					mbs = fmt.Sprintf("%.1f", run.MBPerSec())
				}
				fmt.Fprintf(&b, "| %s | %d | %s | %.0f | %s | %s |\n", run.What, run.Docs, FormatDuration(run.Duration), run.DocsPerSec(), mbs, run.Note)
			}
			if cr.ScanLog != "" {
				fmt.Fprintf(&b, "\nguide logged its first reconcile as: `%s`.\n", cr.ScanLog)
			}
			b.WriteString("\n")
		}

		if len(cr.Latency) > 0 {
			b.WriteString("**Latency** (same calls, same order, for every server)\n\n| server | call | n | errors | p50 | p95 | p99 | max | note |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
			for _, l := range cr.Latency {
				if l.Err != "" {
					fmt.Fprintf(&b, "| %s | %s | | | | | | | not measured: %s |\n", l.Server, l.Op, l.Err)
					continue
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", l.Server, l.Op, l.N, l.Errors,
					FormatDuration(l.P50), FormatDuration(l.P95), FormatDuration(l.P99), FormatDuration(l.Max), l.Note)
			}
			b.WriteString("\n")
		}

		if len(cr.Restarts) > 0 {
			b.WriteString("**Restart to first answer**\n\n| what | runs | median | max | note |\n|---|---:|---:|---:|---|\n")
			for _, rs := range cr.Restarts {
				note := rs.Note
				if rs.Err != "" {
					note = "failed: " + rs.Err
				}
				fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", rs.What, len(rs.Times), FormatDuration(rs.Median()), FormatDuration(rs.Max()), note)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "guide-mcp resident memory (VmRSS): %s after the first scan, %s after the calls; peak (VmHWM) %s.\n\n",
			fmtMiB(cr.RSSIndex), fmtMiB(cr.RSSCalls), fmtMiB(cr.PeakRSS))
	}
	return b.String()
}
