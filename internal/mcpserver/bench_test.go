package mcpserver_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// benchCatalog folds a generated project straight into a catalog: 100 top-level folders
// (categories of the default configuration) × 10 subfolders × 100 documents of ~600 bytes.
func benchCatalog(b *testing.B, tops, subs, docs int) *projection.Catalog {
	b.Helper()
	c := &projection.Catalog{Dir: b.TempDir(), Logger: testkit.Logger()}
	testkit.NoErr(b, c.Open(), "open catalog")
	b.Cleanup(func() { _ = c.Close() })
	testkit.NoErr(b, c.Reset(projection.State{StreamID: "bench", Project: "bench"}), "reset")
	seq := uint64(0)
	mt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	body := strings.Repeat("Some words of a generated document. ", 16)
	var batch events.Batch
	flush := func() {
		testkit.NoErr(b, c.Apply(batch), "apply")
		batch.Events = batch.Events[:0]
	}
	for i := range tops {
		for j := range subs {
			for k := range docs {
				content := []byte(fmt.Sprintf("# Document %d/%d/%d\n\n%s\n", i, j, k, body))
				seq++
				batch.Events = append(batch.Events, events.Event{Op: events.OpUpsert, Project: "bench",
					Path: fmt.Sprintf("cat-%03d/sub-%02d/doc-%04d.md", i, j, k),
					Size: int64(len(content)), Mtime: mt, Hash: events.HashContent(content),
					Status: events.StatusOK, Content: content, Seq: seq})
				if len(batch.Events) == 1000 {
					flush()
				}
			}
		}
	}
	seq++
	batch.Events = append(batch.Events, events.Event{Op: events.OpScanEnd, Project: "bench", Scan: &events.Scan{ID: "bench"}, Seq: seq})
	flush()
	return c
}

// benchClient serves a 100k-document catalog (100 folders × 10 subfolders × 100) to an
// in-process MCP client, with the set-up's garbage collected.
func benchClient(b *testing.B) *client.Client {
	b.Helper()
	cat := benchCatalog(b, 100, 10, 100)
	return inProcessClient(b, &mcpserver.Server{Project: "bench", Catalog: cat, Logger: testkit.Logger()})
}

// inProcessClient serves srv to an in-process MCP client, with the set-up's garbage
// collected.
func inProcessClient(b *testing.B, srv *mcpserver.Server) *client.Client {
	b.Helper()
	c, err := client.NewInProcessClient(srv.New())
	testkit.NoErr(b, err, "client")
	ctx := testkit.Context(b)
	testkit.NoErr(b, c.Start(ctx), "start")
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, err = c.Initialize(ctx, init)
	testkit.NoErr(b, err, "initialize")
	runtime.GC() // leave the set-up's garbage out of the figures
	return c
}

