// Package bench is the benchmark harness behind `make bench`: it generates corpora, runs
// guide on them the way users do (bin/guide-mcp over stdio, driven by mcp-go's client), and
// measures each figure beside a baseline in the same run: a plain walk-read-hash and
// ripgrep for indexing, direct file reads and the reference filesystem MCP server for view
// and tree. It reports only what it measured.
package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/guide/guide/tools/stats"
)

// Config says what to measure. Defaults are the full `make bench` run.
type Config struct {
	Dir      string // work directory for corpora, data and logs (default .bench)
	Bin      string // the guide-mcp binary (default bin/guide-mcp)
	Sizes    []int  // generated corpora, in documents
	GoRoot   bool   // also measure $(go env GOROOT)/src
	Seed     uint64
	Views    int // view calls per server
	Trees    int // tree calls per server
	Restarts int // restarts each way (after SIGKILL, after a clean stop)
	Repeat   int // cold index runs of guide per corpus; the median is reported
	FSServer bool
	// InProcess also runs the cold index with the pieces in this process; CPUProfile,
	// when set, profiles that run on the largest generated corpus.
	InProcess  bool
	CPUProfile string
	Log        io.Writer // progress

	// Scenarios to run (see AllScenarios); empty is every one.
	Scenarios []string
	// SearchDocs is the generated corpus of the search, content and once scenarios;
	// search also runs on GOROOT when GoRoot is set.
	SearchDocs   int
	SearchReps   int // searches of each word
	ContentCalls int // get_content calls, and as many on the reference server
	// FreshDocs is the generated corpus of the fresh and churn scenarios (copied first,
	// since they write into it).
	FreshDocs    int
	FreshSamples int
	Rescans      int // indexer --once baselines of the fresh scenario
	OnceRuns     int
	ChurnRate    int // writes per second
	ChurnFor     time.Duration
}

