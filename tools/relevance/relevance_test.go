package relevance_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/relevance"
	"github.com/guide/guide/tools/report"
)

// fixtureFile holds the known-item fixture's committed figures, by Go version.
const fixtureFile = "../../testdata/relevance/known-item/figures.json"

// TestKnownItem scores search on the known-item fixture — every fifth Go package's
// documentation page, with the synopsis and function-sentence queries that name it,
// rendered from the sources of the toolchain running the test ($(go env GOROOT)/src) —
// and fails when a figure falls below the one committed for that toolchain's version, so
// that a change in ranking shows in review. Another version's sources render other pages:
// the test skips on a version without committed figures. With -update it writes the
// figures measured under the version, FTS5's beside them when python3's sqlite3 has FTS5.
// `make bench` runs the full sets (tools/cmd/guide-relevance).
func TestKnownItem(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	testkit.NoErr(t, err, "go env GOROOT")
	version, sets, err := relevance.GoFixture(strings.TrimSpace(string(out)))
	testkit.NoErr(t, err, "render the fixture from the toolchain's sources")
	if len(sets) == 0 || len(sets[0].Docs) == 0 {
		t.Fatal("no documents or query sets rendered")
	}
	committed := relevance.FixtureFigures{}
	if b, err := os.ReadFile(fixtureFile); err == nil {
		testkit.NoErr(t, json.Unmarshal(b, &committed), "decode figures")
	} else if !testkit.Updating() {
		t.Fatalf("read committed figures (run with -update to create them): %v", err)
	}
	want, ok := committed[version]
	if !ok && !testkit.Updating() {
		t.Skipf("no figures committed for %s's sources (committed: %v): run with -update to add them", version, slices.Sorted(maps.Keys(committed)))
	}
	var got relevance.Figures
	fts5 := testkit.Updating() && relevance.HasFTS5()
	for _, s := range sets {
		f, _, err := relevance.Evaluate(testkit.Context(t), s, t.TempDir(), fts5)
		testkit.NoErr(t, err, "evaluate "+s.Name)
		got.Sets = append(got.Sets, f)
		t.Logf("%s (%s): %d queries over %d documents: recall@1 %.3f, recall@10 %.3f, MRR@10 %.3f",
			f.Name, version, f.Queries, f.Docs, f.Guide.RecallAt1, f.Guide.RecallAt10, f.Guide.MRR)
	}
	if testkit.Updating() {
		committed[version] = got
		b, _ := json.MarshalIndent(committed, "", "  ")
		testkit.NoErr(t, os.WriteFile(fixtureFile, append(b, '\n'), 0o644), "write figures")
		return
	}
	if len(got.Sets) != len(want.Sets) {
		t.Fatalf("%d sets measured, %d committed: run with -update", len(got.Sets), len(want.Sets))
	}
	for i, g := range got.Sets {
		w := want.Sets[i]
		if g.Name != w.Name || g.Queries != w.Queries || g.Docs != w.Docs {
			t.Errorf("set %s (%d queries, %d docs) was measured as %s (%d, %d): run with -update", g.Name, g.Queries, g.Docs, w.Name, w.Queries, w.Docs)
			continue
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"recall@1", g.Guide.RecallAt1, w.Guide.RecallAt1}, {"recall@10", g.Guide.RecallAt10, w.Guide.RecallAt10}, {"MRR@10", g.Guide.MRR, w.Guide.MRR}} {
			if c.got < c.want {
				t.Errorf("%s: %s fell to %.3f from the committed %.3f", g.Name, c.name, c.got, c.want)
			} else if c.got > c.want {
				t.Logf("%s: %s rose to %.3f from the committed %.3f: run with -update to commit it", g.Name, c.name, c.got, c.want)
			}
		}
		if w.Sections != nil && (g.Sections == nil || *g.Sections < *w.Sections) {
			t.Errorf("%s: fewer hits name the query's section than the committed %.3f", g.Name, *w.Sections)
		}
	}
}

// TestScore: recall and MRR at 10 from ranked lists.
func TestScore(t *testing.T) {
	qs := []relevance.Query{{Answer: "a"}, {Answer: "b"}, {Answer: "c"}, {Answer: "d"}}
	ranked := [][]string{{"a", "x"}, {"x", "b"}, {"x", "x", "x", "x", "x", "x", "x", "x", "x", "x", "c"}, nil}
	testkit.Equal(t, relevance.Score(qs, ranked), relevance.Scores{RecallAt1: 0.25, RecallAt10: 0.5, MRR: 0.375}, "scores")
}

// TestRecord: the relevance record of a run, as BENCHMARKS.md shows it with its targets.
func TestRecord(t *testing.T) {
	sec := 0.9
	f := relevance.Figures{Sets: []relevance.SetFigures{
		{Name: "npm", About: "set a", Docs: 10, Queries: 20, Guide: relevance.Scores{RecallAt1: 0.9, RecallAt10: 1, MRR: 0.95},
			FTS5: &relevance.Scores{RecallAt1: 0.8, RecallAt10: 1, MRR: 0.9}, Sections: &sec},
		{Name: "go-func", About: "set b", Docs: 5, Queries: 5, Guide: relevance.Scores{RecallAt1: 0.5, RecallAt10: 0.8, MRR: 0.6},
			FTS5: &relevance.Scores{RecallAt1: 0.6, RecallAt10: 0.9, MRR: 0.7}},
	}}
	rec := relevance.Record(f)
	rec.Date, rec.Command, rec.Machine, rec.Load = "2026-11-25 10:00 UTC", "go run ./tools/cmd/guide-relevance", report.Machine{CPUs: 2}, report.Load{Before: "0.10, 0.20, 0.30"}
	var res report.Results
	res.Put(rec)
	testkit.Golden(t, "testdata/record.golden", []byte(report.RenderRecords(&res)))
}

// TestRecordHoldsWhatTheTargetsRead: a run of every set has every metric the relevance
// targets read.
func TestRecordHoldsWhatTheTargetsRead(t *testing.T) {
	var f relevance.Figures
	for _, name := range []string{"npm", "go-synopsis", "go-func"} {
		f.Sets = append(f.Sets, relevance.SetFigures{Name: name, Guide: relevance.Scores{MRR: 0.9}, FTS5: &relevance.Scores{MRR: 0.8}})
	}
	rec := relevance.Record(f)
	for _, tg := range report.Targets {
		if tg.Area != rec.Area {
			continue
		}
		for _, k := range append(tg.Baseline, tg.Goal.Metric) {
			if _, ok := rec.Metrics[k]; !ok {
				t.Errorf("%s: no metric %q", tg.What, k)
			}
		}
		for _, g := range tg.Also {
			if _, ok := rec.Metrics[g.Metric]; !ok {
				t.Errorf("%s: no metric %q", tg.What, g.Metric)
			}
		}
	}
}
