package report

import (
	"fmt"
	"time"
)

// PartitionsResult is the opt-in partitions scenario: a stream of P partitions written by
// indexer --partitions P, an unpartitioned replica (the baseline) and one replica per
// partition, each a guide-mcp --nats process started on an empty data directory once the
// stream held the whole first scan.
type PartitionsResult struct {
	Corpus *Corpus
	P      int
	Whole  PartReplica   // the unpartitioned replica
	Parts  []PartReplica // one per partition, in order
	// Queries are the searches compared (each word of the vocabulary); Differ those whose
	// hits (paths, order, scores) through the fan-out were not the whole replica's.
	Queries, Differ int
	FirstDiff       string // the first query that differed, and how
	Reps            int
	Fan             Latency // search through a partition replica (the fan-out)
	WholeSearch     Latency // search through the whole replica
	// The first search of each word alone: no statistics or bodies kept from an earlier
	// search of it.
	FanFirst, WholeFirst Latency
	Load                 Load
	Notes                []string
	Err                  string
}

// PartReplica is one replica of the partitions scenario.
type PartReplica struct {
	Partitions string        // "" for the whole project
	CatchUp    time.Duration // spawn on an empty data directory until searchable
	RSS        int64         // VmRSS when searchable
	Settled    int64         // VmRSS once its index merged (0: it did not in time)
	Disk       int64         // its data directory when searchable
	// SettledDisk is its data directory once its index merged (0: it did not in time).
	// When searchable, a first index is merging the segments it held back, and the
	// directory holds the merged segment beside the ones it replaces.
	SettledDisk int64
}

// merged reports whether the replica's memory and data directory were read once its
// index merged.
func (p PartReplica) merged() bool { return p.Settled > 0 && p.SettledDisk > 0 }

