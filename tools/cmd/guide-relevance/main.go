// Command guide-relevance scores guide's search beside SQLite FTS5's BM25 on known-item
// sets built from public text on this machine: npm packages' READMEs (installed with npm
// ci from the pinned list in tools/relevance/npm) and the Go toolchain's package
// documentation. It prints the figures, puts them into BENCHMARKS.json as the relevance
// area's record and renders BENCHMARKS.md from that file; with -fixture it also rewrites
// the figures of the small set `make test` renders and checks (TestKnownItem).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guide/guide/tools/bench"
	"github.com/guide/guide/tools/relevance"
	"github.com/guide/guide/tools/report"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "guide-relevance:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("guide-relevance", flag.ContinueOnError)
	dir := fs.String("dir", ".bench/relevance", "work directory: the npm packages and the projections")
	npm := fs.Bool("npm", true, "build the npm set (installs the pinned packages with npm ci)")
	goroot := fs.String("goroot", "", "Go root whose package docs make the Go sets (default: go env GOROOT; \"-\" for none)")
	maxFunc := fs.Int("max-func", 400, "function queries of the go-func set")
	out := fs.String("out", "", "also write the figures to this JSON file (\"\" for none)")
	fixture := fs.String("fixture", "", "also measure the small fixture `make test` renders from the Go sets and write its figures, under the toolchain's Go version, to FOLDER/figures.json (testdata/relevance/known-item)")
	misses := fs.Int("misses", 0, "print this many queries per set whose answer guide ranked below first")
	only := fs.String("set", "", "only the sets of these names, comma-separated")
	results := fs.String("results", report.ResultsFile, "put the relevance record into this results file (\"\" for none)")
	markdown := fs.String("benchmarks", report.MarkdownFile, "render this Markdown file from the results (\"\" for none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	machine := bench.ReadMachine()
	load := bench.LoadAverage()
	var sets []*relevance.Set
	if *npm {
		cache := filepath.Join(*dir, "npm")
		if err := relevance.InstallNPM(".", cache); err != nil {
			return err
		}
		s, err := relevance.NPM(cache)
		if err != nil {
			return err
		}
		sets = append(sets, s)
	}
	if *goroot != "-" {
		if *goroot == "" {
			b, err := exec.Command("go", "env", "GOROOT").Output()
			if err != nil {
				return fmt.Errorf("go env GOROOT: %w", err)
			}
			*goroot = strings.TrimSpace(string(b))
		}
		syn, fn, err := relevance.GoDoc(*goroot, *maxFunc)
		if err != nil {
			return err
		}
		sets = append(sets, syn, fn)
	}
	if *only != "" {
		names := strings.Split(*only, ",")
		sets = slices.DeleteFunc(sets, func(s *relevance.Set) bool { return !slices.Contains(names, s.Name) })
	}
	if *fixture != "" {
		if err := writeFixtureFigures(ctx, *fixture, *goroot, *dir); err != nil {
			return err
		}
	}
	fts5 := relevance.HasFTS5()
	if !fts5 {
		fmt.Fprintln(os.Stderr, "guide-relevance: python3's sqlite3 has no FTS5 here; guide's figures only")
	}
	var figs relevance.Figures
	fmt.Printf("%-12s %6s %7s  %-26s  %-26s\n", "set", "docs", "queries", "guide R@1 R@10 MRR@10", "FTS5 R@1 R@10 MRR@10")
	for _, s := range sets {
		f, ranked, err := relevance.Evaluate(ctx, s, filepath.Join(*dir, "data", s.Name), fts5)
		if err != nil {
			return err
		}
		figs.Sets = append(figs.Sets, f)
		line := fmt.Sprintf("%-12s %6d %7d  %.3f %.3f %.3f", f.Name, f.Docs, f.Queries, f.Guide.RecallAt1, f.Guide.RecallAt10, f.Guide.MRR)
		if f.FTS5 != nil {
			line += fmt.Sprintf("         %.3f %.3f %.3f", f.FTS5.RecallAt1, f.FTS5.RecallAt10, f.FTS5.MRR)
		}
		if f.Sections != nil {
			line += fmt.Sprintf("   sections named %.3f", *f.Sections)
		}
		fmt.Println(line)
		shown := 0
		for i, q := range s.Queries {
			if shown >= *misses {
				break
			}
			if r := slices.Index(ranked[i], q.Answer); r != 0 {
				shown++
				fmt.Printf("    miss %q → %s at %d; top %v\n", q.Text, q.Answer, r+1, ranked[i][:min(3, len(ranked[i]))])
			}
		}
	}
	if *out != "" {
		if err := write(*out, figs); err != nil {
			return err
		}
	}
	if *results == "" && *markdown == "" {
		return nil
	}
	rec := relevance.Record(figs)
	rec.Date, rec.Machine, rec.Commit = machine.Date, machine, bench.GitCommit()
	rec.Load = report.Load{Before: load, After: bench.LoadAverage()}
	rec.Command = "go run ./tools/cmd/guide-relevance"
	for _, a := range args {
		rec.Command += " " + a
	}
	rec.Notes = append(rec.Notes, fmt.Sprintf("FTS5: python3's sqlite3, %s.", sqliteVersion()))
	if !fts5 {
		rec.Notes = append(rec.Notes, "python3's sqlite3 has no FTS5 here: guide's figures only.")
	}
	return report.Update(*results, *markdown, rec)
}

func sqliteVersion() string {
	b, err := exec.Command("python3", "-c", "import sqlite3; print(sqlite3.sqlite_version)").Output()
	if err != nil {
		return "?"
	}
	return "SQLite " + strings.TrimSpace(string(b))
}

func write(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// writeFixtureFigures measures the fixture TestKnownItem renders from goroot's sources and
// puts its figures, under goroot's Go version, into dir/figures.json.
func writeFixtureFigures(ctx context.Context, dir, goroot, work string) error {
	if goroot == "-" {
		return fmt.Errorf("-fixture needs the Go sets (-goroot)")
	}
	version, sets, err := relevance.GoFixture(goroot)
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "figures.json")
	committed := relevance.FixtureFigures{}
	if b, err := os.ReadFile(file); err == nil {
		if err := json.Unmarshal(b, &committed); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	var figs relevance.Figures
	for _, s := range sets {
		f, _, err := relevance.Evaluate(ctx, s, filepath.Join(work, "data", "fixture-"+s.Name), relevance.HasFTS5())
		if err != nil {
			return err
		}
		figs.Sets = append(figs.Sets, f)
	}
	committed[version] = figs
	return write(file, committed)
}
