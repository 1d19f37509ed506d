package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guide/guide/tools/stats"
)

// Block is one part of BENCHMARKS.md the harness writes, between its own markers, so
// that a run of some scenarios leaves the others' tables as they were.
type Block struct {
	Name     string // "" for the issue 2 block (cold, latency, restart)
	Markdown string
}

// Blocks renders every part this run measured.
func (r *Result) Blocks() []Block {
	var out []Block
	if len(r.Corpora) > 0 {
		out = append(out, Block{Markdown: r.Markdown()})
	}
	if len(r.Search) > 0 {
		out = append(out, Block{Name: "search", Markdown: r.searchMarkdown()})
	}
	if r.Content != nil {
		out = append(out, Block{Name: "content", Markdown: r.contentMarkdown()})
	}
	if r.Fresh != nil || r.Once != nil || r.Churn != nil || r.SplitErr != "" {
		out = append(out, Block{Name: "freshness", Markdown: r.freshMarkdown()})
	}
	return out
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// at100k qualifies a verdict on a corpus of another size than the target's.
func at100k(docs int, v string) string {
	if docs != 100_000 {
		return fmt.Sprintf("%s (on %d documents, not the target's 100k)", v, docs)
	}
	return v
}

func (r *Result) header(b *strings.Builder, what string, l Load) {
	fmt.Fprintf(b, "Measured by `make bench --scenarios %s` on %s (%d CPUs, %s); %s.\n\n",
		what, r.Machine.Date, r.Machine.CPUs, r.Machine.Go, l)
}

func targetTable(b *strings.Builder, title string, ts []Target) {
	fmt.Fprintf(b, "### %s\n\n| target | goal | measured | |\n|---|---|---|---|\n", title)
	for _, t := range ts {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.What, t.Goal, t.Measured, t.Met)
	}
	b.WriteString("\n")
}

func latencyRows(b *strings.Builder, ls ...Latency) {
	b.WriteString("| what | call | n | errors | p50 | p95 | p99 | max | note |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, l := range ls {
		if l.Err != "" {
			fmt.Fprintf(b, "| %s | %s | | | | | | | not measured: %s |\n", l.Server, l.Op, l.Err)
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", l.Server, l.Op, l.N, l.Errors,
			fmtDur(l.P50), fmtDur(l.P95), fmtDur(l.P99), fmtDur(l.Max), l.Note)
	}
	b.WriteString("\n")
}

func (r *Result) searchMarkdown() string {
	var b strings.Builder
	l := Load{Before: r.Search[0].Load.Before, After: r.Search[len(r.Search)-1].Load.After}
	r.header(&b, "search", l)
	var ts []Target
	for _, s := range r.Search {
		name := s.Corpus.Name
		if s.Err != "" {
			ts = append(ts, Target{What: "search on " + name, Goal: "", Measured: "failed: " + s.Err, Met: "not measured"})
			continue
		}
		p95 := Target{What: "search p95 through MCP (stdio), " + name, Goal: "≤ 10 ms", Measured: fmtDur(s.Guide.P95),
			Met: verdict(s.Guide.P95 <= 10*time.Millisecond && s.Guide.Errors == 0)}
		ratio := Target{What: "search vs `rg -l -w -i -F`, median of per-word ratios, " + name, Goal: "≥ 100×",
			Measured: fmt.Sprintf("%.0f×", s.Ratio), Met: verdict(s.Ratio >= 100)}
		size := Target{What: "index size / corpus size, " + name, Goal: "≤ 3×",
			Measured: fmt.Sprintf("%.2f× (%s / %s)", float64(s.IndexBytes)/float64(s.Corpus.Bytes), fmtMB(s.IndexBytes), fmtMB(s.Corpus.Bytes)),
			Met:      verdict(s.IndexBytes <= 3*s.Corpus.Bytes)}
		if s.Corpus.Generated {
			p95.Met, ratio.Met, size.Met = at100k(len(s.Corpus.Files), p95.Met), at100k(len(s.Corpus.Files), ratio.Met), at100k(len(s.Corpus.Files), size.Met)
		}
		ts = append(ts, p95, ratio, size)
	}
	targetTable(&b, "Targets (issue 4: search)", ts)
	for _, s := range r.Search {
		if s.Err != "" {
			continue
		}
		c := s.Corpus
		fmt.Fprintf(&b, "#### search: %s\n\n%d files, %s. %s.\n\n", c.Name, len(c.Files), fmtMB(c.Bytes), s.Load)
		fmt.Fprintf(&b, "| indexing (empty data directory, warm page cache) | documents | time | documents/s | MB/s | note |\n|---|---:|---:|---:|---:|---|\n")
		fmt.Fprintf(&b, "| %s | %d | %s | %.0f | %.1f | %s |\n\n", s.Index.What, s.Index.Docs, fmtDur(s.Index.Duration),
			s.Index.DocsPerSec(), s.Index.MBPerSec(), s.Index.Note)
		fmt.Fprintf(&b, "Index `<data>/query/index`: %s for %s of documents (%.2f×). Query process RSS: %s after indexing, %s after the searches; peak %s.\n\n",
			fmtMB(s.IndexBytes), fmtMB(c.Bytes), float64(s.IndexBytes)/float64(c.Bytes), fmtMiB(s.RSS), fmtMiB(s.RSSAfter), fmtMiB(s.Peak))
		latencyRows(&b, s.Guide, s.RG)
		fmt.Fprintf(&b, "Per word (guide: median of %d searches, default limit 20; rg: one run each, after a warm-up run; ratio = rg / guide):\n\n", s.Reps)
		b.WriteString("| word | band | rg files | guide total | guide p50 | rg | ratio |\n|---|---|---:|---:|---:|---:|---:|\n")
		words := slices.Clone(s.Words)
		slices.SortStableFunc(words, func(a, b WordResult) int { return a.RGDocs - b.RGDocs })
		for _, w := range words {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %.0f× |\n", w.Word, w.Band, w.RGDocs, w.GuideTotal, fmtDur(w.GuideP50), fmtDur(w.RG), w.Ratio)
		}
		b.WriteString("\nBands by rg's share of files: rare < 1%, medium < 20%, common ≥ 20%. guide's total can exceed rg's count: English words also match their other forms (docs/search.md).\n\n")
	}
	return b.String()
}

