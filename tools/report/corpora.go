package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guide/guide/tools/stats"
)

// Corpus is a tree the harness measures.
type Corpus struct {
	Name      string
	Root      string // absolute
	Generated bool
	Files     []string // documents, relative slash paths, sorted
	Folders   []string // folders holding a document at any depth; "" is the root
	Bytes     int64
	GenTime   time.Duration // when generated in this run
}

// CorpusResult is what was measured on one corpus.
type CorpusResult struct {
	Corpus   *Corpus
	Index    []IndexRun
	Latency  []Latency
	Restarts []Restart
	RSSIndex int64 // guide's resident set after the first scan
	RSSCalls int64 // ...and after the view and tree calls
	PeakRSS  int64
	ScanLog  string // what guide logged of its last first reconcile
}

// IndexRun is one way of going through a whole tree, timed.
type IndexRun struct {
	Kind     string // which run it is, one of the Run… constants
	What     string
	Docs     int
	Bytes    int64
	Duration time.Duration
	// Disk is what the run left on disk (an index, a database, a data directory); RSS the
	// process's resident set when it ended and Settled two seconds later, Peak its peak
	// resident set (VmHWM, or the child's maximum RSS), when measured.
	Disk, RSS, Settled, Peak int64
	IndexDisk                int64 // guide's search index alone, of Disk
	// SettledMerged is guide's resident set two seconds after its index merged: the
	// first index done, the process serving it.
	SettledMerged int64
	Note          string
	Err           string
}

// The kinds of index runs of the cold scenario.
const (
	RunHash      = "hash"      // walk + read + sha256
	RunRipgrep   = "rg"        // rg over the tree
	RunFTS5      = "fts5"      // SQLite FTS5 builds an index
	RunBleve     = "bleve"     // Bleve alone builds an index
	RunZoekt     = "zoekt"     // zoekt-index builds its index (and zoekt-webserver serves it)
	RunFloor     = "floor"     // guide-floor: the least work of an index of positions
	RunCatalog   = "catalog"   // guide until the catalog holds the first scan
	RunAll       = "all"       // guide until every projection caught up
	RunInProcess = "inprocess" // guide's pieces in the harness's process
)

// DocsPerSec is the documents handled per second.
func (r IndexRun) DocsPerSec() float64 { return float64(r.Docs) / r.Duration.Seconds() }

// MBPerSec is the megabytes (10^6) read per second.
func (r IndexRun) MBPerSec() float64 { return float64(r.Bytes) / 1e6 / r.Duration.Seconds() }

// Restart is the time from spawning a server until its first answer.
type Restart struct {
	Kind  string // RestartKilled, RestartStopped or RestartBaseline
	What  string
	Times []time.Duration
	Err   string
	Note  string // what else was measured on the way, such as memory
}

// The kinds of restarts.
const (
	RestartKilled   = "killed"   // guide after SIGKILL
	RestartStopped  = "stopped"  // guide after a clean stop
	RestartBaseline = "baseline" // the reference server
)

// Median of the times.
func (r Restart) Median() time.Duration { return stats.Median(r.Times) }

// Max of the times.
func (r Restart) Max() time.Duration {
	if len(r.Times) == 0 {
		return 0
	}
	return slices.Max(r.Times)
}