func (r *Result) partitionsRecord() Record {
	s := r.Partitions
	rec := r.record("partitions", s.Load)
	if s.Err != "" && s.Corpus == nil {
		rec.NotMeasured = s.Err
		return rec
	}
	key := CorpusKey(s.Corpus)
	t := NewTable("", "replica", ">catch-up from empty", ">RSS when searchable", ">data directory when searchable", ">RSS once merged", ">data directory once merged", ">against the whole replica (catch-up; RSS, data once merged)")
	t.About = fmt.Sprintf("%s (%d documents, %s of text), a stream of %d partitions (indexer --partitions %d); every replica a separate guide-mcp --nats process started on an empty data directory after the whole first scan was in the stream, one at a time.",
		s.Corpus.Name, len(s.Corpus.Files), FormatMB(s.Corpus.Bytes), s.P, s.P)
	settled := func(v int64) string {
		if v <= 0 {
			return "—"
		}
		return FormatMB(v)
	}
	w := s.Whole
	t.Add("whole (no --partitions)", FormatDuration(w.CatchUp), FormatMB(w.RSS), FormatMB(w.Disk), settled(w.Settled), settled(w.SettledDisk), "")
	// The memory and data targets compare what the replicas hold while they serve: once
	// merged, for the whole replica and every partition's, or else all when searchable.
	once := w.merged()
	for _, p := range s.Parts {
		once = once && p.merged()
	}
	held := func(p PartReplica) (rss, disk int64) {
		if once {
			return p.Settled, p.SettledDisk
		}
		return p.RSS, p.Disk
	}
	wRSS, wDisk := held(w)
	var worst PartReplica
	for _, p := range s.Parts {
		rss, disk := held(p)
		t.Add("--partitions "+p.Partitions, FormatDuration(p.CatchUp), FormatMB(p.RSS), FormatMB(p.Disk), settled(p.Settled), settled(p.SettledDisk),
			fmt.Sprintf("%.2f×; %.2f×, %.2f×", ratio(p.CatchUp.Seconds(), w.CatchUp.Seconds()), ratio(float64(rss), float64(wRSS)), ratio(float64(disk), float64(wDisk))))
		worst.CatchUp = max(worst.CatchUp, p.CatchUp)
		worst.RSS = max(worst.RSS, rss)
		worst.Disk = max(worst.Disk, disk)
	}
	when := "once merged"
	if !once {
		when = "when searchable (a replica's index did not merge in time)"
	}
	rec.Tables = append(rec.Tables, t)
	st := NewTable("", "search(word) through", ">p50", ">p95", ">p99", ">calls", ">same hits as the whole replica", "note")
	st.About = fmt.Sprintf("Each word of the search scenario's vocabulary for the corpus, %d times, alternating the whole replica and the fan-out (a replica of partition 0 asking the others over NATS).", s.Reps)
	same := fmt.Sprintf("%d of %d queries", s.Queries-s.Differ, s.Queries)
	st.Add("the whole replica", FormatDuration(s.WholeSearch.P50), FormatDuration(s.WholeSearch.P95), FormatDuration(s.WholeSearch.P99), s.WholeSearch.N, "", s.WholeSearch.Note)
	st.Add("the fan-out over "+fmt.Sprint(s.P)+" partitions", FormatDuration(s.Fan.P50), FormatDuration(s.Fan.P95), FormatDuration(s.Fan.P99), s.Fan.N, same, s.FirstDiff)
	if s.FanFirst.N > 0 {
		st.Add("the whole replica, first search of each word", FormatDuration(s.WholeFirst.P50), FormatDuration(s.WholeFirst.P95), FormatDuration(s.WholeFirst.P99), s.WholeFirst.N, "", "")
		st.Add("the fan-out, first search of each word", FormatDuration(s.FanFirst.P50), FormatDuration(s.FanFirst.P95), FormatDuration(s.FanFirst.P99), s.FanFirst.N, "",
			"no statistics or bodies kept from an earlier search of the word")
	}
	rec.Tables = append(rec.Tables, st)
	rec.Notes = append(rec.Notes, s.Notes...)
	if s.Err != "" {
		rec.Notes = append(rec.Notes, "failed: "+s.Err)
	}
	if len(s.Parts) == 0 || w.CatchUp <= 0 {
		return rec
	}
	rec.Metrics["partitions.differ@"+key] = Metric{Value: float64(s.Differ), Unit: UnitCount, What: fmt.Sprintf("queries of %d whose hits differ", s.Queries), Note: s.FirstDiff}
	rec.Metrics["partitions.data/whole@"+key] = Metric{Value: ratio(float64(worst.Disk), float64(wDisk)), Unit: UnitTimes,
		What: "largest partition replica's data directory against the whole replica's, " + when, Note: FormatMB(worst.Disk) + " against " + FormatMB(wDisk)}
	rec.Metrics["partitions.rss/whole@"+key] = Metric{Value: ratio(float64(worst.RSS), float64(wRSS)), Unit: UnitTimes,
		What: "largest partition replica's VmRSS against the whole replica's, " + when, Note: FormatMB(worst.RSS) + " against " + FormatMB(wRSS)}
	rec.Metrics["partitions.catchup/whole@"+key] = Metric{Value: ratio(worst.CatchUp.Seconds(), w.CatchUp.Seconds()), Unit: UnitTimes,
		What: "slowest partition replica's catch-up from empty against the whole replica's", Note: FormatDuration(worst.CatchUp) + " against " + FormatDuration(w.CatchUp)}
	rec.Metrics["partitions.catchup@"+key] = Metric{Value: w.CatchUp.Seconds(), Unit: UnitSeconds, What: "the whole replica's catch-up from empty"}
	rec.putLatency("partitions.whole", key, s.WholeSearch, "search through the whole replica")
	for _, q := range []string{"p50", "p95"} {
		m := rec.Metrics["partitions.whole."+q+"@"+key]
		m.What = "search " + q + " through the whole replica"
		rec.Metrics["partitions.whole."+q+"@"+key] = m
	}
	rec.putLatency("partitions.fan", key, s.Fan, "search through the fan-out")
	if s.WholeSearch.P50 > 0 && s.WholeSearch.P95 > 0 {
		rec.Metrics["partitions.p50/whole@"+key] = Metric{Value: ratio(s.Fan.P50.Seconds(), s.WholeSearch.P50.Seconds()), Unit: UnitTimes,
			What: "search p50 through the fan-out against the whole replica's", Note: FormatDuration(s.Fan.P50) + " against " + FormatDuration(s.WholeSearch.P50)}
		rec.Metrics["partitions.p95/whole@"+key] = Metric{Value: ratio(s.Fan.P95.Seconds(), s.WholeSearch.P95.Seconds()), Unit: UnitTimes,
			What: "search p95 through the fan-out against the whole replica's", Note: FormatDuration(s.Fan.P95) + " against " + FormatDuration(s.WholeSearch.P95)}
	}
	if s.WholeFirst.P50 > 0 && s.WholeFirst.P95 > 0 {
		rec.Metrics["partitions.first-p50/whole@"+key] = Metric{Value: ratio(s.FanFirst.P50.Seconds(), s.WholeFirst.P50.Seconds()), Unit: UnitTimes,
			What: "first search of each word, p50 through the fan-out against the whole replica's", Note: FormatDuration(s.FanFirst.P50) + " against " + FormatDuration(s.WholeFirst.P50)}
		rec.Metrics["partitions.first-p95/whole@"+key] = Metric{Value: ratio(s.FanFirst.P95.Seconds(), s.WholeFirst.P95.Seconds()), Unit: UnitTimes,
			What: "first search of each word, p95 through the fan-out against the whole replica's", Note: FormatDuration(s.FanFirst.P95) + " against " + FormatDuration(s.WholeFirst.P95)}
	}
	return rec
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
