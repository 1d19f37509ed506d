// Command testsummary reads `go test -json` on stdin and prints what a reader of a whole
// run needs: one line per package as it finishes, the output of every test that failed,
// and at the end the tests that were skipped with the reason each gave, so that a skip is
// seen without -v. It exits 1 when a test or a build failed.
//
//	go test -json ./... | testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (see go doc test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Elapsed    float64
	Output     string
}

// key names a test of a package; Test is "" for the package itself.
type key struct{ pkg, test string }

// skip is a skipped test and the reason it gave.
type skip struct{ name, reason string }

// summary folds the events of a run.
type summary struct {
	out     io.Writer
	output  map[key][]string // output of what has not finished yet
	skipped []skip
	passed  int
	failed  []string
	bad     bool // a build or a package failed
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[key][]string{}}
}

// add takes one line of input; a line that is not JSON is printed as it is.
func (s *summary) add(line []byte) {
	var e event
	if err := json.Unmarshal(line, &e); err != nil || (e.Action == "" && e.ImportPath == "") {
		fmt.Fprintln(s.out, string(line))
		return
	}
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.out, e.Output)
	case "build-fail":
		s.bad = true
	case "output":
		s.output[k] = append(s.output[k], e.Output)
	case "pass":
		if e.Test == "" {
			fmt.Fprintf(s.out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			s.forget(e.Package)
		} else {
			s.passed++
		}
		delete(s.output, k)
	case "skip":
		if e.Test == "" {
			fmt.Fprintf(s.out, "?   \t%s\t[no test files]\n", e.Package)
			s.forget(e.Package)
		} else {
			s.skipped = append(s.skipped, skip{e.Package + " " + e.Test, reason(s.output[k])})
		}
		delete(s.output, k)
	case "fail":
		if e.Test != "" {
			s.failed = append(s.failed, e.Package+" "+e.Test)
			fmt.Fprintf(s.out, "--- FAIL: %s (%s)\n%s", e.Test, e.Package, strings.Join(s.output[k], ""))
			delete(s.output, k)
			return
		}
		s.bad = true
		// What the package printed outside a finished test: a panic, a timeout, TestMain.
		for k2, lines := range s.output {
			if k2.pkg != e.Package {
				continue
			}
			for _, l := range lines {
				if k2.test != "" || !strings.HasPrefix(l, "FAIL") {
					fmt.Fprint(s.out, l)
				}
			}
			delete(s.output, k2)
		}
		fmt.Fprintf(s.out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
}

// forget drops what a finished package printed outside its tests.
func (s *summary) forget(pkg string) {
	for k := range s.output {
		if k.pkg == pkg {
			delete(s.output, k)
		}
	}
}

// reason is a skipped test's message: its output without the lines that go test adds.
func reason(lines []string) string {
	var r []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		r = append(r, t)
	}
	if len(r) == 0 {
		return "(no reason given)"
	}
	return strings.Join(r, " / ")
}

// report prints the skipped tests and the totals, and says whether the run failed.
func (s *summary) report() (failed bool) {
	if len(s.skipped) > 0 {
		fmt.Fprintf(s.out, "\nskipped (%d):\n", len(s.skipped))
		for _, k := range s.skipped {
			fmt.Fprintf(s.out, "  %s: %s\n", k.name, k.reason)
		}
	}
	if len(s.failed) > 0 {
		fmt.Fprintf(s.out, "\nfailed (%d):\n", len(s.failed))
		for _, f := range s.failed {
			fmt.Fprintf(s.out, "  %s\n", f)
		}
	}
	fmt.Fprintf(s.out, "\n%d passed, %d failed, %d skipped\n", s.passed, len(s.failed), len(s.skipped))
	return s.bad || len(s.failed) > 0
}

func main() {
	s := newSummary(os.Stdout)
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			s.add([]byte(strings.TrimRight(string(line), "\n")))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
	}
	if s.report() {
		os.Exit(1)
	}
}
