package report

import (
	"fmt"
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
	Peak                int64 // its peak resident memory (VmHWM) then, in bytes
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

// run returns the run of n documents, if it was measured.
func (s *ScaleResult) run(n int) (ScaleRun, bool) {
	for _, r := range s.Runs {
		if r.Corpus != nil && len(r.Corpus.Files) == n && r.Err == "" {
			return r, true
		}
	}
	return ScaleRun{}, false
}

func (r *Result) scaleRecord() Record {
	s := r.Scale
	rec := r.record("scale", s.Load)
	t := NewTable("", "corpus", ">documents", ">text", ">catalog caught up", ">searchable", ">RSS", ">RSS once merged", ">data directory", ">search p50", ">search p95", ">words", ">baseline: Bleve alone", "note")
	t.About = fmt.Sprintf("Each word of the search scenario's list for the corpus searched %d times.", s.Reps)
	for _, run := range s.Runs {
		if run.Err != "" {
			t.Add(run.Corpus.Name, len(run.Corpus.Files), FormatMB(run.Corpus.Bytes), "", "", "", "", "", "", "", "", "", "not measured: "+run.Err)
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
		t.Add(run.Corpus.Name, len(run.Corpus.Files), FormatMB(run.Corpus.Bytes), FormatDuration(run.Catalog), FormatDuration(run.Searchable),
			FormatMB(run.RSS), settled, fmt.Sprintf("%s (%.2f× the text)", FormatMB(run.Disk), float64(run.Disk)/float64(max(run.Corpus.Bytes, 1))),
			FormatDuration(run.Search.P50), FormatDuration(run.Search.P95), run.Words, engine, run.Search.Note)
		k := CorpusKey(run.Corpus)
		rec.Metrics["scale.searchable@"+k] = Metric{Value: run.Searchable.Seconds(), Unit: UnitSeconds, What: "guide, spawn until searchable"}
		rec.Metrics["scale.disk@"+k] = Metric{Value: float64(run.Disk), Unit: UnitBytes, What: "guide's data directory"}
		m := Metric{Value: float64(run.RSS), Unit: UnitBytes, What: "guide, VmRSS when searchable"}
		if run.Settled > 0 {
			m.Note = FormatMB(run.Settled) + " once the index has merged"
		}
		rec.Metrics["scale.rss@"+k] = m
		if run.Peak > 0 {
			rec.Metrics["scale.peak@"+k] = Metric{Value: float64(run.Peak), Unit: UnitBytes, What: "guide, peak VmHWM until searchable"}
		}
		rec.putLatency("scale.search", k, run.Search, "guide")
		if run.Bleve.Err == "" && run.Bleve.Duration > 0 {
			rec.Metrics["scale.bleve@"+k] = Metric{Value: run.Bleve.Duration.Seconds(), Unit: UnitSeconds, What: "Bleve alone"}
		}
	}
	rec.Tables = append(rec.Tables, t)
	rec.Notes = append(rec.Notes, s.Notes...)
	// 1M against 100k of the same run: how time and disk grow.
	mid, ok := s.run(100_000)
	for _, run := range s.Runs {
		n := len(run.Corpus.Files)
		if !ok || n <= 100_000 || run.Err != "" || mid.Searchable <= 0 || mid.Disk <= 0 {
			continue
		}
		k := CorpusKey(run.Corpus)
		rec.Metrics["scale.searchable/100k@"+k] = Metric{Value: run.Searchable.Seconds() / mid.Searchable.Seconds(), Unit: UnitTimes,
			What: "guide's time to searchable against 100k's", Note: FormatDuration(run.Searchable) + " against " + FormatDuration(mid.Searchable)}
		rec.Metrics["scale.disk/100k@"+k] = Metric{Value: float64(run.Disk) / float64(mid.Disk), Unit: UnitTimes,
			What: "guide's data directory against 100k's", Note: FormatMB(run.Disk) + " against " + FormatMB(mid.Disk)}
		if run.Bleve.Err == "" && run.Bleve.Duration > 0 && mid.Bleve.Err == "" && mid.Bleve.Duration > 0 {
			rec.Metrics["scale.bleve/100k@"+k] = Metric{Value: run.Bleve.Duration.Seconds() / mid.Bleve.Duration.Seconds(), Unit: UnitTimes,
				What: "Bleve alone, against its 100k time", Note: FormatDuration(run.Bleve.Duration) + " against " + FormatDuration(mid.Bleve.Duration)}
		}
	}
	return rec
}
