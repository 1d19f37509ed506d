package report

import "fmt"

// WebResult is the web page scenario: how long each kind of page takes to answer.
type WebResult struct {
	Corpus *Corpus
	Pages  []Latency // one per kind of page, over HTTP with a browser session's cookie
	Load   Load
	Notes  []string
	Err    string
}

func (r *Result) webRecord() Record {
	w := r.Web
	rec := r.record("web", w.Load)
	k := CorpusKey(w.Corpus)
	if w.Err != "" {
		rec.Notes = append(rec.Notes, "failed: "+w.Err)
		rec.Metrics["web.worst.p95@"+k] = Metric{Unit: UnitSeconds, What: "guide", Err: "failed: " + w.Err}
		return rec
	}
	t := latencyTable(w.Corpus.Name, "what", w.Pages...)
	t.About = fmt.Sprintf("%d files, %s.", len(w.Corpus.Files), FormatMB(w.Corpus.Bytes))
	rec.Tables = append(rec.Tables, t)
	rec.Notes = append(rec.Notes, w.Notes...)
	if len(w.Pages) > 0 {
		worst := w.Pages[0]
		errs := 0
		for _, p := range w.Pages {
			if p.P95 > worst.P95 {
				worst = p
			}
			errs += p.Errors
		}
		m := Metric{Value: worst.P95.Seconds(), Unit: UnitSeconds, What: "the slowest kind of page", Note: worst.Op}
		if errs > 0 {
			m.Err = fmt.Sprintf("%d requests failed", errs)
		}
		rec.Metrics["web.worst.p95@"+k] = m
	}
	return rec
}
