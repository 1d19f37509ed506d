package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestSummary: a run with a pass, a skip, a failure, a package without tests and a build
// failure prints each package's line, the failure's output, the skip with its reason, and
// says the run failed.
func TestSummary(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "run.jsonl"))
	testkit.NoErr(t, err, "read input")
	var out bytes.Buffer
	s := newSummary(&out)
	sc := bufio.NewScanner(bytes.NewReader(in))
	for sc.Scan() {
		s.add(sc.Bytes())
	}
	testkit.Equal(t, s.report(), true, "the run failed")
	testkit.Golden(t, filepath.Join("testdata", "run.golden"), out.Bytes())
}
