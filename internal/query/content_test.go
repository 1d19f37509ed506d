package query

import "testing"

// FuzzContentPattern: any pattern argument compiles or is refused as invalid_pattern.
func FuzzContentPattern(f *testing.F) {
	for _, s := range []string{"*.md", "intro", "**/*.py", `a\/b`, "a/**b/c", "../x", "[a-", "./x//y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		cp, qerr := compilePattern(p)
		if qerr != nil {
			if qerr.Type != ErrInvalidPattern {
				t.Fatalf("%q: %v", p, qerr)
			}
			return
		}
		if len(cp.segs) == 0 {
			t.Fatalf("%q: no segments", p)
		}
	})
}
