package index_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/text"
)

// rgWord is the oracle: a Go reimplementation of `rg -l -w -i WORD` for one literal word.
// Go's (?i) compares by simple case folding, as ripgrep does, and the class below is
// ripgrep's Unicode \w. It is written independently of the index's tokenizer on purpose.
func rgWord(word string) *regexp.Regexp {
	const w = `\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}\x{200C}\x{200D}`
	return regexp.MustCompile(`(?i)(?:^|[^` + w + `])` + regexp.QuoteMeta(word) + `(?:$|[^` + w + `])`)
}

// TestFindsWhatRipgrepFinds: for every word of a multilingual tree (English, German,
// Russian, Korean, Chinese, and a few traps), in its own case and in upper case, search
// lists every document that `rg -l -w -i WORD` lists. Ripgrep itself is asked too when it
// is installed; the Go oracle always runs, so CI never skips the check.
func TestFindsWhatRipgrepFinds(t *testing.T) {
	const dir = "../../testdata/multilingual"
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	f := &feeder{x: x}
	files := map[string]*string{}
	entries, err := os.ReadDir(dir)
	testkit.NoErr(t, err, "read testdata")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		testkit.NoErr(t, err, "read")
		s := string(b)
		files[e.Name()] = &s
	}
	f.batch(t, files)

	words := map[string]bool{}
	for _, c := range files {
		text.Words([]byte(*c), func(s text.Span) bool {
			words[(*c)[s.Start:s.End]] = true
			return true
		})
	}
	rg, _ := exec.LookPath("rg")
	if rg == "" {
		t.Log("ripgrep not installed: checking against the Go oracle only")
	}
	checked := 0
	for w := range words {
		for _, q := range []string{w, strings.ToUpper(w)} {
			pq, err := querylang.Parse(q)
			if err != nil {
				continue // a common word alone: refused by design, tested elsewhere
			}
			got := paths(t, x, q, "")
			var want []string
			re := rgWord(q)
			for name, c := range files {
				if re.MatchString(*c) {
					want = append(want, name)
				}
			}
			if rg != "" && q == w { // rg folds case itself: once per word is enough
				out, _ := exec.Command(rg, "-l", "-w", "-i", "-F", "--", q, dir).Output()
				for _, l := range strings.Fields(string(out)) {
					if n := filepath.Base(l); !slices.Contains(want, n) {
						want = append(want, n)
					}
				}
			}
			for _, n := range want {
				if !slices.Contains(got, n) {
					t.Errorf("search %q (%s) misses %s, which rg -w -i lists; found %v", q, pq, n, got)
				}
			}
			checked++
		}
	}
	if checked < 200 {
		t.Fatalf("only %d words checked", checked)
	}
	t.Logf("%d words checked, in their case and upper case", checked)
}
