package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/guide/guide/tools/report"
)

// Two more baselines of the cold scenario: zoekt (sourcegraph/zoekt, a trigram code search
// engine) building its index of the corpus and serving it, when its source is on the
// machine — it is not on the Go module proxy, so it is built from a checkout into the work
// directory — and the floor: guide-floor, a plain program of this repository doing the
// least work an index of positions needs.

// zoekt is zoekt's binaries built from a checkout, or why there are none.
type zoekt struct {
	index, web string
	commit     string
	missing    string // why zoekt is not measured ("" when it is)
}

// zoektSource is the checkout of zoekt to build: the flag's, else $ZOEKT_SRC, else
// DIR/zoekt.
func zoektSource(flag, dir string) string {
	if flag != "" {
		return flag
	}
	if s := os.Getenv("ZOEKT_SRC"); s != "" {
		return s
	}
	return filepath.Join(dir, "zoekt")
}

// buildZoekt builds zoekt-index and zoekt-webserver from the checkout src into dir/bin,
// and finds its commit: git's, else commit (the --zoekt-commit flag), else "unknown".
func buildZoekt(ctx context.Context, src, dir, commit string) zoekt {
	if _, err := os.Stat(filepath.Join(src, "cmd", "zoekt-index")); err != nil {
		return zoekt{missing: "not on this machine (no checkout of sourcegraph/zoekt at " + src + "; --zoekt-src or $ZOEKT_SRC)"}
	}
	bin, err := filepath.Abs(filepath.Join(dir, "zoekt-bin"))
	if err != nil {
		return zoekt{missing: err.Error()}
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator), "./cmd/zoekt-index", "./cmd/zoekt-webserver")
	cmd.Dir = src
	// A checkout's go.sum may lag its go.mod; -mod=mod lets the go command settle it.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return zoekt{missing: fmt.Sprintf("building it from %s failed: %v: %s", src, err, strings.TrimSpace(string(out)))}
	}
	if out, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	if commit == "" {
		commit = "unknown"
	}
	return zoekt{index: filepath.Join(bin, "zoekt-index"), web: filepath.Join(bin, "zoekt-webserver"), commit: commit}
}

// peakOf is the largest resident set a finished child had (its getrusage maxrss), in bytes.
func peakOf(cmd *exec.Cmd) int64 {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

// zoektBaseline times zoekt-index building its index of the corpus, spawn to exit (its
// peak resident set and the index's size beside it), then starts zoekt-webserver on that
// index and reads its resident set two seconds after it is ready, as guide's is read two
// seconds after it caught up.
func zoektBaseline(ctx context.Context, z zoekt, c *report.Corpus, dir string) report.IndexRun {
	r := report.IndexRun{Kind: report.RunZoekt, What: "baseline: zoekt-index (sourcegraph/zoekt), spawn to exit", Bytes: c.Bytes}
	if z.commit != "" {
		r.What = "baseline: zoekt-index (sourcegraph/zoekt " + shortCommit(z.commit) + "), spawn to exit"
	}
	if z.missing != "" {
		r.Err = z.missing
		return r
	}
	if err := os.RemoveAll(dir); err != nil {
		r.Err = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	idx := filepath.Join(dir, "index")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, z.index, "-disable_ctags", "-index", idx, c.Root)
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	r.Duration = time.Since(start)
	if err != nil {
		r.Err = fmt.Sprintf("%v: %s", err, lastLine(stderr.String()))
		return r
	}
	r.Docs, r.Peak, r.Disk = len(c.Files), peakOf(cmd), dirSize(idx)

	port, err := freePort()
	if err != nil {
		r.Err = err.Error()
		return r
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	web := exec.CommandContext(ctx, z.web, "-index", idx, "-listen", addr)
	if err := web.Start(); err != nil {
		r.Err = "zoekt-webserver: " + err.Error()
		return r
	}
	defer func() { _ = web.Process.Kill(); _ = web.Wait() }()
	ready := false
	for deadline := time.Now().Add(5 * time.Minute); !ready && time.Now().Before(deadline); {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			ready = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
		if !ready {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !ready {
		r.Err = "zoekt-webserver never said it was ready"
		return r
	}
	time.Sleep(2 * time.Second)
	r.Settled, _, _ = memoryOf(web.Process.Pid)
	r.Note = fmt.Sprintf("peak RSS (VmHWM) %.0f MB; index %.0f MB (%.2f× the text); zoekt-webserver serving it: RSS %.0f MB two seconds after ready",
		float64(r.Peak)/1e6, float64(r.Disk)/1e6, float64(r.Disk)/float64(max(c.Bytes, 1)), float64(r.Settled)/1e6)
	return r
}

// floorBaseline builds guide-floor into dir and times it over the corpus, spawn to exit.
func floorBaseline(ctx context.Context, c *report.Corpus, dir string) report.IndexRun {
	r := report.IndexRun{Kind: report.RunFloor, What: "baseline: the floor (tools/cmd/guide-floor: read, split and fold words, postings by term id per core, write sorted)", Bytes: c.Bytes}
	if err := os.RemoveAll(dir); err != nil {
		r.Err = err.Error()
		return r
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Err = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	bin, err := filepath.Abs(filepath.Join(dir, "guide-floor"))
	if err != nil {
		r.Err = err.Error()
		return r
	}
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/guide/guide/tools/cmd/guide-floor").CombinedOutput(); err != nil {
		r.Err = fmt.Sprintf("build: %v: %s", err, lastLine(string(out)))
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, c.Root, filepath.Join(dir, "postings"))
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	r.Duration = time.Since(start)
	if err != nil {
		r.Err = fmt.Sprintf("%v: %s", err, lastLine(stderr.String()))
		return r
	}
	var got struct {
		Documents int   `json:"documents"`
		Terms     int   `json:"terms"`
		Bytes     int64 `json:"bytes"`
	}
	_ = json.Unmarshal(out, &got)
	r.Docs, r.Peak, r.Disk = got.Documents, peakOf(cmd), got.Bytes
	r.Note = fmt.Sprintf("peak RSS %.0f MB; %d terms, %.0f MB of postings", float64(r.Peak)/1e6, got.Terms, float64(got.Bytes)/1e6)
	return r
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
