package report

import (
	"fmt"
	"strings"
	"time"
)

// ContentResult is the get_content scenario: ten documents, beside the reference server.
type ContentResult struct {
	Corpus   *Corpus
	Patterns []ContentPattern
	Guide    Latency
	FS       Latency
	Ratio    float64 // reference server p50 / guide p50
	Load     Load
	Notes    []string
	Err      string
}

// ContentPattern is a category and a pattern that selects exactly Want documents.
type ContentPattern struct {
	Category string
	Pattern  string
	Want     int
}

func (r *Result) contentMarkdown() string {
	var b strings.Builder
	c := r.Content
	r.header(&b, "content", c.Load)
	t := Target{What: "get_content of a pattern matching 10 documents, p95 through MCP (stdio), " + c.Corpus.Name, Goal: "≤ 5 ms",
		Measured: "—", Met: "not measured"}
	if c.Err == "" && c.Guide.N > 0 {
		t.Measured = FormatDuration(c.Guide.P95)
		t.Met = at100k(len(c.Corpus.Files), verdict(c.Guide.P95 <= 5*time.Millisecond && c.Guide.Errors == 0))
		if c.Ratio > 0 {
			t.Measured += fmt.Sprintf("; reference server p50 / guide p50 = %.1f×", c.Ratio)
		}
	} else if c.Err != "" {
		t.Measured = "failed: " + c.Err
	}
	targetTable(&b, "Targets (get_content)", []Target{t})
	if c.Err != "" {
		return b.String()
	}
	var ps []string
	for _, p := range c.Patterns {
		ps = append(ps, fmt.Sprintf("`%s` `%s`", p.Category, p.Pattern))
	}
	fmt.Fprintf(&b, "%d files, %s; no guide.yaml, so every top-level folder is a category (`**/*`). %d patterns, each selecting exactly 10 documents (counted from the corpus, asserted through get_content before timing), called in turn: %s.\n\n",
		len(c.Corpus.Files), FormatMB(c.Corpus.Bytes), len(c.Patterns), strings.Join(ps, ", "))
	latencyRows(&b, c.Guide, c.FS)
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "- Note: %s\n", n)
	}
	if len(c.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
