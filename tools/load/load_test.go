package load_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/load"
	"github.com/guide/guide/tools/report"
)

func TestParseMix(t *testing.T) {
	m, err := load.ParseMix("view=6, get_content=2,search=0")
	testkit.NoErr(t, err, "parse")
	testkit.Equal(t, m, map[string]int{"view": 6, "get_content": 2, "search": 0}, "mix")
	if _, err := load.ParseMix("view"); err == nil {
		t.Fatal("a mix without a weight was accepted")
	}
}

// TestRunReportsCalls: a short run against a pipeline serving testdata/content makes calls
// of every tool of the mix, without errors.
func TestRunReportsCalls(t *testing.T) {
	p := testkit.NewPipeline(t, nil, testkit.CopyTree(t, "../../testdata/content"), "")
	p.Reconcile()
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(p.MCP, server.WithEndpointPath("/mcp")))
	ts := httptest.NewServer(mux)
	defer ts.Close()
	rep, err := load.Run(testkit.Context(t), load.Config{URL: ts.URL + "/mcp", Sessions: 3, Duration: 500 * time.Millisecond,
		Mix: map[string]int{"view": 2, "get_content": 1}, Names: []string{"guidelines", "dev"}})
	testkit.NoErr(t, err, "run")
	if rep.Calls == 0 || rep.Errors != 0 || rep.ByTool["view"].Calls == 0 || rep.ByTool["get_content"].Calls == 0 {
		t.Fatalf("report: %+v", rep)
	}
}

// TestRecord: a run becomes its area's record with every metric the area's targets read,
// and memory that grew is not flat.
func TestRecord(t *testing.T) {
	rep := load.Report{Sessions: 50, Duration: time.Minute, Calls: 120_000, PerSecond: 2000, P50: 10 * time.Millisecond, P99: 40 * time.Millisecond,
		ByTool: map[string]load.ToolStat{"view": {Calls: 60_000, P99: 30 * time.Millisecond}, "attach": {Calls: 3_000, P99: 90 * time.Millisecond}},
		Memory: []load.Sample{{At: 0, RSSBytes: 40 << 20}, {At: 5 * time.Second, RSSBytes: 50 << 20}, {At: 10 * time.Second, RSSBytes: 70 << 20},
			{At: time.Minute, RSSBytes: 55 << 20}, {At: time.Minute, RSSBytes: 45 << 20}}}
	for _, area := range []string{"load", "sessions"} {
		rec := load.Record(area, rep)
		for _, tg := range report.Targets {
			if tg.Area != area {
				continue
			}
			for _, g := range append(tg.Also, tg.Goal) {
				if _, ok := rec.Metrics[g.Metric]; !ok {
					t.Errorf("%s: no metric %q", area, g.Metric)
				}
			}
		}
	}
	rec := load.Record("sessions", rep)
	testkit.Equal(t, rec.Metrics["sessions.worst-tool.p99"].Note, "attach", "the slowest tool")
	testkit.Equal(t, rec.Metrics["sessions.rss-growth"].Value, 1.4, "the largest RSS during the calls against 5 s in")
}
