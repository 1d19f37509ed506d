package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/guide/guide/tools/report"
)

// replicaBench is the package benchmark of a new replica catching up: the catalog and the
// search index following a stream of 50,000 documents from its start, NATS embedded in the
// same process.
var replicaBench = []string{"test", "-count", "1", "-run", "^$", "-bench", "^BenchmarkRunnerCatchUp$", "-benchtime", "3x", "./internal/projection"}

// measureReplica runs the replica benchmark with go test, from the module's root, and
// reads the rate it reports.
func measureReplica(ctx context.Context) (r report.ReplicaResult) {
	r = report.ReplicaResult{Command: "go " + strings.Join(replicaBench, " "), Load: report.Load{Before: LoadAverage()}}
	defer func() { r.Load.After = LoadAverage() }()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", replicaBench...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		r.Err = fmt.Sprintf("%v: %s", err, lastLine(stderr.String()+out.String()))
		return r
	}
	r.EventsPerSec, r.Runs, r.Line, r.Err = parseBenchRate(out.String(), "events/s")
	return r
}

// parseBenchRate finds a benchmark's result line in go test's output and reads its
// iterations and the metric of the unit.
func parseBenchRate(out, unit string) (rate float64, runs int, line, errText string) {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		runs, _ = strconv.Atoi(f[1])
		for i := 3; i < len(f); i++ {
			if f[i] == unit {
				v, err := strconv.ParseFloat(f[i-1], 64)
				if err != nil {
					return 0, runs, l, fmt.Sprintf("%q: %v", l, err)
				}
				return v, runs, strings.Join(f, " "), ""
			}
		}
	}
	return 0, 0, "", "no " + unit + " in the output: " + lastLine(out)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
