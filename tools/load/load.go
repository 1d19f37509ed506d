// Package load drives a guide-mcp HTTP endpoint with many concurrent MCP sessions calling a
// weighted mix of tools, and reports throughput, latency percentiles and the server's
// memory over time (read from its /metrics).
package load

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/tools/stats"
)

// Config says what to run.
type Config struct {
	URL      string // the MCP endpoint, http://host:port/mcp
	Token    string // bearer token, if the server wants one
	Sessions int
	Duration time.Duration
	// Mix weighs each tool: {"view": 6, "get_content": 2}. Known tools get their
	// arguments from the project: view and get_summary a random document, focus a random
	// folder, get_content a random name of Names, search a random word of Words; attach a
	// small document to the session, detach one it attached (or attach, when it has none);
	// any other tool is called with no arguments.
	Mix   map[string]int
	Names []string // categories or collections for get_content
	Words []string // queries for search
	// SampleEvery is how often the server's memory is read from /metrics.
	SampleEvery time.Duration
	// DrainWait bounds the wait for the session documents to go once the sessions ended.
	DrainWait time.Duration
}

// Sample is the server's memory at one moment.
type Sample struct {
	At         time.Duration `json:"at"`
	RSSBytes   float64       `json:"rss_bytes"`
	HeapInUs   float64       `json:"heap_inuse_bytes"`
	Goroutines float64       `json:"goroutines"`
	Calls      int           `json:"calls"`
}

// Report is what a run measured.
type Report struct {
	Sessions   int                 `json:"sessions"`
	Duration   time.Duration       `json:"duration"`
	Calls      int                 `json:"calls"`
	Errors     int                 `json:"errors"`
	ErrorKinds map[string]int      `json:"error_kinds,omitempty"`
	PerSecond  float64             `json:"calls_per_second"`
	P50        time.Duration       `json:"p50"`
	P99        time.Duration       `json:"p99"`
	Max        time.Duration       `json:"max"`
	ByTool     map[string]ToolStat `json:"by_tool"`
	Memory     []Sample            `json:"memory"`
	// After the sessions ended (each client's DELETE): how long the server took to delete
	// every session document, and how many were left when the wait ended (-1: the server
	// does not report them).
	Drain    time.Duration `json:"drain"`
	Orphaned int           `json:"orphaned_session_documents"`
}

// ToolStat is one tool's share of a run.
type ToolStat struct {
	Calls int           `json:"calls"`
	P50   time.Duration `json:"p50"`
	P99   time.Duration `json:"p99"`
}

// String is a few lines for a person.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions for %s: %d calls, %.0f calls/s, p50 %s, p99 %s, max %s, %d errors\n",
		r.Sessions, r.Duration.Round(time.Second), r.Calls, r.PerSecond, r.P50, r.P99, r.Max, r.Errors)
	for _, t := range slices.Sorted(mapsKeys(r.ByTool)) {
		s := r.ByTool[t]
		fmt.Fprintf(&b, "  %-22s %8d calls  p50 %-10s p99 %s\n", t, s.Calls, s.P50, s.P99)
	}
	for k, n := range r.ErrorKinds {
		fmt.Fprintf(&b, "  error %s: %d\n", k, n)
	}
	if len(r.Memory) > 0 {
		b.WriteString("  server memory (RSS / heap in use, goroutines):")
		for _, s := range r.Memory {
			fmt.Fprintf(&b, " %ds %.0f/%.0f MiB %.0f;", int(s.At.Seconds()), s.RSSBytes/(1<<20), s.HeapInUs/(1<<20), s.Goroutines)
		}
		b.WriteString("\n")
	}
	if r.Orphaned >= 0 {
		fmt.Fprintf(&b, "  sessions ended: session documents left %d after %s\n", r.Orphaned, r.Drain.Round(time.Millisecond))
	}
	return b.String()
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// callTimeout bounds one call: past it, the call is an error.
const callTimeout = 2 * time.Minute

type result struct {
	tool string
	d    time.Duration
	err  string
}

