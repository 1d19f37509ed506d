package report

import (
	"fmt"
	"time"
)

// ChangesDocs is the size of the stream the changes benchmark fills: the documents of the
// project, 1,000 of which are then modified.
const ChangesDocs = 100_000

// ChangesResult is how long the changes tool's answer of 1,000 changes takes: the package
// benchmark that measures it, run by the harness.
type ChangesResult struct {
	Command string // the go test command
	Docs    int    // documents on the stream
	List    ChangesRun
	Diff    ChangesRun // with a diff of each modified document
	Load    Load
	Err     string
}

// ChangesRun is one sub-benchmark's figures.
type ChangesRun struct {
	Runs     int
	P50, P95 time.Duration
	Line     string // the benchmark's result line
}

func (r *Result) changesRecord() Record {
	x := r.Changes
	rec := r.record("changes", x.Load)
	key := "@" + SizeKey(x.Docs)
	t := NewTable("", "answer", ">calls", ">p50", ">p95", "result line")
	what := map[string]string{"list": "1,000 changes, without diffs", "diff": "1,000 changes, each with its diff"}
	for _, c := range []struct {
		name string
		run  ChangesRun
	}{{"list", x.List}, {"diff", x.Diff}} {
		metric := "changes.p95" + key
		if c.name == "diff" {
			metric = "changes.diff.p95" + key
		}
		if x.Err != "" || c.run.Line == "" {
			msg := x.Err
			if msg == "" {
				msg = "no result"
			}
			t.Add(what[c.name], "", "", "", "failed: "+msg)
			rec.Metrics[metric] = Metric{Unit: UnitSeconds, What: what[c.name], Err: "failed: " + msg}
			continue
		}
		t.Add(what[c.name], fmt.Sprint(c.run.Runs), FormatDuration(c.run.P50), FormatDuration(c.run.P95), "`"+c.run.Line+"`")
		rec.Metrics[metric] = Metric{Value: c.run.P95.Seconds(), Unit: UnitSeconds, What: what[c.name],
			Note: fmt.Sprintf("%d calls over a stream of %d documents", c.run.Runs, x.Docs)}
	}
	rec.Tables = append(rec.Tables, t)
	return rec
}
