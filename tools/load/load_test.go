package load_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/load"
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
