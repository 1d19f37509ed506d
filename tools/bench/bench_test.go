package bench

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/corpus"
	"github.com/guide/guide/tools/report"
)

func TestParseScenarios(t *testing.T) {
	t.Run("All", func(t *testing.T) {
		got, err := ParseScenarios("all")
		if err != nil || len(got) != len(AllScenarios) {
			t.Fatalf("got %v, %v; want every scenario", got, err)
		}
	})
	t.Run("Deduplicated", func(t *testing.T) {
		got, err := ParseScenarios(" search,churn,search ")
		if err != nil || !slices.Equal(got, []string{"churn", "search"}) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		if _, err := ParseScenarios("cold,warm"); err == nil || !strings.Contains(err.Error(), "warm") {
			t.Fatalf("got %v, want an error naming warm", err)
		}
	})
	t.Run("ErrEmpty", func(t *testing.T) {
		if _, err := ParseScenarios(" , "); err == nil {
			t.Fatal("want an error")
		}
	})
	t.Run("OptInOnlyWhenNamed", func(t *testing.T) {
		all, err := ParseScenarios("all")
		if err != nil || slices.Contains(all, ScenarioScale) {
			t.Fatalf("all = %v, %v; want no opt-in scenario", all, err)
		}
		got, err := ParseScenarios("once,scale")
		if err != nil || !slices.Equal(got, []string{"once", "scale"}) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
}

func TestConfigHas(t *testing.T) {
	c := Config{Scenarios: []string{ScenarioSearch}}
	if !c.has(ScenarioCold, ScenarioSearch) || c.has(ScenarioCold) {
		t.Fatal("has: want search only")
	}
	if !(&Config{}).has(ScenarioChurn) {
		t.Fatal("no list means every scenario")
	}
	if (&Config{}).has(ScenarioScale) || !(&Config{Scenarios: []string{ScenarioScale}}).has(ScenarioScale) {
		t.Fatal("an opt-in scenario runs when named only")
	}
}

func TestParts(t *testing.T) {
	multi := "Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/markdown\r\nContent-Location: guide://category/a.md\r\n\r\nA\r\n--b\r\nContent-Type: text/markdown\r\nContent-Location: guide://category/b.md\r\n\r\nB\r\n--b--\r\n"
	if n := parts(multi); n != 2 {
		t.Errorf("parts(multipart of 2) = %d", n)
	}
	if n := parts("# one document\n"); n != 1 {
		t.Errorf("parts(one document) = %d", n)
	}
	if n := parts(""); n != 0 {
		t.Errorf("parts(\"\") = %d", n)
	}
}

func generatedCorpus(t *testing.T, docs int) *report.Corpus {
	t.Helper()
	root := t.TempDir()
	if _, err := corpus.Generate(root, corpus.Options{Docs: docs, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	c := &report.Corpus{Name: "test", Root: root, Generated: true}
	if err := listTree(c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestContentPatterns(t *testing.T) {
	c := generatedCorpus(t, 2000)
	pats := contentPatterns(c, 10, 20)
	if len(pats) == 0 {
		t.Fatal("no folder of 10 documents in a 2,000-document corpus")
	}
	for _, p := range pats {
		dir := path.Join(p.Category, path.Dir(p.Pattern))
		ents, err := os.ReadDir(filepath.Join(c.Root, filepath.FromSlash(dir)))
		if err != nil {
			t.Fatal(err)
		}
		md := 0
		for _, e := range ents {
			if !e.IsDir() {
				if !strings.HasSuffix(e.Name(), ".md") {
					t.Errorf("%s holds %s, which the pattern would not select", dir, e.Name())
				}
				md++
			}
		}
		if md != p.Want {
			t.Errorf("%s %s: %d documents, want %d", p.Category, p.Pattern, md, p.Want)
		}
	}
}

func TestVocabulary(t *testing.T) {
	c := generatedCorpus(t, 1000)
	words := vocabulary(c, 10)
	if len(words) < 20 || len(words) > 30 {
		t.Fatalf("%d words, want 20 to 30: %v", len(words), words)
	}
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] {
			t.Errorf("%q twice", w)
		}
		seen[w] = true
		if strings.IndexFunc(w, func(r rune) bool { return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) }) >= 0 {
			t.Errorf("CJK word %q", w)
		}
	}
}

func TestStripStamp(t *testing.T) {
	b := []byte("# Doc\n\ntext\n\nchurnstamp 12 34\n")
	if got := string(stripStamp(b, "\n\nchurnstamp ")); got != "# Doc\n\ntext" {
		t.Errorf("got %q", got)
	}
	if got := string(stripStamp([]byte("plain"), "\n\nchurnstamp ")); got != "plain" {
		t.Errorf("got %q", got)
	}
}

// TestListTreeAsGuideLists: the files a corpus's calls ask about are the documents guide
// lists — not what its ignore rules leave out, nor its files of rules and configuration.
func TestListTreeAsGuideLists(t *testing.T) {
	root := t.TempDir()
	for rel, content := range map[string]string{
		"README.md":         "# Read me",
		"docs/guide.md":     "# Guide",
		"docs/.gitignore":   "drafts/\n*.log\n",
		"docs/drafts/a.md":  "# Draft",
		"docs/run.log":      "log",
		"notes.md~":         "editor backup",
		".git/HEAD":         "ref: refs/heads/main",
		"guide.yaml":        "categories: {}\n",
		".guideignore":      "private/\n",
		"private/secret.md": "# Secret",
		"src/main.go":       "package main",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := realTree("t", root)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(c.Files)
	want := []string{"README.md", "docs/guide.md", "src/main.go"}
	if !slices.Equal(c.Files, want) {
		t.Errorf("listed %q, want %q", c.Files, want)
	}
}

// TestCatalogCaughtUpIgnoresTheIndexLag: the catalog has caught up once it applied the
// stream's last event after the first scan, however far behind the search index is (the
// status's lag counts the slowest projection).
func TestCatalogCaughtUpIgnoresTheIndexLag(t *testing.T) {
	idx := func(seq uint64) *index.State { return &index.State{AppliedSeq: seq} }
	for _, tc := range []struct {
		name            string
		st              query.Status
		catalog, search bool
	}{
		{"scanning", query.Status{InitialScanDone: false, AppliedSeq: 50, StreamLastSeq: 50, Index: idx(50)}, false, false},
		{"catalog behind", query.Status{InitialScanDone: true, AppliedSeq: 40, StreamLastSeq: 50, Lag: 10, Index: idx(10)}, false, false},
		{"index behind", query.Status{InitialScanDone: true, AppliedSeq: 50, StreamLastSeq: 50, Lag: 40, Index: idx(10)}, true, false},
		{"both", query.Status{InitialScanDone: true, AppliedSeq: 50, StreamLastSeq: 50, Index: idx(50)}, true, true},
		{"empty stream", query.Status{InitialScanDone: true}, false, false},
	} {
		if got := catalogCaughtUp(tc.st); got != tc.catalog {
			t.Errorf("%s: catalog caught up %v, want %v", tc.name, got, tc.catalog)
		}
		if got := searchable(tc.st); got != tc.search {
			t.Errorf("%s: searchable %v, want %v", tc.name, got, tc.search)
		}
	}
}

func TestParseBenchRate(t *testing.T) {
	out := "goos: linux\ngoarch: amd64\nBenchmarkRunnerCatchUp-2   \t       3\t1314725418 ns/op\t     38032 events/s\nPASS\nok  \tgithub.com/guide/guide/internal/projection\t12.3s\n"
	rate, runs, line, errText := parseBenchRate(out, "events/s")
	if rate != 38032 || runs != 3 || errText != "" || line != "BenchmarkRunnerCatchUp-2 3 1314725418 ns/op 38032 events/s" {
		t.Fatalf("got %v, %d, %q, %q", rate, runs, line, errText)
	}
	if _, _, _, errText := parseBenchRate("PASS\n", "events/s"); errText == "" {
		t.Fatal("no result line gave no error")
	}
}

// TestBuildBinaries: the harness builds the binaries it measures from the tree it runs in.
func TestBuildBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	root, err := filepath.Abs("../..")
	testkit.NoErr(t, err, "module root")
	t.Chdir(root)
	testkit.NoErr(t, buildBinaries(t.Context(), dir, "./tools/cmd/testsummary"), "build")
	st, err := os.Stat(filepath.Join(dir, "testsummary"))
	testkit.NoErr(t, err, "the binary built")
	if st.Mode()&0o111 == 0 {
		t.Fatalf("%s is not executable", st.Name())
	}
}
