package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/guide/guide/tools/report"
	"github.com/guide/guide/tools/stats"
)

// measure runs the scenarios that take every corpus — cold index, latency, restart — on
// one corpus, reusing the server the cold index left running for the other two.
func measure(ctx context.Context, cfg Config, bin, fsScript string, zk zoekt, c *report.Corpus, id, cpuprofile string) (report.CorpusResult, error) {
	cr := report.CorpusResult{Corpus: c}
	data := filepath.Join(cfg.Dir, "data", id)
	logPath := filepath.Join(cfg.Dir, "logs", id+"-guide.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return cr, err
	}
	defer logFile.Close()

	cold := cfg.has(ScenarioCold)
	repeat := cfg.Repeat
	var fts report.IndexRun
	if cold {
		// Baselines first: they also bring the tree into the page cache, so that every
		// figure below is taken with a warm cache.
		cfg.logf("  baselines: walk + read + sha256, ripgrep")
		settle()
		hashTree(c.Root, 1)
		cr.Index = append(cr.Index, hashTree(c.Root, 1), hashTree(c.Root, max(2, runtime.NumCPU())))
		if _, err := exec.LookPath("rg"); err == nil {
			files := ripgrep(c.Root, "--files", "--no-ignore")
			files.Note = "lists files, reads none"
			count := ripgrep(c.Root, "-c", "--no-ignore", ".")
			count.Note = "reads every file; counts its non-empty lines (docs = files with a match)"
			count.Bytes = c.Bytes
			cr.Index = append(cr.Index, files, count)
		}
		cfg.logf("  baseline: SQLite FTS5 (porter, one thread)")
		settle()
		fts = fts5Baseline(ctx, c, filepath.Join(data, "fts5"))
		cfg.logf("    %d documents in %s; %s", fts.Docs, report.FormatDuration(fts.Duration), fts.Note)
		cr.Index = append(cr.Index, fts)
		cfg.logf("  baseline: Bleve alone (one text field, no positions)")
		settle()
		bl := bleveBaseline(ctx, c, filepath.Join(data, "bleve"))
		if fts.Err == "" && fts.Duration > 0 && bl.Err == "" {
			bl.Note += fmt.Sprintf("; %.2f× the time of SQLite FTS5 in this run", bl.Duration.Seconds()/fts.Duration.Seconds())
		}
		cfg.logf("    %d documents in %s; %s", bl.Docs, report.FormatDuration(bl.Duration), bl.Note)
		cr.Index = append(cr.Index, bl)
		cfg.logf("  baseline: zoekt-index, then zoekt-webserver serving its index")
		settle()
		zr := zoektBaseline(ctx, zk, c, filepath.Join(data, "zoekt"))
		cfg.logf("    %d documents in %s; %s%s", zr.Docs, report.FormatDuration(zr.Duration), zr.Note, zr.Err)
		cr.Index = append(cr.Index, zr)
		cfg.logf("  baseline: the floor (guide-floor)")
		settle()
		fl := floorBaseline(ctx, c, filepath.Join(data, "floor"))
		cfg.logf("    %d documents in %s; %s%s", fl.Docs, report.FormatDuration(fl.Duration), fl.Note, fl.Err)
		cr.Index = append(cr.Index, fl)
	} else {
		repeat = 1 // only to have an indexed server for the latency and restart steps
	}
	if len(c.Files) > 10_000 {
		// Since the catalog applies each batch after the search index, a cold index of a
		// 100k corpus takes minutes: one run keeps make bench near 25 minutes.
		repeat = 1
	}

	cfg.logf("  cold index, all-in-one (bin/guide-mcp over stdio), %d run(s)", repeat)
	var runs []report.IndexRun
	var s *server
	for i := range repeat {
		if s != nil {
			s.stop()
		}
		settle()
		run, srv, err := coldBinary(ctx, bin, c, filepath.Join(data, "guide"), logFile)
		if err != nil {
			return cr, fmt.Errorf("cold index: %w (log: %s)", err, logPath)
		}
		cfg.logf("    run %d: %d documents in %s", i+1, run.Docs, report.FormatDuration(run.Duration))
		runs, s = append(runs, run), srv
	}
	if cold {
		cr.Index = append(cr.Index, medianRun(runs))
		cr.ScanLog = reconciledLine(logPath)
		all := caughtUp(ctx, s, c, filepath.Join(data, "guide"))
		if fts.Err == "" && fts.Duration > 0 {
			all.Note += fmt.Sprintf("; %.2f× the time of SQLite FTS5 in this run", all.Duration.Seconds()/fts.Duration.Seconds())
		}
		cfg.logf("    every projection caught up in %s; %s", report.FormatDuration(all.Duration), all.Note)
		cr.Index = append(cr.Index, all)
	}
	cr.RSSIndex, _, _ = s.memory()
	// The cold time stops when the catalog holds the scan (view and tree answer from it);
	// the search index goes on in the background. Latency and restart are measured on a
	// settled process, as a user meets it after the first indexing: wait for the index.
	if cfg.has(ScenarioLatency) || cfg.has(ScenarioRestart) {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
		st, _, err := s.waitSearchable(wctx, 100*time.Millisecond)
		cancel()
		if err != nil {
			return cr, fmt.Errorf("waiting for the search index: %w (log: %s)", err, logPath)
		}
		cfg.logf("  search index caught up (applied %d)", indexSeq(st))
	}

	w := newWorkload(c, cfg.Views, cfg.Trees, cfg.Seed)
	if cfg.has(ScenarioLatency) {
		settle()
		cfg.logf("  latency: %d views, %d trees through the MCP client", len(w.views), len(w.trees))
		cr.Latency = append(cr.Latency, measureGuide(ctx, s, w)...)
		cr.RSSCalls, cr.PeakRSS, _ = s.memory()
		cr.Latency = append(cr.Latency, measureOS(c, w)...)
	}

	if cfg.has(ScenarioRestart) {
		cfg.logf("  restart to first answer, %d times after SIGKILL and %d after a clean stop", cfg.Restarts, cfg.Restarts)
		settle()
		killed, stopped := restarts(ctx, bin, c, filepath.Join(data, "guide"), s, cfg.Restarts, logFile)
		cr.Restarts = append(cr.Restarts, killed, stopped)
	} else {
		s.stop()
	}

	if fsScript != "" && cfg.has(ScenarioLatency, ScenarioRestart) {
		cfg.logf("  the reference filesystem MCP server on the same calls")
		fsLog, err := os.Create(filepath.Join(cfg.Dir, "logs", id+"-fs.log"))
		if err != nil {
			return cr, err
		}
		settle()
		lat, rs := measureFSServer(ctx, fsScript, c, w, fsLog)
		fsLog.Close()
		if cfg.has(ScenarioLatency) {
			cr.Latency = append(cr.Latency, lat...)
		}
		if cfg.has(ScenarioRestart) {
			cr.Restarts = append(cr.Restarts, rs)
		}
	}

	if cold && (cfg.InProcess || cpuprofile != "") {
		cfg.logf("  cold index with the pieces in-process%s", map[bool]string{true: ", CPU profile to " + cpuprofile}[cpuprofile != ""])
		settle()
		run, err := coldInProcess(ctx, c, filepath.Join(data, "inproc"), cpuprofile)
		if err != nil {
			run.Err = err.Error()
		}
		cr.Index = append(cr.Index, run)
	}
	_ = os.RemoveAll(data) // a 100k corpus leaves a gigabyte of stream and catalog
	return cr, nil
}

// medianRun returns the run of median duration, noting the spread.
func medianRun(runs []report.IndexRun) report.IndexRun {
	m := stats.PercentileFunc(runs, 50, func(a, b report.IndexRun) int { return cmp.Compare(a.Duration, b.Duration) })
	if len(runs) > 1 {
		ds := make([]string, len(runs))
		for i, r := range runs {
			ds[i] = report.FormatDuration(r.Duration)
		}
		m.Note = fmt.Sprintf("median of %d runs: %s", len(runs), strings.Join(ds, ", "))
	}
	return m
}

// reconciledLine finds what guide logged of its first reconcile.
func reconciledLine(logPath string) string {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	last := ""
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, `summary="`); i >= 0 && strings.Contains(line, "msg=reconciled") {
			last = strings.TrimSuffix(line[i+len(`summary="`):], `"`)
		}
	}
	return last
}
