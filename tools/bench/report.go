package bench

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine is what the run ran on.
type Machine struct {
	CPUs   int
	CPU    string
	Memory string
	Go     string
	Kernel string
	Date   string
}

// ReadMachine reads the machine's description from /proc and the Go toolchain.
func ReadMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Date: time.Now().UTC().Format("2006-01-02 15:04 MST")}
	if out, err := exec.Command("nproc").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
			m.CPUs = n
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(v)
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		m.Go = strings.TrimSpace(string(out))
	} else {
		m.Go = runtime.Version()
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m.Kernel = strings.TrimSpace(string(out))
	}
	return m
}

// Target is a goal of issue 2 beside the figure measured for it.
type Target struct {
	What     string
	Goal     string
	Measured string
	Met      string // "met", "not met", or "not measured"
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
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	t := []Target{
		{What: "cold index of 10k generated documents, all-in-one", Goal: "≥ 3,000 documents/s"},
		{What: "view p95 on 100k documents", Goal: "≤ 2 ms"},
		{What: "tree (depth 2) p95 on 100k documents", Goal: "≤ 10 ms"},
		{What: "query process restart to first answer on 100k documents", Goal: "≤ 300 ms"},
	}
	for i := range t {
		t[i].Measured, t[i].Met = "—", "not measured"
	}
	if c := find(10_000); c != nil {
		for _, run := range c.Index {
			if strings.HasPrefix(run.What, "guide all-in-one") && run.Err == "" {
				t[0].Measured = fmt.Sprintf("%.0f documents/s (%s)", run.DocsPerSec(), fmtDur(run.Duration))
				t[0].Met = verdict(run.DocsPerSec() >= 3000)
			}
		}
	}
	if c := find(100_000); c != nil {
		for _, l := range c.Latency {
			if !strings.HasPrefix(l.Server, "guide") || l.N == 0 {
				continue
			}
			switch l.Op {
			case "view(document)":
				t[1].Measured, t[1].Met = fmtDur(l.P95), verdict(l.P95 <= 2*time.Millisecond && l.Errors == 0)
			case "tree(folder, depth 2)":
				t[2].Measured, t[2].Met = fmtDur(l.P95), verdict(l.P95 <= 10*time.Millisecond && l.Errors == 0)
			}
		}
		if len(c.Restarts) >= 2 && len(c.Restarts[0].Times) > 0 && len(c.Restarts[1].Times) > 0 {
			k, s := c.Restarts[0], c.Restarts[1]
			worst := max(k.Max(), s.Max())
			t[3].Measured = fmt.Sprintf("median %s after SIGKILL, %s after a clean stop; worst %s",
				fmtDur(k.Median()), fmtDur(s.Median()), fmtDur(worst))
			t[3].Met = verdict(worst <= 300*time.Millisecond)
		}
	}
	return t
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "—"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func fmtMB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

// Markdown renders the run: machine, targets, then one section per corpus.
func (r *Result) Markdown() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Measured by `make bench` on %s.\n\n", m.Date)
	fmt.Fprintf(&b, "| machine | |\n|---|---|\n")
	fmt.Fprintf(&b, "| CPUs (`nproc`) | %d |\n| CPU | %s |\n| memory | %s |\n| Go | %s |\n| kernel | %s |\n",
		m.CPUs, m.CPU, m.Memory, m.Go, m.Kernel)
	fmt.Fprintf(&b, "| run | %s; %d views and %d trees per server; %d restarts each way; seed %d |\n\n",
		fmtDur(r.Duration.Round(time.Second)), r.Config.Views, r.Config.Trees, r.Config.Restarts, r.Config.Seed)
	fmt.Fprintf(&b, "Machine shared with other work during this run: %s (from `/proc/loadavg`, as `uptime` prints it).\n\n", r.Load)

	b.WriteString("### Targets (issue 2)\n\n| target | goal | measured | |\n|---|---|---|---|\n")
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
			len(c.Files), fmtMB(c.Bytes), len(c.Folders), float64(c.Bytes)/1e3/float64(max(1, len(c.Files))))
		if c.Generated {
			b.WriteString("; generated by `tools/corpus`")
			if c.GenTime > 0 {
				fmt.Fprintf(&b, " in %s", fmtDur(c.GenTime))
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
				fmt.Fprintf(&b, "| %s | %d | %s | %.0f | %s | %s |\n", run.What, run.Docs, fmtDur(run.Duration), run.DocsPerSec(), mbs, run.Note)
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
					fmtDur(l.P50), fmtDur(l.P95), fmtDur(l.P99), fmtDur(l.Max), l.Note)
			}
			b.WriteString("\n")
		}

		if len(cr.Restarts) > 0 {
			b.WriteString("**Restart to first answer**\n\n| what | runs | median | max | note |\n|---|---:|---:|---:|---|\n")
			for _, rs := range cr.Restarts {
				note := ""
				if rs.Err != "" {
					note = "failed: " + rs.Err
				}
				fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", rs.What, len(rs.Times), fmtDur(rs.Median()), fmtDur(rs.Max()), note)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "guide-mcp resident memory (VmRSS): %s after the first scan, %s after the calls; peak (VmHWM) %s.\n\n",
			fmtMiB(cr.RSSIndex), fmtMiB(cr.RSSCalls), fmtMiB(cr.PeakRSS))
	}
	return b.String()
}

func fmtMiB(b int64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// Markers delimit the part of BENCHMARKS.md the harness writes; the rest is kept.
const (
	BeginMarker = "<!-- guide-bench: begin (written by make bench; edits here are lost) -->"
	EndMarker   = "<!-- guide-bench: end -->"
)

// Splice puts the issue 2 block into doc between its markers, or appends it.
func Splice(doc, generated string) string { return SpliceBlock(doc, Block{Markdown: generated}) }
