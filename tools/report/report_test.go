package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
)

const ms = time.Millisecond

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
		Machine:  Machine{CPUs: 2, CPU: "Test CPU @ 2.0GHz", Memory: "7.8 GiB", Go: "go version go1.26 linux/amd64", Kernel: "Linux 6.1", Date: "2026-11-25 10:00 UTC"},
		Settings: Settings{Views: 1000, Trees: 200, Restarts: 5, Seed: 1},
		Duration: 25*time.Minute + 3*time.Second,
		Load:     Load{Before: "0.50, 0.40, 0.30", After: "1.90, 1.20, 0.80"},
		Notes:    []string{"ripgrep is not installed: no rg baseline"},
		Corpora: []CorpusResult{
			{
				Corpus: small,
				Index: []IndexRun{
					{What: "baseline: walk + read + sha256, 1 goroutine(s)", Docs: 10_000, Bytes: 25_000_000, Duration: 900 * ms},
					{What: "baseline: rg --files --no-ignore DIR", Docs: 10_000, Duration: 80 * ms, Note: "lists files, reads none"},
					{What: "guide all-in-one: bin/guide-mcp --root, stdio, until the catalog applied the first scan", Docs: 10_000,
						Bytes: 25_000_000, Duration: 2500 * ms, Note: "median of 3 runs: 2.40 s, 2.50 s, 2.90 s"},
					{What: "baseline: SQLite FTS5 (porter, one thread, python3 sqlite3), spawn to committed", Docs: 10_000, Bytes: 25_000_000, Duration: 2 * time.Second},
					{What: "guide all-in-one: spawn until every projection (catalog and search index) caught up", Docs: 10_000, Bytes: 25_000_000, Duration: 6 * time.Second},
					{What: "guide pieces in-process: broker + Stream + Indexer.Reconcile + Catalog/Runner", Err: "context deadline exceeded"},
				},
				ScanLog: "10000 documents, 10000 read, 10000 published",
				Latency: []Latency{
					latency(guide, "view(document)", 1000, 0, 400*time.Microsecond, 900*time.Microsecond, 2*ms, 12*ms, ""),
					latency(guide, "tree(folder, depth 2)", 200, 1, 3*ms, 8*ms, 11*ms, 30*ms, "first error: tree: no such folder"),
					{Server: fs, Op: "all", Err: "node: not found"},
				},
				Restarts: []Restart{
					{What: "guide: after SIGKILL, spawn to first tree(\"\", 2) answer", Times: []time.Duration{120 * ms, 100 * ms, 140 * ms, 110 * ms}},
					{What: "guide: after a clean stop (stdin closed), spawn to first tree(\"\", 2) answer", Times: []time.Duration{90 * ms, 95 * ms}},
					{What: fs + ": spawn to first list_directory answer", Err: "exit status 1"},
				},
				RSSIndex: 80 << 20, RSSCalls: 90 << 20, PeakRSS: 120 << 20,
			},
			{
				Corpus: big,
				Index: []IndexRun{
					{What: "guide all-in-one: bin/guide-mcp --root, stdio, until the catalog applied the first scan", Docs: 100_000,
						Bytes: 250_000_000, Duration: 50 * time.Second},
				},
				Latency: []Latency{
					latency(guide, "view(document)", 1000, 0, 700*time.Microsecond, 1500*time.Microsecond, 3*ms, 20*ms, ""),
					latency(guide, "tree(folder, depth 2)", 200, 0, 5*ms, 14*ms, 20*ms, 40*ms, ""),
				},
				Restarts: []Restart{
					{What: "guide: after SIGKILL", Times: []time.Duration{250 * ms, 280 * ms, 260 * ms}},
					{What: "guide: after a clean stop", Times: []time.Duration{240 * ms, 320 * ms, 230 * ms}},
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
					RSS: 1_800_000_000, Settled: 1_200_000_000, Disk: 9_000_000_000, Words: 30, Bleve: IndexRun{Docs: 1_000_000, Duration: 5 * time.Minute}, Search: latency(guide, "search(word)", 300, 0, 8*ms, 25*ms, 30*ms, 40*ms, "")},
			},
			Load:  Load{Before: "1.00, 1.00, 1.00", After: "1.50, 1.20, 1.00"},
			Notes: []string{"the 1M corpus was generated in this run"},
		},
	}
	return r
}

