package report

import "fmt"

// ReplicaResult is how fast a new replica's projections catch up with a stream: the
// package benchmark that measures it, run by the harness.
type ReplicaResult struct {
	Command      string  // the go test command
	EventsPerSec float64 // as the benchmark reports it
	Runs         int     // iterations of the benchmark
	Line         string  // the benchmark's result line
	Load         Load
	Err          string
}

func (r *Result) replicaRecord() Record {
	x := r.Replica
	rec := r.record("replica", x.Load)
	t := NewTable("", "benchmark", ">events/s", "result line")
	if x.Err != "" {
		t.Add(x.Command, "", "failed: "+x.Err)
		rec.Metrics["replica.events-per-s"] = Metric{Unit: UnitPerSecond, What: "catalog and index catching up", Err: "failed: " + x.Err}
	} else {
		t.Add(x.Command, fmt.Sprintf("%.0f", x.EventsPerSec), "`"+x.Line+"`")
		rec.Metrics["replica.events-per-s"] = Metric{Value: x.EventsPerSec, Unit: UnitPerSecond, What: "catalog and index catching up",
			Note: fmt.Sprintf("last of %d runs", x.Runs)}
	}
	rec.Tables = append(rec.Tables, t)
	return rec
}