// Result is everything one run measured.
type Result struct {
	Machine  Machine
	Config   Config
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
	// SplitErr says why the split-mode scenarios did not run.
	SplitErr string
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

func (c *Config) defaults() {
	if c.Dir == "" {
		c.Dir = ".bench"
	}
	if c.Bin == "" {
		c.Bin = filepath.Join("bin", "guide-mcp")
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Repeat <= 0 {
		c.Repeat = 1
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.SearchDocs == 0 {
		c.SearchDocs = 100_000
	}
	if c.SearchReps <= 0 {
		c.SearchReps = 10
	}
	if c.ContentCalls <= 0 {
		c.ContentCalls = 200
	}
	if c.FreshDocs == 0 {
		c.FreshDocs = 10_000
	}
	if c.FreshSamples <= 0 {
		c.FreshSamples = 100
	}
	if c.Rescans <= 0 {
		c.Rescans = 3
	}
	if c.OnceRuns <= 0 {
		c.OnceRuns = 3
	}
	if c.ChurnRate <= 0 {
		c.ChurnRate = 1000
	}
	if c.ChurnFor <= 0 {
		c.ChurnFor = time.Minute
	}
}

func (c *Config) logf(format string, args ...any) {
	fmt.Fprintf(c.Log, "bench: "+format+"\n", args...)
}

// Run measures every corpus the config names.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.defaults()
	res := &Result{Config: cfg, Started: time.Now(), Machine: ReadMachine()}
	bin, err := filepath.Abs(cfg.Bin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w (run `make build` first)", cfg.Bin, err)
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	if !ensureRipgrep(cfg.logf) {
		res.Notes = append(res.Notes, "ripgrep is not installed and `apt-get install -y ripgrep` failed: no rg baseline")
	}
	fsScript := ""
	if cfg.FSServer {
		var note string
		fsScript, note = ensureFSServer(cfg.Dir, cfg.logf)
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
	}

	var corpora []*Corpus
	sizes := cfg.Sizes
	if !cfg.has(ScenarioCold, ScenarioLatency, ScenarioRestart) {
		sizes = nil
	}
	for _, n := range sizes {
		c, err := generated(cfg.Dir, n, cfg.Seed, cfg.logf)
		if err != nil {
			return nil, fmt.Errorf("corpus of %d: %w", n, err)
		}
		corpora = append(corpora, c)
	}
	var goroot *Corpus
	if cfg.GoRoot && cfg.has(ScenarioCold, ScenarioLatency, ScenarioRestart, ScenarioSearch) {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			res.Notes = append(res.Notes, "go env GOROOT failed: no Go source corpus: "+err.Error())
		} else {
			c, err := realTree("Go toolchain source ($(go env GOROOT)/src)", filepath.Join(strings.TrimSpace(string(out)), "src"))
			if err != nil {
				return nil, err
			}
			goroot = c
			if cfg.has(ScenarioCold, ScenarioLatency, ScenarioRestart) {
				corpora = append(corpora, c)
			}
		}
	}
	largest := ""
	if len(sizes) > 0 {
		largest = corpora[len(sizes)-1].Name
	}
	res.Load.Before = loadAvg()
	for i, c := range corpora {
		cfg.logf("measuring %s: %d documents, %.1f MB, %d folders", c.Name, len(c.Files), float64(c.Bytes)/1e6, len(c.Folders))
		prof := ""
		if c.Name == largest {
			prof = cfg.CPUProfile
		}
		cr, err := measure(ctx, cfg, bin, fsScript, c, fmt.Sprintf("c%d", i), prof)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		res.Corpora = append(res.Corpora, cr)
	}
	res.Load.After = loadAvg()
	if err := runScenarios(ctx, cfg, res, bin, fsScript, goroot); err != nil {
		return nil, err
	}
	res.Duration = time.Since(res.Started)
	return res, nil
}

func measure(ctx context.Context, cfg Config, bin, fsScript string, c *Corpus, id, cpuprofile string) (CorpusResult, error) {
	cr := CorpusResult{Corpus: c}
	data := filepath.Join(cfg.Dir, "data", id)
	logPath := filepath.Join(cfg.Dir, "logs", id+"-guide.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return cr, err
	}
	defer logFile.Close()

	cold := cfg.has(ScenarioCold)
	repeat := cfg.Repeat
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
	} else {
		repeat = 1 // only to have an indexed server for the latency and restart steps
	}
	if len(c.Files) > 10_000 {
		// Since the catalog applies each batch after the search index, a cold index of a
		// 100k corpus takes minutes: one run keeps make bench near 25 minutes.
		repeat = 1
	}

	cfg.logf("  cold index, all-in-one (bin/guide-mcp over stdio), %d run(s)", repeat)
	var runs []IndexRun
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
		cfg.logf("    run %d: %d documents in %s", i+1, run.Docs, fmtDur(run.Duration))
		runs, s = append(runs, run), srv
	}
	if cold {
		cr.Index = append(cr.Index, medianRun(runs))
		cr.ScanLog = reconciledLine(logPath)
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

// settle writes dirty pages out before a timed step, so that the step does not pay for
// the writes of the one before (on this machine a 100k corpus leaves ~300 MB of them, and
// a cold index that ran into that writeback took six times as long).
func settle() { syscall.Sync() }

// medianRun returns the run of median duration, noting the spread.
func medianRun(runs []IndexRun) IndexRun {
	m := stats.PercentileFunc(runs, 50, func(a, b IndexRun) int { return cmp.Compare(a.Duration, b.Duration) })
	if len(runs) > 1 {
		ds := make([]string, len(runs))
		for i, r := range runs {
			ds[i] = fmtDur(r.Duration)
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

// ensureRipgrep installs ripgrep from Debian's packages when it is missing.
func ensureRipgrep(logf func(string, ...any)) bool {
	if _, err := exec.LookPath("rg"); err == nil {
		return true
	}
	logf("ripgrep missing; apt-get install -y ripgrep")
	cmd := exec.Command("apt-get", "install", "-y", "ripgrep")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		logf("apt-get failed: %v: %s", err, lastLines(string(out), 3))
		return false
	}
	_, err := exec.LookPath("rg")
	return err == nil
}

// FSServerVersion is the version of the reference filesystem MCP server the harness
// installs, pinned so that runs compare.
const FSServerVersion = "2026.8.31"

// ensureFSServer installs the reference filesystem MCP server under dir/node_modules
// when missing, and returns its entry script, or a note saying why it cannot run.
func ensureFSServer(dir string, logf func(string, ...any)) (script, note string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err.Error()
	}
	script = filepath.Join(abs, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node is not installed: the reference filesystem MCP server was not measured"
	}
	if _, err := os.Stat(script); err == nil {
		return script, ""
	}
	logf("installing @modelcontextprotocol/server-filesystem@%s under %s with npm", FSServerVersion, dir)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", abs,
		"@modelcontextprotocol/server-filesystem@"+FSServerVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("npm install @modelcontextprotocol/server-filesystem@%s failed (%v): the reference filesystem MCP server was not measured; %s",
			FSServerVersion, err, lastLines(string(out), 2))
	}
	if _, err := os.Stat(script); err != nil {
		return "", "the reference filesystem MCP server installed without " + script + ": not measured"
	}
	return script, ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
