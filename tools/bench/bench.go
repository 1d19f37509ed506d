// Package bench is the benchmark harness behind `make bench`: it generates corpora, runs
// guide on them the way users do (bin/guide-mcp over stdio, driven by mcp-go's client), and
// measures each figure beside a baseline in the same run: a plain walk-read-hash and
// ripgrep for indexing, direct file reads and the reference filesystem MCP server for view
// and tree. It reports only what it measured; package report turns that into Markdown.
// One file per scenario; percorpus.go and scenarios.go say which run on which corpus.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/guide/guide/tools/report"
)

// Config says what to measure. Defaults are the full `make bench` run.
type Config struct {
	Dir string // work directory for corpora, data and logs (default .bench)
	Bin string // the guide-mcp binary (default bin/guide-mcp)
	// Build builds the binaries into Bin's folder from the tree in the working directory
	// before any scenario (buildBinaries): a run otherwise measures whatever an earlier
	// build left there, under the name of the tree's commit.
	Build    bool
	Sizes    []int // generated corpora, in documents
	GoRoot   bool  // also measure $(go env GOROOT)/src
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
	// ZoektSrc is a checkout of sourcegraph/zoekt, built into Dir as a baseline of the
	// cold scenario (default $ZOEKT_SRC, else Dir/zoekt); ZoektCommit names its commit
	// when the checkout is not a git repository.
	ZoektSrc, ZoektCommit string

	// Scenarios to run (see AllScenarios); empty is every one.
	Scenarios []string
	// Command is the command line the records state.
	Command string
	// SearchDocs is the generated corpus of the search, content, web, once and clients scenarios;
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
	WebCalls     int // requests of each kind of web page
	ClientRuns   int // clients: second clients spawned, and owner kills
	ChurnRate    int // writes per second
	ChurnFor     time.Duration
	// RYWDocs is the generated corpus of the ryw scenario (copied first: it writes into
	// it); RYWCalls the calls of each kind it times.
	RYWDocs  int
	RYWCalls int
	// ScaleSizes are the generated corpora of the opt-in scale scenario, in documents.
	ScaleSizes []int
	// PartitionDocs is the generated corpus of the opt-in partitions scenario.
	PartitionDocs int
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
	if c.WebCalls <= 0 {
		c.WebCalls = 200
	}
	if c.ClientRuns <= 0 {
		c.ClientRuns = 10
	}
	if c.ChurnRate <= 0 {
		c.ChurnRate = 1000
	}
	if c.ChurnFor <= 0 {
		c.ChurnFor = time.Minute
	}
	if c.RYWDocs == 0 {
		c.RYWDocs = 100_000
	}
	if c.RYWCalls <= 0 {
		c.RYWCalls = 200
	}
	if c.PartitionDocs == 0 {
		c.PartitionDocs = 100_000
	}
	if len(c.ScaleSizes) == 0 {
		c.ScaleSizes = []int{10_000, 100_000, 1_000_000}
	}
}

func (c *Config) logf(format string, args ...any) {
	fmt.Fprintf(c.Log, "bench: "+format+"\n", args...)
}

// Run measures every corpus the config names.
func Run(ctx context.Context, cfg Config) (*report.Result, error) {
	cfg.defaults()
	res := &report.Result{Settings: report.Settings{Views: cfg.Views, Trees: cfg.Trees, Restarts: cfg.Restarts, Seed: cfg.Seed}, Started: time.Now(), Machine: ReadMachine(),
		Command: cfg.Command, Commit: GitCommit(), Scenarios: cfg.Scenarios}
	if len(res.Scenarios) == 0 {
		res.Scenarios = AllScenarios
	}
	bin, err := filepath.Abs(cfg.Bin)
	if err != nil {
		return nil, err
	}
	if cfg.Build {
		cfg.logf("building the binaries into %s from this tree (%s)", filepath.Dir(bin), res.Commit)
		if err := buildBinaries(ctx, filepath.Dir(bin), "./cmd/...", "./tools/cmd/..."); err != nil {
			return nil, err
		}
	} else {
		res.Notes = append(res.Notes, fmt.Sprintf("binaries measured as they were (%s), not built by this run: the build named above is the tree's, not necessarily theirs", filepath.Dir(cfg.Bin)))
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w (run `make build` first)", cfg.Bin, err)
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	// The baselines installed only for the scenarios that compare with them.
	if cfg.has(ScenarioCold, ScenarioSearch) && !ensureRipgrep(cfg.logf) {
		res.Notes = append(res.Notes, "ripgrep is not installed and `apt-get install -y ripgrep` failed: no rg baseline")
	}
	fsScript := ""
	if cfg.FSServer && cfg.has(ScenarioLatency, ScenarioRestart, ScenarioContent) {
		var note string
		fsScript, note = ensureFSServer(cfg.Dir, cfg.logf)
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
	}

	var zk zoekt
	if cfg.has(ScenarioCold) {
		src := zoektSource(cfg.ZoektSrc, cfg.Dir)
		cfg.logf("building zoekt from %s", src)
		zk = buildZoekt(ctx, src, cfg.Dir, cfg.ZoektCommit)
		if zk.missing != "" {
			cfg.logf("  zoekt: %s", zk.missing)
		}
	}

	var corpora []*report.Corpus
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
	var goroot *report.Corpus
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
	res.Load.Before = LoadAverage()
	for i, c := range corpora {
		cfg.logf("measuring %s: %d documents, %.1f MB, %d folders", c.Name, len(c.Files), float64(c.Bytes)/1e6, len(c.Folders))
		prof := ""
		if c.Name == largest {
			prof = cfg.CPUProfile
		}
		cr, err := measure(ctx, cfg, bin, fsScript, zk, c, fmt.Sprintf("c%d", i), prof)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		res.Corpora = append(res.Corpora, cr)
	}
	res.Load.After = LoadAverage()
	if err := runScenarios(ctx, cfg, res, bin, fsScript, goroot); err != nil {
		return nil, err
	}
	res.Duration = time.Since(res.Started)
	return res, nil
}

// settle writes dirty pages out before a timed step, so that the step does not pay for
// the writes of the one before (on this machine a 100k corpus leaves ~300 MB of them, and
// a cold index that ran into that writeback took six times as long).
func settle() { syscall.Sync() }

// buildBinaries builds the main packages of pkgs into dir (go build -o dir/), from the
// module in the working directory.
func buildBinaries(ctx context.Context, dir string, pkgs ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the binaries to measure: %w\n%s", err, out)
	}
	return nil
}
