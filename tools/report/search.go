package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SearchResult is the search scenario on one corpus.
type SearchResult struct {
	Corpus *Corpus
	// Index is spawn to the moment the full-text index applied the whole first scan;
	// Catalog is when the catalog got there.
	Index      IndexRun
	Catalog    time.Duration
	IndexBytes int64 // <data>/query/index on disk
	RSS, Peak  int64 // the query process after indexing and after the searches
	RSSAfter   int64
	Words      []WordResult
	Guide      Latency // every search call
	// GuideSDK is the same words searched through the official TypeScript SDK's client.
	GuideSDK Latency
	// Sentences are queries written as sentences, as agents paste them: each searched
	// Reps times (a known sentence of the corpus's own words, not compared with rg).
	Sentences     []SentenceResult
	GuideSentence Latency
	// Floor is view of a document whose answer is as large as a search's, through the
	// same client, interleaved with the searches: the cost of an answer that size alone.
	Floor Latency
	RG    Latency // every rg run
	Ratio float64 // median over words of rg time / guide median time
	Reps  int
	Load  Load
	Err   string
}

// WordResult is one word of the list: how many documents each side found and how fast.
type WordResult struct {
	Word       string
	Band       string // rare, medium or common, by the share of documents rg finds it in
	RGDocs     int
	GuideTotal int
	GuideP50   time.Duration
	RG         time.Duration
	Ratio      float64
}

// SentenceResult is one sentence searched: how many documents match and how fast.
type SentenceResult struct {
	Sentence   string
	GuideTotal int
	GuideP50   time.Duration
	GuideMax   time.Duration
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
		p50 := Target{What: "search p50 through MCP (stdio), " + name, Goal: "≤ 2 ms", Measured: FormatDuration(s.Guide.P50) + sdkNote(s.GuideSDK) + floorNote(s.Floor),
			Met: verdict(s.Guide.P50 <= 2*time.Millisecond && s.Guide.Errors == 0)}
		p95 := Target{What: "search p95 through MCP (stdio), " + name, Goal: "≤ 10 ms", Measured: FormatDuration(s.Guide.P95),
			Met: verdict(s.Guide.P95 <= 10*time.Millisecond && s.Guide.Errors == 0)}
		ratio := Target{What: "search vs `rg -l -w -i -F`, median of per-word ratios, " + name, Goal: "≥ 100×",
			Measured: fmt.Sprintf("%.0f×", s.Ratio), Met: verdict(s.Ratio >= 100)}
		size := Target{What: "index size / corpus size, " + name, Goal: "≤ 3×",
			Measured: fmt.Sprintf("%.2f× (%s / %s)", float64(s.IndexBytes)/float64(s.Corpus.Bytes), FormatMB(s.IndexBytes), FormatMB(s.Corpus.Bytes)),
			Met:      verdict(s.IndexBytes <= 3*s.Corpus.Bytes)}
		if s.Corpus.Generated {
			n := len(s.Corpus.Files)
			p50.Met, p95.Met, ratio.Met, size.Met = at100k(n, p50.Met), at100k(n, p95.Met), at100k(n, ratio.Met), at100k(n, size.Met)
			ts = append(ts, p50) // the goal is the generated 100k's
		}
		ts = append(ts, p95, ratio, size)
	}
	targetTable(&b, "Targets (search)", ts)
	for _, s := range r.Search {
		if s.Err != "" {
			continue
		}
		c := s.Corpus
		fmt.Fprintf(&b, "#### search: %s\n\n%d files, %s. %s.\n\n", c.Name, len(c.Files), FormatMB(c.Bytes), s.Load)
		fmt.Fprintf(&b, "| indexing (empty data directory, warm page cache) | documents | time | documents/s | MB/s | note |\n|---|---:|---:|---:|---:|---|\n")
		fmt.Fprintf(&b, "| %s | %d | %s | %.0f | %.1f | %s |\n\n", s.Index.What, s.Index.Docs, FormatDuration(s.Index.Duration),
			s.Index.DocsPerSec(), s.Index.MBPerSec(), s.Index.Note)
		fmt.Fprintf(&b, "Index `<data>/query/index`: %s for %s of documents (%.2f×). Query process RSS: %s after indexing, %s after the searches; peak %s.\n\n",
			FormatMB(s.IndexBytes), FormatMB(c.Bytes), float64(s.IndexBytes)/float64(c.Bytes), fmtMiB(s.RSS), fmtMiB(s.RSSAfter), fmtMiB(s.Peak))
		rows := []Latency{s.Guide}
		if s.GuideSDK.Server != "" {
			rows = append(rows, s.GuideSDK)
		}
		if s.Floor.Server != "" {
			rows = append(rows, s.Floor)
		}
		latencyRows(&b, append(rows, s.RG)...)
		var about []string
		if s.GuideSDK.Server != "" {
			about = append(about, "The first row is mcp-go's stdio client, as every other figure here; the official TypeScript SDK's row is the same words through its stdio client (node), a second client of the same owner.")
		}
		if s.Floor.Server != "" {
			about = append(about, "The view row is the floor under a search: a document whose answer is as large as a search's, viewed through the same client after each search, so that both share the machine's conditions.")
		}
		if len(about) > 0 {
			b.WriteString(strings.Join(about, " ") + "\n\n")
		}
		fmt.Fprintf(&b, "Per word (guide: median of %d searches, default limit 20; rg: one run each, after a warm-up run; ratio = rg / guide):\n\n", s.Reps)
		b.WriteString("| word | band | rg files | guide total | guide p50 | rg | ratio |\n|---|---|---:|---:|---:|---:|---:|\n")
		words := slices.Clone(s.Words)
		slices.SortStableFunc(words, func(a, b WordResult) int { return a.RGDocs - b.RGDocs })
		for _, w := range words {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %.0f× |\n", w.Word, w.Band, w.RGDocs, w.GuideTotal, FormatDuration(w.GuideP50), FormatDuration(w.RG), w.Ratio)
		}
		b.WriteString("\nBands by rg's share of files: rare < 1%, medium < 20%, common ≥ 20%. guide's total can exceed rg's count: English words also match their other forms, and a word naming a folder matches the documents in it (README, Search).\n\n")
		if len(s.Sentences) > 0 {
			fmt.Fprintf(&b, "Sentences (a document matches when it holds one of the words; %d searches each, default limit 20):\n\n", s.Reps)
			latencyRows(&b, s.GuideSentence)
			b.WriteString("| sentence | guide total | guide p50 | guide max |\n|---|---:|---:|---:|\n")
			for _, x := range s.Sentences {
				fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", x.Sentence, x.GuideTotal, FormatDuration(x.GuideP50), FormatDuration(x.GuideMax))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// floorNote gives the p50 of an answer as large as a search's with no search behind it.
func floorNote(l Latency) string {
	if l.Server == "" || l.Errors > 0 || l.N == 0 {
		return ""
	}
	return fmt.Sprintf("; a view answer of the same size, no search: %s", FormatDuration(l.P50))
}

// sdkNote gives the official TypeScript SDK client's p50 beside mcp-go's, when measured.
func sdkNote(l Latency) string {
	if l.Server == "" || l.Err != "" || l.N == 0 {
		return ""
	}
	return fmt.Sprintf(" (official TypeScript SDK client: %s)", FormatDuration(l.P50))
}
