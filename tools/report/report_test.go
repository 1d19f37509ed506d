package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
)

const (
	ms = time.Millisecond
	us = time.Microsecond
)

// corpus is a corpus of n documents; only its counts reach the report.
func corpus(name string, n, folders int, bytes int64, generated bool) *Corpus {
	c := &Corpus{Name: name, Root: "/corpora/" + name, Generated: generated, Files: make([]string, n),
		Folders: make([]string, folders), Bytes: bytes}
	if generated {
		c.GenTime = 42 * time.Second
	}
	return c
}

func latency(server, op string, n, errs int, p50, p95, p99, maxd time.Duration, note string) Latency {
	return Latency{Server: server, Op: op, N: n, Errors: errs, P50: p50, P95: p95, P99: p99, Max: maxd, Note: note}
}

// fullRun is a run of every scenario, with figures chosen to meet some targets and miss
// others.
func fullRun() *Result {
	small := corpus("generated 10000", 10_000, 1_200, 25_000_000, true)
	big := corpus("generated 100000", 100_000, 11_000, 250_000_000, true)
	goroot := corpus("Go toolchain source ($(go env GOROOT)/src)", 15_000, 2_000, 200_000_000, false)
	guide := "guide (bin/guide-mcp, stdio)"
	fs := "baseline: @modelcontextprotocol/server-filesystem (node, stdio)"
	r := &Result{
		Machine:   Machine{CPUs: 2, CPU: "Test CPU @ 2.0GHz", Memory: "7.8 GiB", Go: "go version go1.26 linux/amd64", Kernel: "Linux 6.1", Date: "2026-11-25 10:00 UTC"},
		Settings:  Settings{Views: 1000, Trees: 200, Restarts: 5, Seed: 1},
		Command:   "go run ./tools/cmd/guide-bench",
		Commit:    "abc1234",
		Scenarios: []string{"cold", "latency", "restart", "search", "content", "web", "fresh", "once", "clients", "churn", "replica", "changes", "scale", "partitions"},
		Replica: &ReplicaResult{Command: "go test -run ^$ -bench ^BenchmarkRunnerCatchUp$ -benchtime 3x ./internal/projection", EventsPerSec: 38032, Runs: 3,
			Line: "BenchmarkRunnerCatchUp-2 3 1314725 ns/op 38032 events/s", Load: Load{Before: "0.50, 0.40, 0.30", After: "0.60, 0.40, 0.30"}},
		Changes: &ChangesResult{Command: "GUIDE_BENCH_CHANGES_DOCS=100000 go test -run ^$ -bench ^BenchmarkChanges$ -benchtime 100x ./internal/query", Docs: 100_000,
			List: ChangesRun{Runs: 100, P50: 9 * time.Millisecond, P95: 14 * time.Millisecond, Line: "BenchmarkChanges/list-2 100 9500000 ns/op 9.0 p50-ms 14.0 p95-ms"},
			Diff: ChangesRun{Runs: 100, P50: 21 * time.Millisecond, P95: 30 * time.Millisecond, Line: "BenchmarkChanges/diff-2 100 22000000 ns/op 21.0 p50-ms 30.0 p95-ms"},
			Load: Load{Before: "0.60, 0.40, 0.30", After: "0.70, 0.40, 0.30"}},
		Duration: 25*time.Minute + 3*time.Second,
		Load:     Load{Before: "0.50, 0.40, 0.30", After: "1.90, 1.20, 0.80"},
		Notes:    []string{"ripgrep is not installed: no rg baseline"},
		Corpora: []CorpusResult{
			{
				Corpus: small,
				Index: []IndexRun{
					{Kind: RunHash, What: "baseline: walk + read + sha256, 1 goroutine(s)", Docs: 10_000, Bytes: 25_000_000, Duration: 900 * ms},
					{Kind: RunRipgrep, What: "baseline: rg --files --no-ignore DIR", Docs: 10_000, Duration: 80 * ms, Note: "lists files, reads none"},
					{Kind: RunCatalog, What: "guide all-in-one: bin/guide-mcp --root, stdio, until the catalog applied the first scan", Docs: 10_000,
						Bytes: 25_000_000, Duration: 2500 * ms, Note: "median of 3 runs: 2.40 s, 2.50 s, 2.90 s"},
					{Kind: RunFTS5, What: "baseline: SQLite FTS5 (porter, one thread, python3 sqlite3), spawn to committed", Docs: 10_000, Bytes: 25_000_000, Duration: 2 * time.Second,
						Disk: 42_000_000, Note: "database 42 MB on disk (1.68× the text)"},
					{Kind: RunBleve, What: "baseline: Bleve v2 alone", Docs: 10_000, Bytes: 25_000_000, Duration: 2800 * ms, Disk: 6_000_000},
					{Kind: RunAll, What: "guide all-in-one: spawn until every projection (catalog and search index) caught up", Docs: 10_000, Bytes: 25_000_000, Duration: 6 * time.Second,
						RSS: 500_000_000, Settled: 210_000_000, Disk: 90_000_000, Note: "RSS then 500 MB, 210 MB two seconds later"},
					{Kind: RunInProcess, What: "guide pieces in-process: broker + Stream + Indexer.Reconcile + Catalog/Runner", Err: "context deadline exceeded"},
				},
				ScanLog: "10000 documents, 10000 read, 10000 published",
				Latency: []Latency{
					latency(guide, "view(document)", 1000, 0, 400*time.Microsecond, 900*time.Microsecond, 2*ms, 12*ms, ""),
					latency(guide, "tree(folder, depth 2)", 200, 1, 3*ms, 8*ms, 11*ms, 30*ms, "first error: tree: no such folder"),
					{Server: fs, Op: "all", Err: "node: not found"},
				},
				Restarts: []Restart{
					{Kind: RestartKilled, What: "guide: after SIGKILL, spawn to first tree(\"\", 2) answer", Times: []time.Duration{120 * ms, 100 * ms, 140 * ms, 110 * ms}},
					{Kind: RestartStopped, What: "guide: after a clean stop (stdin closed), spawn to first tree(\"\", 2) answer", Times: []time.Duration{90 * ms, 95 * ms}},
					{Kind: RestartBaseline, What: fs + ": spawn to first list_directory answer", Err: "exit status 1"},
				},
				RSSIndex: 80 << 20, RSSCalls: 90 << 20, PeakRSS: 120 << 20,
			},
			{
				Corpus: big,
				Index: []IndexRun{
					{Kind: RunCatalog, What: "guide all-in-one: bin/guide-mcp --root, stdio, until the catalog applied the first scan", Docs: 100_000,
						Bytes: 250_000_000, Duration: 50 * time.Second},
					{Kind: RunFTS5, What: "baseline: SQLite FTS5 (porter, one thread, python3 sqlite3), spawn to committed", Docs: 100_000, Bytes: 250_000_000, Duration: 20 * time.Second, Disk: 420_000_000},
					{Kind: RunZoekt, What: "baseline: zoekt-index (sourcegraph/zoekt c4d8f3537f7a), spawn to exit", Docs: 100_000, Bytes: 250_000_000, Duration: 25 * time.Second,
						Peak: 1_879_000_000, Settled: 167_000_000, Disk: 946_000_000},
					{Kind: RunFloor, What: "baseline: the floor (guide-floor)", Docs: 100_000, Bytes: 250_000_000, Duration: 6 * time.Second, Peak: 242_000_000, Disk: 96_000_000},
					{Kind: RunAll, What: "guide all-in-one: spawn until every projection (catalog and search index) caught up", Docs: 100_000, Bytes: 250_000_000, Duration: 70 * time.Second,
						RSS: 1_400_000_000, Settled: 480_000_000, SettledMerged: 260_000_000, Peak: 2_000_000_000, Disk: 850_000_000, IndexDisk: 770_000_000},
				},
				Latency: []Latency{
					latency(guide, "view(document)", 1000, 0, 700*time.Microsecond, 1500*time.Microsecond, 3*ms, 20*ms, ""),
					latency(guide, "tree(folder, depth 2)", 200, 0, 5*ms, 14*ms, 20*ms, 40*ms, ""),
					latency("baseline: os.ReadFile / os.ReadDir, in-process", "view(document)", 1000, 0, 12*time.Microsecond, 24*time.Microsecond, 60*time.Microsecond, time.Millisecond, ""),
					latency("baseline: os.ReadFile / os.ReadDir, in-process", "tree(folder, depth 2)", 200, 0, 46*time.Microsecond, 1300*time.Microsecond, 1900*time.Microsecond, 3600*time.Microsecond, ""),
					latency(fs, "view(document)", 1000, 0, 1200*time.Microsecond, 2900*time.Microsecond, 6500*time.Microsecond, 13*ms, "read_text_file"),
					latency(fs, "tree(folder, depth 2)", 200, 0, 900*time.Microsecond, 19*ms, 25*ms, 31*ms, "list_directory on the folder and each subfolder"),
				},
				Restarts: []Restart{
					{Kind: RestartKilled, What: "guide: after SIGKILL", Times: []time.Duration{250 * ms, 280 * ms, 260 * ms}},
					{Kind: RestartStopped, What: "guide: after a clean stop", Times: []time.Duration{240 * ms, 320 * ms, 230 * ms}},
					{Kind: RestartBaseline, What: fs + ": spawn to first list_directory answer", Times: []time.Duration{300 * ms}},
				},
				RSSIndex: 400 << 20, RSSCalls: 500 << 20, PeakRSS: 1800 << 20,
			},
			{
				Corpus: goroot,
				Index: []IndexRun{
					{Kind: RunFTS5, What: "baseline: SQLite FTS5 (porter, one thread, python3 sqlite3), spawn to committed", Docs: 15_000, Bytes: 200_000_000, Duration: 12 * time.Second, Disk: 300_000_000},
					{Kind: RunZoekt, What: "baseline: zoekt-index, spawn to exit", Err: "not on this machine (no checkout of sourcegraph/zoekt at .bench/zoekt; --zoekt-src or $ZOEKT_SRC)"},
					{Kind: RunAll, What: "guide all-in-one: spawn until every projection (catalog and search index) caught up", Docs: 15_000, Bytes: 200_000_000, Duration: 20 * time.Second,
						RSS: 400_000_000, Settled: 200_000_000, Disk: 300_000_000},
				},
			},
		},
		Search: []SearchResult{
			{
				Corpus:     big,
				Index:      IndexRun{What: "guide all-in-one: bin/guide-mcp --root, until the search index applied the first scan", Docs: 100_000, Bytes: 250_000_000, Duration: 4 * time.Minute, Note: "catalog caught up after 50.00 s"},
				IndexBytes: 600_000_000, RSS: 300 << 20, RSSAfter: 310 << 20, Peak: 400 << 20,
				Words: []WordResult{
					{Word: "zebra", Band: "rare", RGDocs: 50, GuideTotal: 52, GuideP50: 800 * time.Microsecond, RG: 900 * ms, Ratio: 1125},
					{Word: "river", Band: "common", RGDocs: 40_000, GuideTotal: 41_000, GuideP50: 6 * ms, RG: 1100 * ms, Ratio: 183},
					{Word: "garden", Band: "medium", RGDocs: 5_000, GuideTotal: 5_100, GuideP50: 2 * ms, RG: 1000 * ms, Ratio: 500},
				},
				Guide:    latency(guide, "search(word)", 300, 0, 2*ms, 9*ms, 12*ms, 15*ms, ""),
				GuideSDK: latency("guide (bin/guide-mcp, stdio), official TypeScript SDK client", "search(word)", 300, 0, 1800*time.Microsecond, 8*ms, 11*ms, 14*ms, ""),
				Floor:    latency(guide, "view(path), an answer as large as a search's", 300, 0, 1500*time.Microsecond, 5*ms, 7*ms, 9*ms, "notes/long.md: 10712 bytes of answer against a search's median 10600"),
				RG:       latency("baseline: rg -l -w -i -F --no-messages WORD DIR", "files containing the word", 3, 0, 1000*ms, 1100*ms, 1100*ms, 1100*ms, ""),
				Sentences: []SentenceResult{
					{Sentence: "how to river a garden zebra", GuideTotal: 60_000, GuideP50: 30 * ms, GuideMax: 41 * ms},
					{Sentence: "what is the garden of the river", GuideTotal: 45_000, GuideP50: 25 * ms, GuideMax: 33 * ms},
				},
				GuideSentence: latency(guide, "search(sentence)", 20, 0, 28*ms, 40*ms, 41*ms, 41*ms, ""),
				Ratio:         500, Reps: 10,
				Load: Load{Before: "1.00, 1.00, 1.00", After: "2.00, 1.50, 1.10"},
			},
			{Corpus: goroot, Err: "waiting for the index: context deadline exceeded", Load: Load{Before: "2.00, 1.50, 1.10", After: "2.10, 1.60, 1.20"}},
		},
		Content: &ContentResult{
			Corpus:   big,
			Patterns: []ContentPattern{{Category: "alpha", Pattern: "beta/*.md", Want: 10}, {Category: "gamma", Pattern: "*.md", Want: 10}},
			Guide:    latency(guide, "get_content(category, pattern) → 10 documents", 200, 0, 3*ms, 6*ms, 8*ms, 10*ms, ""),
			FS: latency(fs, "search_files(category folder, pattern) + read_multiple_files", 200, 0, 90*ms, 120*ms, 150*ms, 200*ms,
				"search_files walks the category's whole subtree; then one read_multiple_files"),
			Ratio: 30,
			Load:  Load{Before: "1.10, 1.00, 1.00", After: "1.20, 1.10, 1.00"},
			Notes: []string{"get_content(delta, *.md) returned 9 documents, not 10: left out"},
		},
		Web: &WebResult{
			Corpus: big,
			Pages: []Latency{
				latency("guide web page", "/ (the root folder)", 200, 0, 3*ms, 5*ms, 6*ms, 9*ms, ""),
				latency("guide web page", "/search?q=WORD", 300, 0, 12*ms, 61*ms, 70*ms, 90*ms, ""),
			},
			Load:  Load{Before: "1.00, 1.00, 1.00", After: "1.10, 1.00, 1.00"},
			Notes: []string{"every page also reads the session's pending events from the stream"},
		},
		Fresh: &FreshResult{
			Corpus: corpus("generated 10000 (a copy)", 10_000, 1_200, 25_000_000, true),
			Setup:  3 * time.Second,
			View:   latency("guide split mode", "saved file → view shows it", 100, 0, 40*ms, 90*ms, 120*ms, 130*ms, ""),
			Search: latency("guide split mode", "saved file → search finds it", 98, 2, 60*ms, 200*ms, 250*ms, 260*ms, ""),
			Rescan: []OnceRun{
				{Duration: 1500 * ms, Documents: 10_000, Read: 1, Published: 1},
				{Duration: 1400 * ms, Documents: 10_000, Read: 1, Published: 0},
				{Duration: 1700 * ms, Documents: 10_000, Read: 1, Published: 1, Err: "exit status 1"},
			},
			Timeouts: 2,
			Load:     Load{Before: "0.90, 0.90, 0.90", After: "1.30, 1.00, 0.90"},
		},
		Once: &OnceResult{
			Corpus:  big,
			Initial: &OnceRun{Duration: 40 * time.Second, Documents: 100_000, Read: 100_000, Published: 100_000},
			Runs: []OnceRun{
				{Duration: 1800 * ms, Documents: 100_000, Millis: 1500, Known: "state file"},
				{Duration: 1900 * ms, Documents: 100_000, Millis: 1600},
			},
			Walk:  IndexRun{What: "baseline: walk + stat (filepath.WalkDir, DirEntry.Info), 1 goroutine", Docs: 100_000, Duration: 400 * ms},
			Hash:  IndexRun{What: "baseline: walk + read + sha256, 2 goroutine(s)", Docs: 100_000, Duration: 9 * time.Second},
			Store: "its own embedded JetStream store (--data), filled by a first indexer --once",
			Load:  Load{Before: "0.80, 0.80, 0.80", After: "0.85, 0.80, 0.80"},
		},
		Churn: &ChurnResult{
			Corpus: corpus("generated 10000 (a copy)", 10_000, 1_200, 25_000_000, true),
			Rate:   1000, For: time.Minute, Writes: 60_000, WriteTime: 59 * time.Second, Samples: 5,
			CatalogLag: []uint64{0, 10, 30, 5, 0},
			IndexLag:   []uint64{0, 200, 900, 50, 0},
			TimeLag:    []time.Duration{0, 30 * ms, 400 * ms, 80 * ms, 0},
			SampleErrs: 1,
			CatchUp:    700 * ms,
			Load:       Load{Before: "1.30, 1.00, 0.90", After: "1.90, 1.20, 1.00"},
		},
		Clients: &ClientsResult{
			Corpus:    big,
			Second:    []time.Duration{60 * ms, 70 * ms, 65 * ms, 310 * ms},
			Alone:     []time.Duration{80 * ms, 90 * ms},
			BridgeRSS: []int64{8_300_000, 8_500_000, 8_400_000},
			AloneRSS:  29_000_000,
			OneRSS:    600_000_000, FiveRSS: 640_000_000,
			Attached:  3,
			Recovered: []time.Duration{900 * ms, 1100 * ms, 1000 * ms},
			Answers:   []time.Duration{800 * ms, 850 * ms, 900 * ms, 1000 * ms, 1050 * ms, 1100 * ms, 950 * ms, 980 * ms, 1000 * ms},
			Load:      Load{Before: "1.00, 1.00, 1.00", After: "1.10, 1.00, 1.00"},
		},
		Scale: &ScaleResult{
			Reps: 10,
			Runs: []ScaleRun{
				{Corpus: small, Catalog: 3 * time.Second, Searchable: 6 * time.Second, RSS: 200_000_000, Disk: 90_000_000, Words: 30, Bleve: IndexRun{Docs: 1_000, Duration: 2 * time.Second},
					Search: latency(guide, "search(word)", 300, 0, 1*ms, 3*ms, 4*ms, 5*ms, "")},
				{Corpus: big, Catalog: 30 * time.Second, Searchable: 64 * time.Second, RSS: 1_000_000_000, Settled: 500_000_000, Disk: 900_000_000, Words: 30, Bleve: IndexRun{Docs: 100_000, Duration: 26 * time.Second},
					Search: latency(guide, "search(word)", 300, 0, 2*ms, 9*ms, 12*ms, 15*ms, "")},
				{Corpus: corpus("generated 1000000", 1_000_000, 110_000, 3_400_000_000, true), Catalog: 5 * time.Minute, Searchable: 12 * time.Minute,
					RSS: 1_800_000_000, Peak: 2_400_000_000, Settled: 1_200_000_000, Disk: 9_000_000_000, Words: 30, Bleve: IndexRun{Docs: 1_000_000, Duration: 5 * time.Minute}, Search: latency(guide, "search(word)", 300, 0, 8*ms, 25*ms, 30*ms, 40*ms, "")},
			},
			Load:  Load{Before: "1.00, 1.00, 1.00", After: "1.50, 1.20, 1.00"},
			Notes: []string{"the 1M corpus was generated in this run"},
		},
		Partitions: &PartitionsResult{
			Corpus: big, P: 4, Reps: 10, Queries: 29, Differ: 0,
			Whole: PartReplica{CatchUp: 120 * time.Second, RSS: 650_000_000, Settled: 150_000_000, Disk: 490_000_000},
			Parts: []PartReplica{
				{Partitions: "0", CatchUp: 60 * time.Second, RSS: 390_000_000, Settled: 150_000_000, Disk: 190_000_000, SettledDisk: 150_000_000},
				{Partitions: "1", CatchUp: 40 * time.Second, RSS: 350_000_000, Disk: 185_000_000},
			},
			WholeSearch: latency("guide-mcp --nats", "search(word)", 290, 0, 2*ms, 6*ms, 18*ms, 20*ms, ""),
			Fan:         latency("guide-mcp --nats --partitions 0", "search(word)", 290, 0, 5*ms, 14*ms, 25*ms, 30*ms, ""),
			WholeFirst:  latency("guide-mcp --nats", "search(word), first time", 29, 0, 2*ms, 6*ms, 10*ms, 10*ms, ""),
			FanFirst:    latency("guide-mcp --nats --partitions 0", "search(word), first time", 29, 0, 10*ms, 14*ms, 15*ms, 15*ms, ""),
			Load:        Load{Before: "1.00, 1.00, 1.00", After: "1.20, 1.00, 1.00"},
		},
		RYW: &RYWResult{
			Corpus: corpus("generated 100000 (a copy)", 100_000, 11_000, 250_000_000, true), Setup: 70 * time.Second,
			Off:         latency("guide-mcp --root (stdio bridge → owner), --sync-wait 0", "view, nothing changed for 1 s", 200, 0, 400*us, 900*us, 1*ms, 2*ms, ""),
			OffSearch:   latency("guide-mcp --root (stdio bridge → owner), --sync-wait 0", "search(a word no document holds)", 200, 0, 900*us, 2*ms, 3*ms, 4*ms, ""),
			Idle:        latency("guide-mcp --root (stdio bridge → owner)", "view, nothing changed for 1 s", 200, 0, 700*us, 1500*us, 2*ms, 3*ms, ""),
			SavedView:   latency("guide-mcp --root (stdio bridge → owner)", "view, at once after a save", 200, 0, 9*ms, 20*ms, 25*ms, 30*ms, ""),
			SavedSearch: latency("guide-mcp --root (stdio bridge → owner)", "search(token), at once after a save", 200, 0, 15*ms, 40*ms, 45*ms, 50*ms, ""),
			Load:        Load{Before: "1.00, 1.00, 1.00", After: "1.20, 1.00, 1.00"},
		},
	}
	return r
}

