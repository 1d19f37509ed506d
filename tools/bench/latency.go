package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/guide/guide/tools/report"
	"github.com/guide/guide/tools/stats"
)

func summarize(server, op string, ds []time.Duration, errs int) report.Latency {
	s := stats.Summarize(ds)
	return report.Latency{Server: server, Op: op, N: s.N, Errors: errs, P50: s.P50, P95: s.P95, P99: s.P99, Max: s.Max}
}

// workload is the sequence of calls every server answers: the same documents and folders,
// in the same order.
type workload struct {
	views []string // document paths
	trees []string // folder paths; "" is the root
}

func newWorkload(c *report.Corpus, views, trees int, seed uint64) workload {
	rng := rand.New(rand.NewPCG(seed, 0xbe7c4))
	var w workload
	for range views {
		w.views = append(w.views, c.Files[rng.IntN(len(c.Files))])
	}
	for i := range trees {
		if i%10 == 0 {
			w.trees = append(w.trees, "")
			continue
		}
		w.trees = append(w.trees, c.Folders[rng.IntN(len(c.Folders))])
	}
	return w
}

// measureGuide times view and tree(depth 2) through the MCP client.
func measureGuide(ctx context.Context, s *server, w workload) []report.Latency {
	const name = "guide (bin/guide-mcp, stdio)"
	var ds []time.Duration
	errs := 0
	var firstErr error
	for _, p := range w.views {
		t := time.Now()
		_, err := s.call(ctx, "view", map[string]any{"path": p})
		ds = append(ds, time.Since(t))
		if err != nil {
			errs++
			firstErr = cmpErr(firstErr, err)
		}
	}
	v := summarize(name, "view(document)", ds, errs)
	v.Note = errNote(firstErr)
	ds, errs, firstErr = nil, 0, nil
	for _, f := range w.trees {
		t := time.Now()
		_, err := s.call(ctx, "tree", map[string]any{"folder": f, "depth": 2})
		ds = append(ds, time.Since(t))
		if err != nil {
			errs++
			firstErr = cmpErr(firstErr, err)
		}
	}
	tr := summarize(name, "tree(folder, depth 2)", ds, errs)
	tr.Note = errNote(firstErr)
	return []report.Latency{v, tr}
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func errNote(err error) string {
	if err == nil {
		return ""
	}
	return "first error: " + err.Error()
}

// measureOS times the same reads straight from the file system, in this process: the
// floor under any server's answer (no protocol, no JSON, no process boundary).
func measureOS(c *report.Corpus, w workload) []report.Latency {
	const name = "baseline: os.ReadFile / os.ReadDir, in-process"
	var ds []time.Duration
	errs := 0
	for _, p := range w.views {
		t := time.Now()
		_, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(p)))
		ds = append(ds, time.Since(t))
		if err != nil {
			errs++
		}
	}
	v := summarize(name, "view(document)", ds, errs)
	ds, errs = nil, 0
	for _, f := range w.trees {
		t := time.Now()
		dir := filepath.Join(c.Root, filepath.FromSlash(f))
		ents, err := os.ReadDir(dir)
		for _, e := range ents {
			if e.IsDir() {
				if _, err := os.ReadDir(filepath.Join(dir, e.Name())); err != nil {
					errs++
				}
			}
		}
		ds = append(ds, time.Since(t))
		if err != nil {
			errs++
		}
	}
	tr := summarize(name, "tree(folder, depth 2)", ds, errs)
	tr.Note = "os.ReadDir of the folder and of each subfolder; names only, no word counts"
	return []report.Latency{v, tr}
}

// fsServerName names the reference filesystem MCP server in the tables.
const fsServerName = "baseline: @modelcontextprotocol/server-filesystem (node, stdio)"

// measureFSServer times the reference filesystem MCP server on the same calls, over the
// same stdio client: read_text_file for view; for tree(depth 2), which it has no single
// tool for (directory_tree has no depth limit), list_directory on the folder and on each
// subfolder, as an agent would call it.
func measureFSServer(ctx context.Context, script string, c *report.Corpus, w workload, log io.Writer) ([]report.Latency, report.Restart) {
	rs := report.Restart{Kind: report.RestartBaseline, What: fsServerName + ": spawn to first list_directory answer"}
	start := time.Now()
	s, err := spawn(ctx, log, "node", script, c.Root)
	if err == nil {
		_, err = s.call(ctx, "list_directory", map[string]any{"path": c.Root})
	}
	if err != nil {
		rs.Err = err.Error()
		if s != nil {
			s.kill()
		}
		return []report.Latency{{Server: fsServerName, Op: "all", Err: err.Error()}}, rs
	}
	rs.Times = append(rs.Times, time.Since(start))
	defer s.stop()
	var ds []time.Duration
	errs := 0
	var firstErr error
	for _, p := range w.views {
		t := time.Now()
		_, err := s.call(ctx, "read_text_file", map[string]any{"path": filepath.Join(c.Root, filepath.FromSlash(p))})
		ds = append(ds, time.Since(t))
		if err != nil {
			errs++
			firstErr = cmpErr(firstErr, err)
		}
	}
	v := summarize(fsServerName, "view(document)", ds, errs)
	v.Note = "read_text_file" + report.NoteSuffix(errNote(firstErr))
	ds, errs, firstErr = nil, 0, nil
	calls := 0
	for _, f := range w.trees {
		t := time.Now()
		dir := filepath.Join(c.Root, filepath.FromSlash(f))
		out, err := s.call(ctx, "list_directory", map[string]any{"path": dir})
		calls++
		if err == nil {
			for _, line := range strings.Split(out, "\n") {
				if name, ok := strings.CutPrefix(line, "[DIR] "); ok {
					calls++
					if _, err2 := s.call(ctx, "list_directory", map[string]any{"path": path.Join(dir, name)}); err2 != nil {
						err = err2
					}
				}
			}
		}
		ds = append(ds, time.Since(t))
		if err != nil {
			errs++
			firstErr = cmpErr(firstErr, err)
		}
	}
	tr := summarize(fsServerName, "tree(folder, depth 2)", ds, errs)
	tr.Note = fmt.Sprintf("list_directory on the folder and each subfolder, %.1f calls per tree", float64(calls)/float64(max(1, len(w.trees)))) +
		report.NoteSuffix(errNote(firstErr))
	return []report.Latency{v, tr}, rs
}
