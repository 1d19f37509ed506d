package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/guide/guide/tools/report"
)

// SDKVersion is the version of the official MCP TypeScript SDK whose client the search
// scenario also measures, pinned so that runs compare (the e2e suite's).
const SDKVersion = "1.32.2"

//go:embed sdksearch.mjs
var sdkSearchScript []byte

// sdkServer names the search row the official TypeScript SDK's client measures.
const sdkServer = "guide (bin/guide-mcp, stdio), official TypeScript SDK client"

// measureSDK searches words reps times each through the official MCP TypeScript SDK's
// stdio client (node), which starts its own bin/guide-mcp --root on data: a second client
// of the owner the scenario's client started.
func measureSDK(ctx context.Context, cfg Config, bin string, c *report.Corpus, data string, words []string, log io.Writer) report.Latency {
	failed := func(why string) report.Latency {
		return report.Latency{Server: sdkServer, Op: "search(word)", Err: why}
	}
	script, note := ensureSDK(cfg.Dir, cfg.logf)
	if note != "" {
		return failed(note)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, strconv.Itoa(cfg.SearchReps), bin, "--root", c.Root, "--data", data)
	cmd.Stdin = strings.NewReader(strings.Join(words, "\n") + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, log
	if err := cmd.Run(); err != nil {
		return failed(fmt.Sprintf("node %s: %v", filepath.Base(script), err))
	}
	var r struct {
		NS         []int64 `json:"ns"`
		Errors     int     `json:"errors"`
		FirstError string  `json:"first_error"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return failed(fmt.Sprintf("reading its output: %v", err))
	}
	ds := make([]time.Duration, len(r.NS))
	for i, n := range r.NS {
		ds[i] = time.Duration(n)
	}
	l := summarize(sdkServer, "search(word)", ds, r.Errors)
	if r.FirstError != "" {
		l.Note = "first error: " + r.FirstError
	}
	return l
}

// ensureSDK installs the official MCP TypeScript SDK under dir/node_modules when missing,
// writes the search script beside it, and returns the script, or a note saying why it
// cannot run.
func ensureSDK(dir string, logf func(string, ...any)) (script, note string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err.Error()
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node is not installed"
	}
	pkg := filepath.Join(abs, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	var installed struct {
		Version string `json:"version"`
	}
	if b, err := os.ReadFile(pkg); err == nil {
		_ = json.Unmarshal(b, &installed)
	}
	if installed.Version != SDKVersion {
		logf("installing @modelcontextprotocol/sdk@%s under %s with npm", SDKVersion, dir)
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", abs, "@modelcontextprotocol/sdk@"+SDKVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Sprintf("npm install @modelcontextprotocol/sdk@%s failed (%v): %s", SDKVersion, err, lastLines(string(out), 2))
		}
	}
	// Beside node_modules, where node resolves the script's imports.
	script = filepath.Join(abs, "sdk-search.mjs")
	if err := os.WriteFile(script, sdkSearchScript, 0o644); err != nil {
		return "", err.Error()
	}
	return script, ""
}