// failedRun is a run whose split mode did not start, with the content scenario failing.
func failedRun() *Result {
	big := corpus("generated 2000", 2_000, 300, 5_000_000, true)
	return &Result{
		Machine:   Machine{CPUs: 2, Go: "go version go1.26 linux/amd64", Date: "2026-11-25 10:00 UTC"},
		Command:   "go run ./tools/cmd/guide-bench --scenarios content,once,churn,web,clients,replica,scale --sizes 2000",
		Scenarios: []string{"content", "once", "churn", "web", "clients", "replica", "scale"},
		Replica:   &ReplicaResult{Command: "go test ./internal/projection", Err: "exit status 1: FAIL"},
		Changes:   &ChangesResult{Command: "go test ./internal/query", Docs: 100_000, Err: "exit status 1: FAIL"},
		Content:   &ContentResult{Corpus: big, Err: "no pattern of the corpus selects exactly 10 documents", Load: Load{Before: "0.10, 0.10, 0.10", After: "0.20, 0.10, 0.10"}},
		Once:      &OnceResult{Corpus: big, Runs: []OnceRun{{Duration: 300 * ms, Documents: 2_000, Published: 2}}, Load: Load{Before: "0.20, 0.10, 0.10", After: "0.30, 0.10, 0.10"}},
		Churn:     &ChurnResult{Corpus: big, Rate: 100, For: 10 * time.Second, CatchUpErr: "not caught up 2 minutes after the last write", Load: Load{Before: "0.30, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
		SplitErr:  "indexer exited before listening on 127.0.0.1:4222",
		Web:       &WebResult{Corpus: big, Err: "guide-mcp --http not ready after 30m0s", Load: Load{Before: "0.40, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
		Clients:   &ClientsResult{Corpus: big, Second: []time.Duration{50 * ms}, Err: "spawn a client: initialize: EOF", Load: Load{Before: "0.40, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
		Scale:     &ScaleResult{Runs: []ScaleRun{{Corpus: big, Err: "waiting for the index: context deadline exceeded"}}, Load: Load{Before: "0.40, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
		RYW:       &RYWResult{Err: "spawn without the sync: initialize: EOF", Load: Load{Before: "0.40, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
	}
}

// results is the results of a run, as the results file keeps them.
func results(r *Result) *Results {
	res := &Results{Version: ResultsVersion}
	res.Put(r.Records()...)
	return res
}

// TestRender compares the whole of BENCHMARKS.md rendered from each run, and the results
// file, with their golden files; go test -update rewrites them.
func TestRender(t *testing.T) {
	for name, r := range map[string]*Result{"full": fullRun(), "failed": failedRun()} {
		t.Run(name, func(t *testing.T) {
			res := results(r)
			testkit.Golden(t, filepath.Join("testdata", name+".md"), []byte(Render(res)))
			b, err := res.Encode()
			testkit.NoErr(t, err, "encode")
			testkit.Golden(t, filepath.Join("testdata", name+".json"), b)
		})
	}
}

// firstScreen is the part of BENCHMARKS.md a reader sees without scrolling.
const firstScreen = 60

// TestFirstScreenHoldsEveryTarget: whatever was measured, the first screen lists every
// target with its verdict.
func TestFirstScreenHoldsEveryTarget(t *testing.T) {
	for name, res := range map[string]*Results{"full": results(fullRun()), "failed": results(failedRun()), "empty": {}} {
		t.Run(name, func(t *testing.T) {
			lines := strings.Split(Render(res), "\n")
			screen := strings.Join(lines[:min(firstScreen, len(lines))], "\n")
			for _, tg := range Targets {
				st := tg.Check(res)
				row := fmt.Sprintf("| %s | %s | %s |", tg.What, st.Goal, cell(st.Measured))
				if !strings.Contains(screen, row) || !strings.Contains(screen, st.Verdict) {
					t.Errorf("the first %d lines lack %q", firstScreen, row)
				}
			}
		})
	}
}

// TestTargets reads each target against the full run, whose figures meet some and miss
// others.
func TestTargets(t *testing.T) {
	res := results(fullRun())
	want := map[string]string{
		"cold index of 10k generated documents, until the catalog holds the first scan":         Met,         // 4000/s
		"cold index of 10k, until every projection caught up, against SQLite FTS5":              NotMet,      // 3×
		"resident memory (VmRSS) two seconds after a first index of 100k":                       Met,         // 480 MB
		"data directory after a first index of 100k, against the text":                          NotMet,      // 3.4×
		"view p95 through MCP (stdio), 100k":                                                    Met,         // 1.5 ms
		"tree (depth 2) p95 through MCP (stdio), 100k":                                          NotMet,      // 14 ms
		"restart to first answer, 100k: worst of the runs after SIGKILL and after a clean stop": NotMet,      // 320 ms
		"search(word) p50 through MCP (stdio), 100k":                                            Met,         // 2 ms, at the bound
		"search index against the text, 100k":                                                   Met,         // 2.4×
		"get_content of a pattern matching 10 documents, p95, 100k":                             NotMet,      // 6 ms
		"a web page, whole answer read, p95 of the slowest kind of page, 100k":                  NotMet,      // 61 ms
		"saved file → view shows it, split mode, 10k":                                           Met,         // 40 / 90 ms
		"saved file → search finds it, split mode, 10k":                                         NotMet,      // 2 timed out
		"indexer --once with nothing changed, whole process, 100k":                              Met,         // 1.9 s, 0 events
		"a second client on an indexed project, spawn to first answer, p95, 100k":               NotMet,      // 310 ms
		"a new replica (catalog and index) catches up with the stream":                          Met,         // 38,032/s
		"changes: an answer of 1,000 changes since a cursor, p95, stream of 100k":               Met,         // 14 ms
		"time to searchable, 1M against 100k in the same run":                                   NotMet,      // 11.25×
		"resident memory when searchable, 1M":                                                   Met,         // 1.8 GB
		"50 HTTP sessions calling view, search and get_content":                                 NotMeasured, // not in this run
	}
	seen := 0
	for _, tg := range Targets {
		w, ok := want[tg.What]
		if !ok {
			continue
		}
		seen++
		if st := tg.Check(res); st.Verdict != w {
			t.Errorf("%s: %s, want %s (measured %s)", tg.What, st.Verdict, w, st.Measured)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d targets named here are in Targets", seen, len(want))
	}
}

// TestTargetsReadWhatTheHarnessWrites: every metric a target of an area the harness
// measures reads is in the full run's records, and every target's area is known.
func TestTargetsReadWhatTheHarnessWrites(t *testing.T) {
	res := results(fullRun())
	for _, tg := range Targets {
		if areaIndex(tg.Area) == len(Areas) {
			t.Errorf("%s: unknown area %q", tg.What, tg.Area)
		}
		rec, ok := res.Record(tg.Area)
		if !ok {
			continue // measured by another program: its own package tests its keys
		}
		for _, g := range append([]Goal{tg.Goal}, tg.Also...) {
			if _, ok := rec.Metrics[g.Metric]; !ok {
				t.Errorf("%s: the %s record has no metric %q", tg.What, tg.Area, g.Metric)
			}
		}
		for _, k := range tg.Baseline {
			if _, ok := rec.Metrics[k]; !ok {
				t.Errorf("%s: the %s record has no baseline %q", tg.What, tg.Area, k)
			}
		}
	}
}

// TestUpdateKeepsOtherAreas: a run of one area replaces that area's record only, and the
// Markdown is rendered from the whole file.
func TestUpdateKeepsOtherAreas(t *testing.T) {
	dir := t.TempDir()
	jsonPath, mdPath := filepath.Join(dir, "results.json"), filepath.Join(dir, "results.md")
	first := results(fullRun())
	for _, rec := range first.Records {
		testkit.NoErr(t, Update(jsonPath, mdPath, rec), "update")
	}
	later := fullRun()
	later.Machine.Date = "2026-12-01 09:00 UTC"
	later.Search[0].Guide.P50 = 7 * ms
	var search Record
	for _, rec := range later.Records() {
		if rec.Area == "search" {
			search = rec
		}
	}
	testkit.NoErr(t, Update(jsonPath, mdPath, search), "update search")
	got, err := ReadResults(jsonPath)
	testkit.NoErr(t, err, "read")
	testkit.Equal(t, len(got.Records), len(first.Records), "records")
	for _, rec := range got.Records {
		want := "2026-11-25 10:00 UTC"
		if rec.Area == "search" {
			want = "2026-12-01 09:00 UTC"
		}
		testkit.Equal(t, rec.Date, want, rec.Area+"'s date")
	}
	md, err := os.ReadFile(mdPath)
	testkit.NoErr(t, err, "read the Markdown")
	testkit.Equal(t, string(md), Render(got), "the Markdown is the rendering of the results")
	if !strings.Contains(string(md), "| 7.00 ms |") {
		t.Error("the new search figure is not in the Markdown")
	}
}

// TestEncodeReadsBack: the results file reads back as written, one table row a line.
func TestEncodeReadsBack(t *testing.T) {
	res := results(fullRun())
	b, err := res.Encode()
	testkit.NoErr(t, err, "encode")
	var back Results
	testkit.NoErr(t, json.Unmarshal(b, &back), "decode")
	if !reflect.DeepEqual(&back, res) {
		t.Error("the results do not read back as written")
	}
	if !strings.Contains(string(b), `["zebra","rare","50","52","800 µs","900.0 ms","1125×"]`) {
		t.Error("a table row is not on one line")
	}
}

func TestReadResultsRefusesAnotherVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	testkit.NoErr(t, os.WriteFile(path, []byte(`{"version": 99, "records": []}`), 0o644), "write")
	if _, err := ReadResults(path); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("got %v, want an error naming version 99", err)
	}
}

// TestBenchmarksFileIsRendered: the committed BENCHMARKS.md is the rendering of the
// committed BENCHMARKS.json, so that no figure is written by hand (`make bench-render`
// writes it again after a change to the rendering).
func TestBenchmarksFileIsRendered(t *testing.T) {
	res, err := ReadResults(filepath.Join("..", "..", ResultsFile))
	testkit.NoErr(t, err, "read the results")
	md, err := os.ReadFile(filepath.Join("..", "..", MarkdownFile))
	testkit.NoErr(t, err, "read the Markdown")
	if string(md) != Render(res) {
		t.Errorf("%s is not the rendering of %s: run `make bench-render`", MarkdownFile, ResultsFile)
	}
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Several clients, one owner": "several-clients-one-owner",
		"get_content":                "get_content",
		"Cold index, how measured":   "cold-index-how-measured",
		"How each is measured":       "how-each-is-measured",
	} {
		testkit.Equal(t, Anchor(heading), want, heading)
	}
}

// TestPartitionsCompareWhatReplicasHoldOnceMerged: when every replica's index merged in
// time, the data and memory targets compare what the replicas hold then, not the moment
// they became searchable (when a first index writes its merged segment beside the ones it
// replaces); when one did not, every replica is compared when searchable.
func TestPartitionsCompareWhatReplicasHoldOnceMerged(t *testing.T) {
	big := corpus("generated 100000", 100_000, 11_000, 250_000_000, true)
	run := func(parts ...PartReplica) map[string]Metric {
		r := &Result{Scenarios: []string{"partitions"}, Partitions: &PartitionsResult{Corpus: big, P: 4,
			Whole: PartReplica{CatchUp: 100 * time.Second, RSS: 400_000_000, Settled: 200_000_000, Disk: 500_000_000, SettledDisk: 400_000_000},
			Parts: parts}}
		return r.partitionsRecord().Metrics
	}
	m := run(PartReplica{Partitions: "0", CatchUp: 30 * time.Second, RSS: 300_000_000, Settled: 100_000_000, Disk: 200_000_000, SettledDisk: 120_000_000},
		PartReplica{Partitions: "1", CatchUp: 30 * time.Second, RSS: 300_000_000, Settled: 80_000_000, Disk: 200_000_000, SettledDisk: 100_000_000})
	if d, r := m["partitions.data/whole@100k"].Value, m["partitions.rss/whole@100k"].Value; d != 0.3 || r != 0.5 {
		t.Fatalf("once merged: data %.2f×, RSS %.2f×, want 0.30× and 0.50×", d, r)
	}
	m = run(PartReplica{Partitions: "0", CatchUp: 30 * time.Second, RSS: 300_000_000, Settled: 100_000_000, Disk: 200_000_000, SettledDisk: 120_000_000},
		PartReplica{Partitions: "1", CatchUp: 30 * time.Second, RSS: 300_000_000, Disk: 200_000_000})
	if d, r := m["partitions.data/whole@100k"].Value, m["partitions.rss/whole@100k"].Value; d != 0.4 || r != 0.75 {
		t.Fatalf("one replica not merged: data %.2f×, RSS %.2f×, want 0.40× and 0.75× (when searchable)", d, r)
	}
}