// failedRun is a run whose split mode did not start, with the content scenario failing.
func failedRun() *Result {
	big := corpus("generated 2000", 2_000, 300, 5_000_000, true)
	return &Result{
		Machine:  Machine{CPUs: 2, Go: "go version go1.26 linux/amd64", Date: "2026-11-25 10:00 UTC"},
		Content:  &ContentResult{Corpus: big, Err: "no pattern of the corpus selects exactly 10 documents", Load: Load{Before: "0.10, 0.10, 0.10", After: "0.20, 0.10, 0.10"}},
		Once:     &OnceResult{Corpus: big, Runs: []OnceRun{{Duration: 300 * ms, Documents: 2_000, Published: 2}}, Load: Load{Before: "0.20, 0.10, 0.10", After: "0.30, 0.10, 0.10"}},
		Churn:    &ChurnResult{Corpus: big, Rate: 100, For: 10 * time.Second, CatchUpErr: "not caught up 2 minutes after the last write", Load: Load{Before: "0.30, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
		SplitErr: "indexer exited before listening on 127.0.0.1:4222",
		Web:      &WebResult{Corpus: big, Err: "guide-mcp --http not ready after 30m0s", Load: Load{Before: "0.40, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
		Clients:  &ClientsResult{Corpus: big, Second: []time.Duration{50 * ms}, Err: "spawn a client: initialize: EOF", Load: Load{Before: "0.40, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
		Scale:    &ScaleResult{Runs: []ScaleRun{{Corpus: big, Err: "waiting for the index: context deadline exceeded"}}, Load: Load{Before: "0.40, 0.10, 0.10", After: "0.40, 0.10, 0.10"}},
	}
}

// TestMarkdown compares every block of each run with its golden file; go test -update
// rewrites them.
func TestMarkdown(t *testing.T) {
	for name, r := range map[string]*Result{"full": fullRun(), "failed": failedRun()} {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			for _, blk := range r.Blocks() {
				b.WriteString("<!-- block " + blk.Name + " -->\n")
				b.WriteString(blk.Markdown)
			}
			testkit.Golden(t, filepath.Join("testdata", name+".md"), []byte(b.String()))
		})
	}
}

func TestTargets(t *testing.T) {
	ts := fullRun().Targets()
	want := []string{"met", "not met", "met", "not met", "not met"}
	for i, tg := range ts {
		if tg.Met != want[i] {
			t.Errorf("%s: %s, want %s (measured %s)", tg.What, tg.Met, want[i], tg.Measured)
		}
	}
}

func TestSpliceBlock(t *testing.T) {
	doc := "# Benchmarks\n\nhand-written analysis\n"
	doc = SpliceBlock(doc, Block{Markdown: "cold v1\n"})
	doc = SpliceBlock(doc, Block{Name: "search", Markdown: "search v1\n"})
	doc += "\nmore hand-written text\n"
	doc = SpliceBlock(doc, Block{Name: "search", Markdown: "search v2\n"})
	for _, want := range []string{"hand-written analysis", "cold v1", "search v2", "more hand-written text"} {
		if !strings.Contains(doc, want) {
			t.Errorf("missing %q in:\n%s", want, doc)
		}
	}
	if strings.Contains(doc, "search v1") {
		t.Errorf("the old search block is still there:\n%s", doc)
	}
	if got := Splice(doc, "cold v2\n"); !strings.Contains(got, "cold v2") || strings.Contains(got, "cold v1") || !strings.Contains(got, "search v2") {
		t.Errorf("Splice replaced the wrong block:\n%s", got)
	}
}