// BenchmarkGetContent measures get_content end to end through an in-process MCP client
// over a 100k-document catalog, each call matching 10 documents; it reports p50 and p95.
//
//	go test ./internal/mcpserver -run '^$' -bench GetContent -benchtime 2000x
func BenchmarkGetContent(b *testing.B) {
	c := benchClient(b)

	for _, bc := range []struct{ name, category, pattern string }{
		{"Folder10", "cat-042", "sub-07/doc-000?.md"},     // one folder, a name pattern
		{"Recursive10", "cat-042", "**/doc-0042.md"},      // ** over a 1,000-document category
		{"Extensionless10", "cat-042", "sub-0?/doc-0042"}, // one segment pattern per level, no extension
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := map[string]any{"category_or_collection": bc.category, "pattern": bc.pattern}
			r := testkit.Call(b, c, "get_content", args)
			if r.IsError || strings.Count(testkit.Text(b, r), `Content-Location:`) != 10 {
				b.Fatalf("want 10 documents: %.300s", testkit.Text(b, r))
			}
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				testkit.Call(b, c, "get_content", args)
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// BenchmarkViewTree: view and tree over 100k documents (100 folders × 10 subfolders × 100)
// through an in-process MCP client; p50/p95 as metrics. make bench measures the same over
// stdio against the real binary.
func BenchmarkViewTree(b *testing.B) {
	c := benchClient(b)
	for _, bc := range []struct {
		name string
		args func(i int) (string, map[string]any)
	}{
		{"View", func(i int) (string, map[string]any) {
			return "view", map[string]any{"path": fmt.Sprintf("cat-%03d/sub-%02d/doc-%04d.md", i%100, i%10, i%100)}
		}},
		{"ViewFolder", func(i int) (string, map[string]any) {
			return "view", map[string]any{"path": fmt.Sprintf("cat-%03d/sub-%02d", i%100, i%10)}
		}},
		{"TreeRootDepth2", func(int) (string, map[string]any) {
			return "tree", map[string]any{"folder": "", "depth": 2}
		}},
		{"TreeFolderDepth2", func(i int) (string, map[string]any) {
			return "tree", map[string]any{"folder": fmt.Sprintf("cat-%03d", i%100), "depth": 2}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				tool, args := bc.args(i)
				i++
				t0 := time.Now()
				if r := testkit.Call(b, c, tool, args); r.IsError {
					b.Fatalf("%s(%v): %s", tool, args, testkit.Text(b, r))
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
		})
	}
}

// BenchmarkTreeServerSide: the server's own share of a tree call over 100k documents —
// the query and the JSON encoding — without any client decoding.
func BenchmarkTreeServerSide(b *testing.B) {
	cat := benchCatalog(b, 100, 10, 100)
	runtime.GC()
	for b.Loop() {
		_ = cat.Read(func(s *projection.Snapshot) error {
			v, qerr := query.Tree(s, "", 2, query.Limits{})
			if qerr != nil {
				b.Fatal(qerr)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
			return nil
		})
	}
}

// BenchmarkTreeWire: the root tree(depth 2) over 100k documents as the stdio transport
// carries it — the server's JSON-RPC response encoded, then decoded the way mcp-go's
// client does (the envelope, then the result) — without the pipe. Sub-benchmarks split
// the server's and the client's share; bytes/op is the response's size.
func BenchmarkTreeWire(b *testing.B) {
	c := benchClient(b)
	res := testkit.Call(b, c, "tree", map[string]any{"folder": "", "depth": 2})
	resp := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), res)
	wire, err := json.Marshal(resp)
	testkit.NoErr(b, err, "encode")
	b.Run("Server", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			if _, err := json.Marshal(resp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Client", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			var env struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(wire, &env); err != nil {
				b.Fatal(err)
			}
			if _, err := mcp.ParseCallToolResult(&env.Result); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSearchExisting calls the search tool through an in-process MCP client on a data
// directory filled elsewhere — GUIDE_BENCH_DATA=DIR, such as the one `make bench` indexed
// the 100k corpus into (no process may have it open) — for the words of GUIDE_BENCH_WORDS
// (comma-separated), a page of 20 each: the owner's whole share of a search (the index,
// the hits' text, the answer's encoding) without the transport. It reports CPU time and
// allocations per search, which a shared machine's load moves less than wall time.
//
//	GUIDE_BENCH_DATA=DIR go test ./internal/mcpserver -run '^$' -bench SearchExisting -benchmem
func BenchmarkSearchExisting(b *testing.B) {
	data := os.Getenv("GUIDE_BENCH_DATA")
	if data == "" {
		b.Skip("GUIDE_BENCH_DATA is not set")
	}
	cat := &projection.Catalog{Dir: filepath.Join(data, "query"), Logger: testkit.Logger()}
	testkit.NoErr(b, cat.Open(), "open catalog")
	b.Cleanup(func() { _ = cat.Close() })
	x := &index.Index{Dir: filepath.Join(data, "query", "index"), Logger: testkit.Logger()}
	testkit.NoErr(b, x.Open(), "open index")
	b.Cleanup(func() { _ = x.Close() })
	c := inProcessClient(b, &mcpserver.Server{Project: "bench", Catalog: cat, Index: x, Logger: testkit.Logger()})
	words := strings.Split(cmp.Or(os.Getenv("GUIDE_BENCH_WORDS"), "legal,zuerst,dirname,count,python,reviewer"), ",")
	for _, w := range words {
		b.Run(w, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := testkit.CPUTime()
			for b.Loop() {
				testkit.Call(b, c, "search", map[string]any{"query": w})
			}
			b.ReportMetric(float64((testkit.CPUTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
