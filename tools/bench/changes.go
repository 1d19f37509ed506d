package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/guide/guide/tools/report"
)

// changesBench is the package benchmark of the changes tool's answer: 1,000 documents
// modified since the cursor, over a stream of report.ChangesDocs documents, without and
// with diffs.
var changesBench = []string{"test", "-count", "1", "-run", "^$", "-bench", "^BenchmarkChanges$", "-benchtime", "100x", "./internal/query"}

// measureChanges runs the changes benchmark with go test, from the module's root, and reads
// the percentiles it reports.
func measureChanges(ctx context.Context) (r report.ChangesResult) {
	r = report.ChangesResult{Command: fmt.Sprintf("GUIDE_BENCH_CHANGES_DOCS=%d go %s", report.ChangesDocs, strings.Join(changesBench, " ")),
		Docs: report.ChangesDocs, Load: report.Load{Before: LoadAverage()}}
	defer func() { r.Load.After = LoadAverage() }()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", changesBench...)
	cmd.Env = append(os.Environ(), "GUIDE_BENCH_CHANGES_DOCS="+strconv.Itoa(report.ChangesDocs))
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		r.Err = fmt.Sprintf("%v: %s", err, lastLine(stderr.String()+out.String()))
		return r
	}
	for _, l := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "BenchmarkChanges/list"):
			r.List = parseChangesLine(l)
		case strings.HasPrefix(l, "BenchmarkChanges/diff"):
			r.Diff = parseChangesLine(l)
		}
	}
	if r.List.Line == "" {
		r.Err = "no result line in the output: " + lastLine(out.String())
	}
	return r
}

// parseChangesLine reads a result line's runs, p50-ms and p95-ms.
func parseChangesLine(l string) report.ChangesRun {
	f := strings.Fields(l)
	run := report.ChangesRun{Line: strings.Join(f, " ")}
	if len(f) > 1 {
		run.Runs, _ = strconv.Atoi(f[1])
	}
	for i := 3; i < len(f); i++ {
		v, err := strconv.ParseFloat(f[i-1], 64)
		if err != nil {
			continue
		}
		d := time.Duration(v * float64(time.Millisecond))
		switch f[i] {
		case "p50-ms":
			run.P50 = d
		case "p95-ms":
			run.P95 = d
		}
	}
	return run
}
