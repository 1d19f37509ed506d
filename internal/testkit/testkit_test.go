package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records a fatal failure instead of ending the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}
func (r *recorder) Errorf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// run calls f with r, catching the panic that stands for Fatalf's Goexit.
func (r *recorder) run(f func(testing.TB)) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	f(r)
}

func TestEventually(t *testing.T) {
	t.Run("HoldsAfterAFewPolls", func(t *testing.T) {
		n := 0
		Eventually(t, time.Minute, func() (bool, string) { n++; return n == 3, "" })
		Equal(t, n, 3, "polls")
	})
	t.Run("ErrFailsWithTheLastReason", func(t *testing.T) {
		r := &recorder{TB: t}
		n := 0
		r.run(func(tb testing.TB) {
			Eventually(tb, 20*time.Millisecond, func() (bool, string) { n++; return false, fmt.Sprintf("poll %d", n) })
		})
		if !strings.HasSuffix(r.failed, fmt.Sprintf(": poll %d", n)) {
			t.Fatalf("failure %q after %d polls", r.failed, n)
		}
	})
}

func TestGolden(t *testing.T) {
	if Updating() {
		t.Skip("with -update, Golden writes instead of comparing")
	}
	file := filepath.Join(t.TempDir(), "out.golden")
	NoErr(t, os.WriteFile(file, []byte("one\ntwo\nthree\n"), 0o644), "write")
	t.Run("Equal", func(t *testing.T) { Golden(t, file, []byte("one\ntwo\nthree\n")) })
	t.Run("ErrNamesTheFirstLineThatDiffers", func(t *testing.T) {
		r := &recorder{TB: t}
		r.run(func(tb testing.TB) { Golden(tb, file, []byte("one\n2\nthree\n")) })
		if !strings.Contains(r.failed, "differs at line 2") || !strings.Contains(r.failed, `"2"`) {
			t.Fatalf("failure %q", r.failed)
		}
	})
	t.Run("ErrShorter", func(t *testing.T) {
		r := &recorder{TB: t}
		r.run(func(tb testing.TB) { Golden(tb, file, []byte("one\ntwo\n")) })
		if !strings.Contains(r.failed, "differs at line 3") {
			t.Fatalf("failure %q", r.failed)
		}
	})
}