// Run connects the sessions, runs the mix for Duration and reports.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Sessions <= 0 {
		cfg.Sessions = 50
	}
	if cfg.SampleEvery == 0 {
		cfg.SampleEvery = 5 * time.Second
	}
	var tools []string
	for t, w := range cfg.Mix {
		for range w {
			tools = append(tools, t)
		}
	}
	if len(tools) == 0 {
		return Report{}, fmt.Errorf("empty tool mix")
	}
	sort.Strings(tools)
	clients := make([]*client.Client, cfg.Sessions)
	for i := range clients {
		c, err := connect(ctx, cfg)
		if err != nil {
			return Report{}, fmt.Errorf("session %d: %w", i, err)
		}
		defer c.Close() // the run closes them; this, when it fails first
		clients[i] = c
	}
	docs, err := documents(ctx, clients[0])
	if err != nil {
		return Report{}, err
	}
	if len(docs) == 0 {
		return Report{}, fmt.Errorf("the project has no documents to view")
	}

	results := make([][]result, cfg.Sessions)
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var calls sync.WaitGroup
	var counted countSink
	start := time.Now()
	for i, c := range clients {
		calls.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 42))
			attached := map[string]bool{}
			for runCtx.Err() == nil {
				tool := tools[r.IntN(len(tools))]
				req := mcp.CallToolRequest{}
				args := arguments(tool, r, docs, cfg)
				switch tool {
				case "detach":
					if len(attached) == 0 {
						tool, args = "attach", arguments("attach", r, docs, cfg)
						break
					}
					args = map[string]any{"filename": slices.Sorted(mapsKeys(attached))[r.IntN(len(attached))]}
				}
				req.Params.Name = tool
				req.Params.Arguments = args
				t0 := time.Now()
				// A call whose answer never comes counts as an error, and the run ends.
				callCtx, cancelCall := context.WithTimeout(ctx, callTimeout)
				res, err := c.CallTool(callCtx, req)
				cancelCall()
				d := time.Since(t0)
				if runCtx.Err() != nil && err != nil {
					break
				}
				e := ""
				switch {
				case err != nil:
					e = "transport: " + firstLine(err.Error())
				case res.IsError:
					e = tool + ": " + errorType(res)
				}
				results[i] = append(results[i], result{tool, d, e})
				counted.add()
				if e == "" && err == nil {
					switch tool {
					case "attach":
						attached[args["filename"].(string)] = true
					case "detach":
						delete(attached, args["filename"].(string))
					}
				}
			}
		})
	}
	var mem []Sample
	metricsURL := strings.TrimSuffix(cfg.URL, "/mcp") + "/metrics"
	tick := time.NewTicker(cfg.SampleEvery)
	sample := func() {
		if m, err := scrape(ctx, metricsURL, cfg.Token); err == nil {
			mem = append(mem, Sample{At: time.Since(start), RSSBytes: m["process_resident_memory_bytes"],
				HeapInUs: m["go_memstats_heap_inuse_bytes"], Goroutines: m["go_goroutines"], Calls: counted.get()})
		}
	}
	sample()
loop:
	for {
		select {
		case <-runCtx.Done():
			break loop
		case <-tick.C:
			sample()
		}
	}
	tick.Stop()
	calls.Wait()
	elapsed := time.Since(start)
	sample()
	rep := summarize(results, cfg.Sessions, elapsed, mem)
	// End every session, as a client does when it closes, and wait for the server to
	// delete their documents.
	var ends sync.WaitGroup
	for _, c := range clients {
		ends.Go(func() { _ = c.Close() })
	}
	ends.Wait()
	rep.Drain, rep.Orphaned = drain(ctx, metricsURL, cfg.Token, cfg.DrainWait)
	sample()
	rep.Memory = mem
	return rep, nil
}

// drain waits, up to wait, until the server reports no session document, and returns how
// long that took and how many are left (-1 when the server does not report them).
func drain(ctx context.Context, url, token string, wait time.Duration) (time.Duration, int) {
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	start := time.Now()
	left := -1
	for time.Since(start) < wait && ctx.Err() == nil {
		m, err := scrape(ctx, url, token)
		n, ok := m["guide_session_documents"]
		if err != nil || !ok {
			return time.Since(start), -1
		}
		if left = int(n); left == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start), left
}

type countSink struct {
	mu sync.Mutex
	n  int
}

