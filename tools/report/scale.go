package report

import (
	"fmt"
	"strings"
	"time"
)

// ScaleResult is the opt-in scale scenario: the same measures on generated corpora of
// growing size (10k, 100k, 1M), each indexed from an empty data directory.
type ScaleResult struct {
	Runs  []ScaleRun
	Reps  int // searches of each word
	Load  Load
	Notes []string
}

// ScaleRun is one corpus of the scale scenario.
type ScaleRun struct {
	Corpus *Corpus
	// Searchable is the time from spawn until the search index applied the first scan;
	// Catalog until the catalog had.
	Searchable, Catalog time.Duration
	RSS                 int64 // the process's resident memory then, in bytes
	// Settled is its resident memory once the idle index has merged, before the searches:
	// what the process keeps after the catch-up (it hands back the catch-up's garbage).
	Settled int64
	Disk    int64   // the data directory then, in bytes
	Search  Latency // search(word) through the stdio client
	Words   int
	// Bleve is the engine alone indexing the same files (baseline): the floor of its time.
	Bleve IndexRun
	Err   string
}

// Goals of the scale scenario, asked of 1M documents against the same run's 100k.
const (
	scaleGrowth    = 10.5 // time to searchable and disk, × the 100k figure
	scaleRSSGoal   = 2e9
	scaleSearchP95 = 20 * time.Millisecond
)

// run returns the run of n documents, if it was measured.
func (s *ScaleResult) run(n int) (ScaleRun, bool) {
	for _, r := range s.Runs {
		if r.Corpus != nil && len(r.Corpus.Files) == n && r.Err == "" {
			return r, true
		}
	}
	return ScaleRun{}, false
}

// Targets are the scale goals: 1M documents against 100k in the same run.
func (s *ScaleResult) Targets() []Target {
	ts := []Target{
		{What: "time to searchable, 1M generated documents", Goal: fmt.Sprintf("≤ %.1f× 100k's", scaleGrowth)},
		{What: "data directory, 1M generated documents", Goal: fmt.Sprintf("≤ %.1f× 100k's", scaleGrowth)},
		{What: "RSS when searchable, 1M generated documents", Goal: "≤ 2 GB"},
		{What: "search p95, 1M generated documents", Goal: "≤ 20 ms"},
	}
	for i := range ts {
		ts[i].Measured, ts[i].Met = "—", "not measured"
	}
	big, ok := s.run(1_000_000)
	if !ok {
		return ts
	}
	ts[2].Measured, ts[2].Met = FormatMB(big.RSS), verdict(float64(big.RSS) <= scaleRSSGoal)
	if big.Settled > 0 {
		ts[2].Measured += fmt.Sprintf("; %s once the index has merged", FormatMB(big.Settled))
	}
	ts[3].Measured, ts[3].Met = FormatDuration(big.Search.P95), verdict(big.Search.P95 <= scaleSearchP95 && big.Search.Errors == 0)
	if mid, ok := s.run(100_000); ok && mid.Searchable > 0 && mid.Disk > 0 {
		t := float64(big.Searchable) / float64(mid.Searchable)
		d := float64(big.Disk) / float64(mid.Disk)
		ts[0].Measured, ts[0].Met = fmt.Sprintf("%s, %.2f× %s", FormatDuration(big.Searchable), t, FormatDuration(mid.Searchable)), verdict(t <= scaleGrowth)
		if big.Bleve.Err == "" && big.Bleve.Duration > 0 && mid.Bleve.Err == "" && mid.Bleve.Duration > 0 {
			ts[0].Measured += fmt.Sprintf(" (Bleve alone: %.2f×)", float64(big.Bleve.Duration)/float64(mid.Bleve.Duration))
		}
		ts[1].Measured, ts[1].Met = fmt.Sprintf("%s, %.2f× %s", FormatMB(big.Disk), d, FormatMB(mid.Disk)), verdict(d <= scaleGrowth)
	}
	return ts
}

func (r *Result) scaleMarkdown() string {
	var b strings.Builder
	s := r.Scale
	r.header(&b, "scale", s.Load)
	targetTable(&b, "Targets (scale, opt-in)", s.Targets())
	fmt.Fprintf(&b, "Each corpus indexed from an empty data directory by `bin/guide-mcp --root` over stdio, from spawn until the search index applied the first scan; RSS and the data directory at that moment; RSS again once the idle index has merged its segments; then each word of the search scenario's list for the corpus searched %d times through the stdio client. Last, the baseline: Bleve alone (the engine of guide's search index, in the bench's process, one text field of the standard analyzer without positions, nothing stored) indexing the same files, from the first file read until its last document is on disk.\n\n", s.Reps)
	b.WriteString("| corpus | documents | text | catalog caught up | searchable | RSS | RSS once merged | data directory | search p50 | search p95 | words | baseline: Bleve alone | note |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, run := range s.Runs {
		if run.Err != "" {
			fmt.Fprintf(&b, "| %s | %d | %s | | | | | | | | | | not measured: %s |\n", run.Corpus.Name, len(run.Corpus.Files), FormatMB(run.Corpus.Bytes), run.Err)
			continue
		}
		settled := "—"
		if run.Settled > 0 {
			settled = FormatMB(run.Settled)
		}
		engine := "—"
		switch {
		case run.Bleve.Err != "":
			engine = "failed: " + run.Bleve.Err
		case run.Bleve.Duration > 0:
			engine = FormatDuration(run.Bleve.Duration)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s (%.2f× the text) | %s | %s | %d | %s | %s |\n",
			run.Corpus.Name, len(run.Corpus.Files), FormatMB(run.Corpus.Bytes), FormatDuration(run.Catalog), FormatDuration(run.Searchable),
			FormatMB(run.RSS), settled, FormatMB(run.Disk), float64(run.Disk)/float64(max(run.Corpus.Bytes, 1)),
			FormatDuration(run.Search.P50), FormatDuration(run.Search.P95), run.Words, engine, run.Search.Note)
	}
	b.WriteString("\n")
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "- Note: %s\n", n)
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