// coldRecord is the cold scenario on every corpus: each way of going through the tree,
// guide's beside the baselines.
func (r *Result) coldRecord() Record {
	rec := r.record("cold", r.Load)
	rec.Notes = append(rec.Notes, r.Notes...)
	for _, cr := range r.Corpora {
		if len(cr.Index) == 0 {
			continue
		}
		c := cr.Corpus
		k := CorpusKey(c)
		t := NewTable(c.Name, "what", ">documents", ">time", ">documents/s", ">MB/s", "note")
		t.About = corpusAbout(c)
		byKind := map[string]IndexRun{}
		for _, run := range cr.Index {
			if run.Err != "" {
				t.Add(run.What, "", "", "", "", failure(run.Err))
			} else {
				mbs := "—"
				if run.Bytes > 0 {
					mbs = fmt.Sprintf("%.1f", run.MBPerSec())
				}
				t.Add(run.What, run.Docs, FormatDuration(run.Duration), fmt.Sprintf("%.0f", run.DocsPerSec()), mbs, run.Note)
			}
			if _, ok := byKind[run.Kind]; !ok || run.Kind == RunHash {
				byKind[run.Kind] = run // of the hash runs, the last: the most goroutines
			}
		}
		if cr.ScanLog != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("guide logged its first reconcile as: `%s`.", cr.ScanLog))
		}
		if cr.RSSIndex > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("guide-mcp resident memory (VmRSS) once the catalog held the first scan: %s.", fmtMiB(cr.RSSIndex)))
		}
		rec.Tables = append(rec.Tables, t)

		put := func(key string, run IndexRun, what string) bool {
			if run.Kind == "" {
				return false
			}
			if run.Err != "" {
				rec.Metrics[key] = Metric{Unit: UnitSeconds, What: what, Err: failure(run.Err)}
				return false
			}
			rec.Metrics[key] = Metric{Value: run.Duration.Seconds(), Unit: UnitSeconds, What: what}
			return true
		}
		put("cold.hash@"+k, byKind[RunHash], "walk + read + sha256")
		put("cold.fts5@"+k, byKind[RunFTS5], "SQLite FTS5")
		put("cold.bleve@"+k, byKind[RunBleve], "Bleve alone")
		if put("cold.catalog@"+k, byKind[RunCatalog], "guide, until the catalog holds the first scan") {
			run := byKind[RunCatalog]
			rec.Metrics["cold.docs-per-s@"+k] = Metric{Value: run.DocsPerSec(), Unit: UnitPerSecond, What: "guide, until the catalog holds the first scan",
				Note: FormatDuration(run.Duration)}
		}
		if put("cold.all@"+k, byKind[RunAll], "guide, until every projection caught up") {
			all := byKind[RunAll]
			if fts := byKind[RunFTS5]; fts.Kind != "" && fts.Err == "" && fts.Duration > 0 {
				rec.Metrics["cold.all/fts5@"+k] = Metric{Value: all.Duration.Seconds() / fts.Duration.Seconds(), Unit: UnitTimes,
					What: "guide's time against SQLite FTS5's", Note: FormatDuration(all.Duration) + " against " + FormatDuration(fts.Duration)}
			}
			if all.Settled > 0 {
				rec.Metrics["cold.rss-settled@"+k] = Metric{Value: float64(all.Settled), Unit: UnitBytes,
					What: "VmRSS two seconds after every projection caught up", Note: FormatMB(all.RSS) + " when caught up"}
			}
			if all.SettledMerged > 0 {
				rec.Metrics["cold.rss-merged@"+k] = Metric{Value: float64(all.SettledMerged), Unit: UnitBytes,
					What: "VmRSS two seconds after the first index merged"}
			}
			if all.Disk > 0 && c.Bytes > 0 {
				rec.Metrics["cold.data/text@"+k] = Metric{Value: float64(all.Disk) / float64(c.Bytes), Unit: UnitTimes,
					What: "guide's data directory against the text", Note: FormatMB(all.Disk)}
			}
		}
		all := byKind[RunAll]
		allOK := all.Kind != "" && all.Err == "" && all.Duration > 0
		if z := byKind[RunZoekt]; z.Err != "" && allOK {
			// The targets against zoekt say why they are not measured.
			for key, what := range map[string]string{"cold.all/zoekt@" + k: "guide's time against zoekt-index's",
				"cold.rss-settled/zoekt-web@" + k: "guide's VmRSS after catching up against zoekt-webserver's",
				"cold.rss-merged/zoekt-web@" + k:  "guide's VmRSS after its index merged against zoekt-webserver's"} {
				rec.Metrics[key] = Metric{Unit: UnitTimes, What: what, Err: failure(z.Err)}
			}
		}
		if put("cold.zoekt@"+k, byKind[RunZoekt], "zoekt-index") {
			z := byKind[RunZoekt]
			if allOK {
				rec.Metrics["cold.all/zoekt@"+k] = Metric{Value: all.Duration.Seconds() / z.Duration.Seconds(), Unit: UnitTimes,
					What: "guide's time against zoekt-index's", Note: FormatDuration(all.Duration) + " against " + FormatDuration(z.Duration)}
			}
			if z.Peak > 0 {
				rec.Metrics["cold.zoekt-peak@"+k] = Metric{Value: float64(z.Peak), Unit: UnitBytes, What: "zoekt-index's peak resident set"}
			}
			if z.Settled > 0 {
				rec.Metrics["cold.zoekt-web-rss@"+k] = Metric{Value: float64(z.Settled), Unit: UnitBytes, What: "zoekt-webserver's VmRSS two seconds after ready"}
				if allOK && all.Settled > 0 {
					rec.Metrics["cold.rss-settled/zoekt-web@"+k] = Metric{Value: float64(all.Settled) / float64(z.Settled), Unit: UnitTimes,
						What: "guide's VmRSS two seconds after catching up against zoekt-webserver's serving the same corpus", Note: FormatMB(all.Settled) + " against " + FormatMB(z.Settled)}
				}
				if allOK && all.SettledMerged > 0 {
					rec.Metrics["cold.rss-merged/zoekt-web@"+k] = Metric{Value: float64(all.SettledMerged) / float64(z.Settled), Unit: UnitTimes,
						What: "guide's VmRSS two seconds after its index merged against zoekt-webserver's serving the same corpus", Note: FormatMB(all.SettledMerged) + " against " + FormatMB(z.Settled)}
				}
			}
			if z.Disk > 0 && c.Bytes > 0 {
				rec.Metrics["cold.zoekt-index/text@"+k] = Metric{Value: float64(z.Disk) / float64(c.Bytes), Unit: UnitTimes, What: "zoekt's index against the text", Note: FormatMB(z.Disk)}
			}
		}
		if put("cold.floor@"+k, byKind[RunFloor], "the floor (guide-floor)") && allOK {
			rec.Metrics["cold.all/floor@"+k] = Metric{Value: all.Duration.Seconds() / byKind[RunFloor].Duration.Seconds(), Unit: UnitTimes,
				What: "guide's time against the floor's", Note: FormatDuration(all.Duration) + " against " + FormatDuration(byKind[RunFloor].Duration)}
		}
		if allOK && all.Peak > 0 {
			rec.Metrics["cold.peak@"+k] = Metric{Value: float64(all.Peak), Unit: UnitBytes, What: "guide's peak resident set (VmHWM) until every projection caught up"}
		}
		if allOK && all.IndexDisk > 0 && c.Bytes > 0 {
			rec.Metrics["cold.index/text@"+k] = Metric{Value: float64(all.IndexDisk) / float64(c.Bytes), Unit: UnitTimes,
				What: "guide's search index against the text", Note: FormatMB(all.IndexDisk)}
		}
		if fts := byKind[RunFTS5]; fts.Err == "" && fts.Disk > 0 && c.Bytes > 0 {
			rec.Metrics["cold.fts5-db/text@"+k] = Metric{Value: float64(fts.Disk) / float64(c.Bytes), Unit: UnitTimes,
				What: "SQLite FTS5's database against the text", Note: FormatMB(fts.Disk)}
		}
	}
	return rec
}

