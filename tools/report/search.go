package report

import (
	"fmt"
	"slices"
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

func (r *Result) searchRecord() Record {
	l := Load{Before: r.Search[0].Load.Before, After: r.Search[len(r.Search)-1].Load.After}
	rec := r.record("search", l)
	for _, s := range r.Search {
		c := s.Corpus
		k := CorpusKey(c)
		if s.Err != "" {
			rec.Notes = append(rec.Notes, fmt.Sprintf("%s: failed: %s", c.Name, s.Err))
			rec.Metrics["search.p50@"+k] = Metric{Unit: UnitSeconds, What: "guide", Err: "failed: " + s.Err}
			rec.Metrics["search.p95@"+k] = Metric{Unit: UnitSeconds, What: "guide", Err: "failed: " + s.Err}
			continue
		}
		t := NewTable(c.Name+": indexing (empty data directory, warm page cache)", "what", ">documents", ">time", ">documents/s", ">MB/s", "note")
		t.About = fmt.Sprintf("%d files, %s. %s.", len(c.Files), FormatMB(c.Bytes), s.Load)
		t.Add(s.Index.What, s.Index.Docs, FormatDuration(s.Index.Duration), fmt.Sprintf("%.0f", s.Index.DocsPerSec()), fmt.Sprintf("%.1f", s.Index.MBPerSec()), s.Index.Note)
		t.Notes = append(t.Notes, fmt.Sprintf("Index `<data>/query/index`: %s for %s of documents (%.2f×). Query process RSS: %s after indexing, %s after the searches; peak %s.",
			FormatMB(s.IndexBytes), FormatMB(c.Bytes), float64(s.IndexBytes)/float64(c.Bytes), fmtMiB(s.RSS), fmtMiB(s.RSSAfter), fmtMiB(s.Peak)))
		rec.Tables = append(rec.Tables, t)

		rows := []Latency{s.Guide}
		if s.GuideSDK.Server != "" {
			rows = append(rows, s.GuideSDK)
		}
		if s.Floor.Server != "" {
			rows = append(rows, s.Floor)
		}
		lt := latencyTable(c.Name+": search(word) and its baselines", "what", append(rows, s.RG)...)
		rec.Tables = append(rec.Tables, lt)

		wt := NewTable(c.Name+": per word", "word", "band", ">rg files", ">guide total", ">guide p50", ">rg", ">ratio")
		wt.About = fmt.Sprintf("guide: median of %d searches, default limit 20; rg: one run each, after a warm-up run; ratio = rg / guide.", s.Reps)
		words := slices.Clone(s.Words)
		slices.SortStableFunc(words, func(a, b WordResult) int { return a.RGDocs - b.RGDocs })
		for _, w := range words {
			wt.Add(w.Word, w.Band, w.RGDocs, w.GuideTotal, FormatDuration(w.GuideP50), FormatDuration(w.RG), fmt.Sprintf("%.0f×", w.Ratio))
		}
		rec.Tables = append(rec.Tables, wt)
		if len(s.Sentences) > 0 {
			st := latencyTable(c.Name+": sentences", "what", s.GuideSentence)
			st.About = fmt.Sprintf("A document matches when it holds one of the words; %d searches each, default limit 20.", s.Reps)
			rec.Tables = append(rec.Tables, st)
			xt := NewTable("", "sentence", ">guide total", ">guide p50", ">guide max")
			for _, x := range s.Sentences {
				xt.Add(x.Sentence, x.GuideTotal, FormatDuration(x.GuideP50), FormatDuration(x.GuideMax))
			}
			rec.Tables = append(rec.Tables, xt)
			rec.putLatency("search.sentence", k, s.GuideSentence, "guide, sentences")
		}

		rec.putLatency("search", k, s.Guide, "guide")
		if s.GuideSDK.Server != "" {
			rec.putLatency("search.sdk", k, s.GuideSDK, "the official TypeScript SDK's client")
		}
		if s.Floor.Server != "" {
			rec.putLatency("search.floor", k, s.Floor, "a view answer as large, no search")
		}
		rec.putLatency("search.rg", k, s.RG, "rg -l -w -i -F")
		rec.Metrics["search.rg-ratio@"+k] = Metric{Value: s.Ratio, Unit: UnitTimes, What: "rg's time against guide's, median over words"}
		rec.Metrics["search.index/text@"+k] = Metric{Value: float64(s.IndexBytes) / float64(max(c.Bytes, 1)), Unit: UnitTimes,
			What: "search index against the text", Note: FormatMB(s.IndexBytes) + " / " + FormatMB(c.Bytes)}
		rec.Metrics["search.searchable@"+k] = Metric{Value: s.Index.Duration.Seconds(), Unit: UnitSeconds, What: "guide, spawn until the search index applied the first scan"}
	}
	return rec
}
