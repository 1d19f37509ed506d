package report

import (
	"fmt"
	"strings"
	"time"
)

// WebResult is the web page scenario: how long each kind of page takes to answer.
type WebResult struct {
	Corpus *Corpus
	Pages  []Latency // one per kind of page, over HTTP with a browser session's cookie
	Load   Load
	Notes  []string
	Err    string
}

// webGoal is the page answer time asked of the web page.
const webGoal = 50 * time.Millisecond

func (r *Result) webMarkdown() string {
	var b strings.Builder
	w := r.Web
	r.header(&b, "web", w.Load)
	t := Target{What: "a web page answers (whole response read), p95 of the slowest kind of page, " + w.Corpus.Name, Goal: "≤ 50 ms",
		Measured: "—", Met: "not measured"}
	if w.Err != "" {
		t.Measured = "failed: " + w.Err
	} else if len(w.Pages) > 0 {
		worst := w.Pages[0]
		errs := 0
		for _, p := range w.Pages {
			if p.P95 > worst.P95 {
				worst = p
			}
			errs += p.Errors
		}
		t.Measured = fmt.Sprintf("%s (%s)", FormatDuration(worst.P95), worst.Op)
		t.Met = at100k(len(w.Corpus.Files), verdict(worst.P95 <= webGoal && errs == 0))
	}
	targetTable(&b, "Targets (the web page)", []Target{t})
	if w.Err != "" {
		return b.String()
	}
	fmt.Fprintf(&b, "%d files, %s; `bin/guide-mcp --root --http` on loopback, the index caught up; one browser session (its cookie), pages fetched one after another with Go's HTTP client, the time to the last byte.\n\n",
		len(w.Corpus.Files), FormatMB(w.Corpus.Bytes))
	latencyRows(&b, w.Pages...)
	for _, n := range w.Notes {
		fmt.Fprintf(&b, "- Note: %s\n", n)
	}
	if len(w.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
