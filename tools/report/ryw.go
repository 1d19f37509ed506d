package report

import (
	"fmt"
	"time"
)

// RYWResult is read-your-writes through the stdio bridge: calls with the sync off and on,
// a second after the last change, and calls at once after a save.
type RYWResult struct {
	Corpus *Corpus
	Setup  time.Duration // spawn to searchable, the first (cold) start
	// Off and OffSearch are view and search with --sync-wait 0; Idle is view with the sync,
	// nothing changed for a second.
	Off, OffSearch, Idle Latency
	// SavedView and SavedSearch are each called at once after a save, with the sync.
	SavedView, SavedSearch Latency
	Stale                  int // answers at once after a save without the change, unmarked
	Partial                int // answers that said they were partial
	Load                   Load
	Err                    string
}

func (r *Result) rywRecord() Record {
	y := r.RYW
	rec := r.record(AreaRYW, y.Load)
	if y.Corpus == nil {
		rec.Notes = append(rec.Notes, "not measured: "+y.Err)
		return rec
	}
	if y.Err != "" {
		rec.Notes = append(rec.Notes, "stopped early: "+y.Err)
	}
	k := CorpusKey(y.Corpus)
	t := latencyTable(y.Corpus.Name, "server", y.Off, y.OffSearch, y.Idle, y.SavedView, y.SavedSearch)
	t.About = fmt.Sprintf("%d files; spawn to searchable %s (first start). Answers at once after a save: %d stale, %d partial.",
		len(y.Corpus.Files), FormatDuration(y.Setup), y.Stale, y.Partial)
	rec.Tables = append(rec.Tables, t)
	rec.putLatency("ryw.off", k, y.Off, "view with --sync-wait 0")
	rec.putLatency("ryw.idle", k, y.Idle, "view with the sync, nothing changed for 1 s")
	rec.putLatency("ryw.saved-view", k, y.SavedView, "view at once after a save, with the sync")
	rec.putLatency("ryw.saved-search", k, y.SavedSearch, "search at once after a save, with the sync")
	errs := ""
	if y.Off.N == 0 || y.Idle.N == 0 || y.SavedView.N == 0 || y.SavedSearch.N == 0 {
		errs = "not every kind of call was measured"
	}
	rec.Metrics["ryw.added.p50@"+k] = Metric{Value: (y.Idle.P50 - y.Off.P50).Seconds(), Unit: UnitSeconds, Err: errs,
		What: "view p50 with the sync, nothing changed for 1 s, less view p50 with --sync-wait 0"}
	added := max(y.SavedView.P95-y.Off.P95, y.SavedSearch.P95-y.OffSearch.P95)
	rec.Metrics["ryw.added-after-save.p95@"+k] = Metric{Value: added.Seconds(), Unit: UnitSeconds, Err: errs,
		What: "p95 at once after a save less p95 with --sync-wait 0, the larger of view's and search's"}
	rec.Metrics["ryw.stale@"+k] = Metric{Value: float64(y.Stale), Unit: UnitCount, Err: errs,
		What: fmt.Sprintf("answers at once after a save that miss it and do not say so, of %d", y.SavedView.N+y.SavedSearch.N)}
	return rec
}
