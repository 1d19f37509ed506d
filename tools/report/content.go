package report

import (
	"fmt"
	"strings"
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

func (r *Result) contentRecord() Record {
	c := r.Content
	rec := r.record("content", c.Load)
	k := CorpusKey(c.Corpus)
	if c.Err != "" {
		rec.Notes = append(rec.Notes, "failed: "+c.Err)
		rec.Metrics["content.p95@"+k] = Metric{Unit: UnitSeconds, What: "guide", Err: "failed: " + c.Err}
		return rec
	}
	var ps []string
	for _, p := range c.Patterns {
		ps = append(ps, fmt.Sprintf("`%s` `%s`", p.Category, p.Pattern))
	}
	t := latencyTable(c.Corpus.Name, "what", c.Guide, c.FS)
	t.About = fmt.Sprintf("%d files, %s; no guide.yaml, so every top-level folder is a category (`**/*`). %d patterns, each selecting exactly 10 documents (counted from the corpus, asserted through get_content before timing), called in turn: %s.",
		len(c.Corpus.Files), FormatMB(c.Corpus.Bytes), len(c.Patterns), strings.Join(ps, ", "))
	rec.Tables = append(rec.Tables, t)
	rec.Notes = append(rec.Notes, c.Notes...)
	rec.putLatency("content", k, c.Guide, "guide")
	rec.putLatency("content.fs", k, c.FS, "the reference filesystem server")
	if c.Ratio > 0 {
		rec.Metrics["content.fs/guide@"+k] = Metric{Value: c.Ratio, Unit: UnitTimes, What: "the reference server's p50 against guide's"}
	}
	return rec
}
