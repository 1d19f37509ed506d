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
	// arguments from the project: view a random document, get_content a random name of
	// Names, search a random word of Words; any other tool is called with no arguments.
	Mix   map[string]int
	Names []string // categories or collections for get_content
	Words []string // queries for search
	// SampleEvery is how often the server's memory is read from /metrics.
	SampleEvery time.Duration
}

// Sample is the server's memory at one moment.
type Sample struct {
	At       time.Duration `json:"at"`
	RSSBytes float64       `json:"rss_bytes"`
	HeapInUs float64       `json:"heap_inuse_bytes"`
	Calls    int           `json:"calls"`
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
		b.WriteString("  server memory (RSS / heap in use):")
		for _, s := range r.Memory {
			fmt.Fprintf(&b, " %ds %.0f/%.0f MiB;", int(s.At.Seconds()), s.RSSBytes/(1<<20), s.HeapInUs/(1<<20))
		}
		b.WriteString("\n")
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
		defer c.Close()
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
			for runCtx.Err() == nil {
				tool := tools[r.IntN(len(tools))]
				req := mcp.CallToolRequest{}
				req.Params.Name = tool
				req.Params.Arguments = arguments(tool, r, docs, cfg)
				t0 := time.Now()
				res, err := c.CallTool(ctx, req)
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
			}
		})
	}
	var mem []Sample
	metricsURL := strings.TrimSuffix(cfg.URL, "/mcp") + "/metrics"
	tick := time.NewTicker(cfg.SampleEvery)
	sample := func() {
		if rss, heap, err := scrapeMemory(ctx, metricsURL, cfg.Token); err == nil {
			mem = append(mem, Sample{At: time.Since(start), RSSBytes: rss, HeapInUs: heap, Calls: counted.get()})
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
	return summarize(results, cfg.Sessions, elapsed, mem), nil
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

// scrapeMemory reads the process's resident memory and Go heap in use from /metrics.
func scrapeMemory(ctx context.Context, url, token string) (rss, heap float64, err error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		_, _ = io.Copy(io.Discard, res.Body)
		return 0, 0, fmt.Errorf("metrics: %s", res.Status)
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case "process_resident_memory_bytes":
			rss, _ = strconv.ParseFloat(val, 64)
		case "go_memstats_heap_inuse_bytes":
			heap, _ = strconv.ParseFloat(val, 64)
		}
	}
	return rss, heap, sc.Err()
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