func (r *Result) contentMarkdown() string {
	var b strings.Builder
	c := r.Content
	r.header(&b, "content", c.Load)
	t := Target{What: "get_content of a pattern matching 10 documents, p95 through MCP (stdio), " + c.Corpus.Name, Goal: "≤ 5 ms",
		Measured: "—", Met: "not measured"}
	if c.Err == "" && c.Guide.N > 0 {
		t.Measured = fmtDur(c.Guide.P95)
		t.Met = at100k(len(c.Corpus.Files), verdict(c.Guide.P95 <= 5*time.Millisecond && c.Guide.Errors == 0))
		if c.Ratio > 0 {
			t.Measured += fmt.Sprintf("; reference server p50 / guide p50 = %.1f×", c.Ratio)
		}
	} else if c.Err != "" {
		t.Measured = "failed: " + c.Err
	}
	targetTable(&b, "Targets (issue 3: get_content)", []Target{t})
	if c.Err != "" {
		return b.String()
	}
	var ps []string
	for _, p := range c.Patterns {
		ps = append(ps, fmt.Sprintf("`%s` `%s`", p.Category, p.Pattern))
	}
	fmt.Fprintf(&b, "%d files, %s; no guide.yaml, so every top-level folder is a category (`**/*`). %d patterns, each selecting exactly 10 documents (counted from the corpus, asserted through get_content before timing), called in turn: %s.\n\n",
		len(c.Corpus.Files), fmtMB(c.Corpus.Bytes), len(c.Patterns), strings.Join(ps, ", "))
	latencyRows(&b, c.Guide, c.FS)
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "- Note: %s\n", n)
	}
	if len(c.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

func (r *Result) freshMarkdown() string {
	var b strings.Builder
	l := Load{Before: "?", After: "?"}
	switch {
	case r.Once != nil:
		l.Before = r.Once.Load.Before
	case r.Fresh != nil:
		l.Before = r.Fresh.Load.Before
	case r.Churn != nil:
		l.Before = r.Churn.Load.Before
	}
	switch {
	case r.Churn != nil:
		l.After = r.Churn.Load.After
	case r.Fresh != nil:
		l.After = r.Fresh.Load.After
	case r.Once != nil:
		l.After = r.Once.Load.After
	}
	var names []string
	for _, x := range []struct {
		name string
		ran  bool
	}{{ScenarioFresh, r.Fresh != nil}, {ScenarioOnce, r.Once != nil}, {ScenarioChurn, r.Churn != nil}} {
		if x.ran {
			names = append(names, x.name)
		}
	}
	r.header(&b, strings.Join(names, ","), l)
	var ts []Target
	if f := r.Fresh; f != nil {
		for _, x := range []Latency{f.View, f.Search} {
			ts = append(ts, Target{What: x.Op + " (split mode, " + f.Corpus.Name + ")", Goal: "p50 ≤ 50 ms, p95 ≤ 150 ms",
				Measured: fmt.Sprintf("p50 %s, p95 %s (%d samples, %d timed out)", fmtDur(x.P50), fmtDur(x.P95), x.N, x.Errors),
				Met:      verdict(x.N > 0 && x.Errors == 0 && x.P50 <= 50*time.Millisecond && x.P95 <= 150*time.Millisecond)})
		}
	}
	if o := r.Once; o != nil && len(o.Runs) > 0 {
		m := medianOnce(o.Runs)
		worst := slices.MaxFunc(o.Runs, func(a, b OnceRun) int { return int(a.Duration - b.Duration) })
		pub := 0
		for _, x := range o.Runs {
			pub += x.Published + x.Deleted
		}
		ts = append(ts, Target{What: "indexer --once with nothing changed, " + o.Corpus.Name, Goal: "≤ 2 s and 0 events",
			Measured: fmt.Sprintf("median %s, worst %s; %d events published in %d runs", fmtDur(m.Duration), fmtDur(worst.Duration), pub, len(o.Runs)),
			Met:      at100k(len(o.Corpus.Files), verdict(worst.Duration <= 2*time.Second && pub == 0 && worst.Err == ""))})
	}
	if c := r.Churn; c != nil {
		maxLag := time.Duration(0)
		if len(c.TimeLag) > 0 {
			maxLag = slices.Max(c.TimeLag)
		}
		ok := c.Samples > 0 && maxLag <= time.Second && c.CatchUpErr == ""
		ts = append(ts, Target{What: fmt.Sprintf("%d writes/s for %s: query process never more than 1 s behind (split mode, %s)", c.Rate, c.For, c.Corpus.Name),
			Goal: "max lag ≤ 1 s", Measured: fmt.Sprintf("max %s, p99 %s over %d samples; %d writes at %.0f/s",
				fmtDur(maxLag), fmtDur(stats.Percentile(c.TimeLag, 99)), c.Samples, c.Writes, float64(c.Writes)/max(c.WriteTime.Seconds(), 1e-9)),
			Met: verdict(ok)})
	}
	targetTable(&b, "Targets (issue 5: freshness and CI)", ts)
	if r.SplitErr != "" {
		fmt.Fprintf(&b, "- Split mode did not start: %s\n\n", r.SplitErr)
	}
	if f := r.Fresh; f != nil {
		fmt.Fprintf(&b, "#### fresh: a saved file, in split mode (%s)\n\n", f.Corpus.Name)
		fmt.Fprintf(&b, "`bin/indexer --root COPY --data D --listen 127.0.0.1:PORT` (embedded NATS on a free loopback port, watching) and `bin/guide-mcp --nats nats://127.0.0.1:PORT --data Q` over stdio; first scan applied by the index %s after the indexer was spawned. "+
			"Each sample writes a unique token into a random document (os.WriteFile) and polls view (until its content holds the token) and search (until it finds the token), ~1 ms apart. %s.\n\n", fmtDur(f.Setup), f.Load)
		latencyRows(&b, f.View, f.Search)
		if len(f.Rescan) > 0 {
			b.WriteString("Baseline, what a tool without a watcher needs: a full re-scan after one file changed, `bin/indexer --once --json --root COPY --nats URL` against the same running NATS, whole process:\n\n")
			b.WriteString("| run | time | documents | read | published | note |\n|---|---:|---:|---:|---:|---|\n")
			for i, x := range f.Rescan {
				fmt.Fprintf(&b, "| %d | %s | %d | %d | %d | %s |\n", i+1, fmtDur(x.Duration), x.Documents, x.Read, x.Published, errText(x.Err))
			}
			fmt.Fprintf(&b, "\nMedian re-scan %s against the watcher's view p50 %s. (The running indexer's watcher may publish the change before the re-scan reaches the file, so the re-scan can publish 0.)\n\n",
				fmtDur(medianOnce(f.Rescan).Duration), fmtDur(f.View.P50))
		}
	}
	if o := r.Once; o != nil {
		fmt.Fprintf(&b, "#### once: `indexer --once --json` with nothing changed (%s)\n\n", o.Corpus.Name)
		fmt.Fprintf(&b, "Store: %s. Whole process: start, embedded NATS recovering the stream, walk, compare, exit. %s.\n\n", o.Store, o.Load)
		b.WriteString("| what | time | documents | read | published | note |\n|---|---:|---:|---:|---:|---|\n")
		if o.Initial != nil {
			fmt.Fprintf(&b, "| first run, empty store (not a target) | %s | %d | %d | %d | %s |\n", fmtDur(o.Initial.Duration), o.Initial.Documents, o.Initial.Read, o.Initial.Published, errText(o.Initial.Err))
		}
		for i, x := range o.Runs {
			fmt.Fprintf(&b, "| indexer --once, nothing changed, run %d | %s | %d | %d | %d | reported %d ms inside the process%s |\n",
				i+1, fmtDur(x.Duration), x.Documents, x.Read, x.Published, x.Millis, prefixNote(errText(x.Err)))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | | | |\n", o.Walk.What, fmtDur(o.Walk.Duration), o.Walk.Docs)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | | for scale: what a re-scan that reads every file pays |\n\n", o.Hash.What, fmtDur(o.Hash.Duration), o.Hash.Docs, o.Hash.Docs)
	}
	if c := r.Churn; c != nil {
		fmt.Fprintf(&b, "#### churn: %d writes/s for %s, split mode (%s)\n\n", c.Rate, c.For, c.Corpus.Name)
		fmt.Fprintf(&b, "Writes go round-robin over the documents, each appending `churnstamp SEQ UNIXNANO`; bounded at %d writes and %s. Every 100 ms the harness reads `guide://_status` (lag in events: `stream_last_seq − applied_seq` for the catalog and for the index) and finds, with `view` and bisection over its write log, the oldest write the query process does not show yet (lag in time: its age when view did not show it). %s.\n\n",
			int(float64(c.Rate)*c.For.Seconds()), c.For+5*time.Second, c.Load)
		rate := float64(c.Writes) / max(c.WriteTime.Seconds(), 1e-9)
		b.WriteString("| measure | value |\n|---|---:|\n")
		fmt.Fprintf(&b, "| writes made | %d in %s (%.0f/s) |\n", c.Writes, fmtDur(c.WriteTime), rate)
		fmt.Fprintf(&b, "| status samples | %d (%d failed) |\n", c.Samples, c.SampleErrs)
		fmt.Fprintf(&b, "| lag in time (oldest write not shown by view): p50 / p99 / max | %s / %s / %s |\n", fmtDur(stats.Percentile(c.TimeLag, 50)), fmtDur(stats.Percentile(c.TimeLag, 99)), fmtDur(stats.Percentile(c.TimeLag, 100)))
		fmt.Fprintf(&b, "| catalog lag in events: p50 / p99 / max | %d / %d / %d |\n", stats.Percentile(c.CatalogLag, 50), stats.Percentile(c.CatalogLag, 99), stats.Percentile(c.CatalogLag, 100))
		fmt.Fprintf(&b, "| index lag in events: p50 / p99 / max | %d / %d / %d |\n", stats.Percentile(c.IndexLag, 50), stats.Percentile(c.IndexLag, 99), stats.Percentile(c.IndexLag, 100))
		catch := fmtDur(c.CatchUp)
		if c.CatchUpErr != "" {
			catch = c.CatchUpErr
		}
		fmt.Fprintf(&b, "| last write to caught up (view shows it, index at stream_last_seq) | %s |\n\n", catch)
		if r.Fresh != nil && len(r.Fresh.Rescan) > 0 {
			fmt.Fprintf(&b, "Baseline: a tool that re-scans instead of watching is at least one re-scan behind: %s here (fresh, above).\n\n", fmtDur(medianOnce(r.Fresh.Rescan).Duration))
		}
	}
	return b.String()
}

func errText(s string) string {
	if s == "" {
		return ""
	}
	return "error: " + s
}

// blockMarkers are the markers of a named block.
func blockMarkers(name string) (begin, end string) {
	if name == "" {
		return BeginMarker, EndMarker
	}
	return "<!-- guide-bench " + name + ": begin (written by make bench; edits here are lost) -->",
		"<!-- guide-bench " + name + ": end -->"
}

// SpliceBlock puts a named block into doc between its markers, or appends it.
func SpliceBlock(doc string, blk Block) string {
	begin, end := blockMarkers(blk.Name)
	block := begin + "\n" + blk.Markdown + end + "\n"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		if doc == "" {
			doc = "# Benchmarks\n\n"
		}
		return strings.TrimRight(doc, "\n") + "\n\n" + block
	}
	rest := strings.TrimLeft(doc[j+len(end):], "\n")
	if rest != "" {
		rest = "\n" + rest
	}
	return doc[:i] + block + rest
}