// latencyRecord is the latency scenario on every corpus: view and tree through guide,
// beside direct reads and the reference server.
func (r *Result) latencyRecord() Record {
	rec := r.record("latency", r.Load)
	rec.Notes = append(rec.Notes, r.Notes...)
	rec.Notes = append(rec.Notes, fmt.Sprintf("%d view and %d tree calls per server, seed %d.", r.Settings.Views, r.Settings.Trees, r.Settings.Seed))
	for _, cr := range r.Corpora {
		if len(cr.Latency) == 0 {
			continue
		}
		k := CorpusKey(cr.Corpus)
		t := latencyTable(cr.Corpus.Name, "server", cr.Latency...)
		t.About = corpusAbout(cr.Corpus)
		if cr.RSSCalls > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("guide-mcp resident memory (VmRSS) after the calls: %s; peak (VmHWM) %s.", fmtMiB(cr.RSSCalls), fmtMiB(cr.PeakRSS)))
		}
		rec.Tables = append(rec.Tables, t)
		for _, l := range cr.Latency {
			who := ""
			switch {
			case strings.HasPrefix(l.Server, "guide"):
			case strings.Contains(l.Server, "os.ReadFile"):
				who = "os-"
			case strings.Contains(l.Server, "server-filesystem"):
				who = "fs-"
			default:
				continue
			}
			op := ""
			switch {
			case strings.HasPrefix(l.Op, "view"):
				op = "view"
			case strings.HasPrefix(l.Op, "tree"):
				op = "tree"
			default:
				continue
			}
			what := map[string]string{"": "guide", "os-": "os.ReadFile / os.ReadDir in-process", "fs-": "the reference filesystem server"}[who]
			rec.putLatency("latency."+who+op, k, l, what)
		}
		if cr.PeakRSS > 0 {
			rec.Metrics["latency.vmhwm@"+k] = Metric{Value: float64(cr.PeakRSS), Unit: UnitBytes, What: "guide-mcp's peak resident memory (VmHWM), first index and calls"}
		}
	}
	return rec
}