func (c *countSink) add() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *countSink) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func summarize(results [][]result, sessions int, elapsed time.Duration, mem []Sample) Report {
	rep := Report{Sessions: sessions, Duration: elapsed, ByTool: map[string]ToolStat{}, ErrorKinds: map[string]int{}, Memory: mem}
	var all []time.Duration
	by := map[string][]time.Duration{}
	for _, rs := range results {
		for _, r := range rs {
			all = append(all, r.d)
			by[r.tool] = append(by[r.tool], r.d)
			if r.err != "" {
				rep.Errors++
				rep.ErrorKinds[r.err]++
			}
		}
	}
	rep.Calls = len(all)
	rep.PerSecond = float64(len(all)) / elapsed.Seconds()
	rep.P50, rep.P99, rep.Max = stats.Percentile(all, 50), stats.Percentile(all, 99), stats.Percentile(all, 100)
	for t, ds := range by {
		rep.ByTool[t] = ToolStat{Calls: len(ds), P50: stats.Percentile(ds, 50), P99: stats.Percentile(ds, 99)}
	}
	return rep
}

func connect(ctx context.Context, cfg Config) (*client.Client, error) {
	var opts []transport.StreamableHTTPCOption
	if cfg.Token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + cfg.Token}))
	}
	c, err := client.NewStreamableHttpClient(cfg.URL, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: "guide-load", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// documents lists the project's documents through tree, folder by folder.
func documents(ctx context.Context, c *client.Client) ([]string, error) {
	type node struct {
		Type     string  `json:"type"`
		Path     string  `json:"path"`
		Children []*node `json:"children"`
	}
	var out []string
	queue := []string{""}
	seen := map[string]bool{}
	for len(queue) > 0 && len(out) < 100_000 {
		f := queue[0]
		queue = queue[1:]
		req := mcp.CallToolRequest{}
		req.Params.Name = "tree"
		req.Params.Arguments = map[string]any{"folder": f, "depth": 5}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("tree %q: %w", f, err)
		}
		var n node
		if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &n); err != nil {
			return nil, fmt.Errorf("tree %q: %w", f, err)
		}
		var walk func(n *node, depth int)
		walk = func(n *node, depth int) {
			if n.Type == "document" {
				out = append(out, n.Path)
				return
			}
			if depth == 5 && len(n.Children) == 0 && n.Path != f && !seen[n.Path] {
				seen[n.Path] = true
				queue = append(queue, n.Path)
			}
			for _, ch := range n.Children {
				walk(ch, depth+1)
			}
		}
		walk(&n, 0)
	}
	return out, nil
}

func arguments(tool string, r *rand.Rand, docs []string, cfg Config) map[string]any {
	switch tool {
	case "view":
		return map[string]any{"path": docs[r.IntN(len(docs))]}
	case "get_content":
		if len(cfg.Names) > 0 {
			return map[string]any{"category_or_collection": cfg.Names[r.IntN(len(cfg.Names))]}
		}
		return map[string]any{"category_or_collection": "all"}
	case "search":
		if len(cfg.Words) > 0 {
			return map[string]any{"query": cfg.Words[r.IntN(len(cfg.Words))]}
		}
		return map[string]any{"query": "the"}
	case "tree":
		return map[string]any{"folder": "", "depth": 2}
	case "get_summary":
		return map[string]any{"path": docs[r.IntN(len(docs))]}
	case "focus":
		d := docs[r.IntN(len(docs))]
		if i := strings.LastIndex(d, "/"); i > 0 {
			return map[string]any{"context": d[:i]}
		}
		return map[string]any{"context": ""}
	case "attach":
		n := r.IntN(5)
		return map[string]any{"filename": fmt.Sprintf("load-%d.md", n),
			"content": fmt.Sprintf("# Load note %d\n\nWritten by guide-load at %d.\n", n, r.Uint64())}
	}
	return map[string]any{}
}

func errorType(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			var f struct {
				Type string `json:"error_type"`
			}
			if json.Unmarshal([]byte(tc.Text), &f) == nil && f.Type != "" {
				return f.Type
			}
			return firstLine(tc.Text)
		}
	}
	return "error"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// scrape reads the gauges and counters of /metrics that have no labels.
func scrape(ctx context.Context, url, token string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		_, _ = io.Copy(io.Discard, res.Body)
		return nil, fmt.Errorf("metrics: %s", res.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// ParseMix reads "view=6,get_content=2" into weights.
func ParseMix(s string) (map[string]int, error) {
	out := map[string]int{}
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, w, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(w)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("mix %q: want tool=weight", part)
		}
		out[name] = n
	}
	return out, nil
}
