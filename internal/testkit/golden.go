package testkit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that uses testkit: it makes Golden write
// what it gets instead of comparing. Packages use Updating rather than declaring their own.
var update = flag.Bool("update", false, "rewrite golden files (and committed figures) from the current output")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Golden compares got with the golden file at path and reports the first line that differs.
// With -update it writes got to path instead (creating its folders).
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		NoErr(t, os.MkdirAll(filepath.Dir(path), 0o755), "golden folder")
		NoErr(t, os.WriteFile(path, got, 0o644), "write golden file")
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range max(len(gl), len(wl)) {
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if !bytes.Equal(g, w) || i >= len(gl) || i >= len(wl) {
			whole := ""
			if len(got)+len(want) < 4096 {
				whole = "\n--- got\n" + string(got) + "\n--- want\n" + string(want)
			}
			t.Errorf("%s differs at line %d (go test -update rewrites it):\n got  %q\n want %q%s", path, i+1, g, w, whole)
			return
		}
	}
}