// restartRecord is the restart scenario on every corpus.
func (r *Result) restartRecord() Record {
	rec := r.record("restart", r.Load)
	rec.Notes = append(rec.Notes, fmt.Sprintf("%d restarts each way.", r.Settings.Restarts))
	for _, cr := range r.Corpora {
		if len(cr.Restarts) == 0 {
			continue
		}
		k := CorpusKey(cr.Corpus)
		t := NewTable(cr.Corpus.Name, "what", ">runs", ">median", ">max", "note")
		var worst time.Duration
		ways, failed := 0, ""
		for _, rs := range cr.Restarts {
			note := rs.Note
			if rs.Err != "" {
				note = "failed: " + rs.Err
			}
			t.Add(rs.What, len(rs.Times), FormatDuration(rs.Median()), FormatDuration(rs.Max()), note)
			switch rs.Kind {
			case RestartKilled, RestartStopped:
				ways++
				worst = max(worst, rs.Max())
				if rs.Err != "" {
					failed = "failed: " + rs.Err
				}
				rec.Metrics["restart."+rs.Kind+".median@"+k] = Metric{Value: rs.Median().Seconds(), Unit: UnitSeconds,
					What: map[string]string{RestartKilled: "median after SIGKILL", RestartStopped: "median after a clean stop"}[rs.Kind]}
			case RestartBaseline:
				if rs.Err == "" && len(rs.Times) > 0 {
					rec.Metrics["restart.fs@"+k] = Metric{Value: rs.Median().Seconds(), Unit: UnitSeconds, What: "the reference filesystem server"}
				}
			}
		}
		rec.Tables = append(rec.Tables, t)
		if ways == 2 {
			m := Metric{Value: worst.Seconds(), Unit: UnitSeconds, What: "guide, worst restart", Err: failed}
			kill, stop := rec.Metrics["restart.killed.median@"+k], rec.Metrics["restart.stopped.median@"+k]
			m.Note = fmt.Sprintf("median %s after SIGKILL, %s after a clean stop", UnitSeconds.Format(kill.Value), UnitSeconds.Format(stop.Value))
			rec.Metrics["restart.worst@"+k] = m
		}
	}
	return rec
}

// corpusAbout describes a corpus in one sentence.
func corpusAbout(c *Corpus) string {
	s := fmt.Sprintf("%d files, %s, %d folders, mean %.1f kB per file",
		len(c.Files), FormatMB(c.Bytes), len(c.Folders), float64(c.Bytes)/1e3/float64(max(1, len(c.Files))))
	if c.Generated {
		s += "; generated by `tools/corpus`"
		if c.GenTime > 0 {
			s += " in " + FormatDuration(c.GenTime)
		}
	}
	return s + "."
}

// failure is how a run that failed is shown: its error, after "failed: " unless it says
// the baseline is not on this machine.
func failure(err string) string {
	if strings.HasPrefix(err, "not on this machine") {
		return err
	}
	return "failed: " + err
}
