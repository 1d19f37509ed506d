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

// Links are documents as the indexer publishes them: one to a file inside the root shows
// that file's bytes, one that leaves the root or leads nowhere is listed without content.
func TestDiskListsLinks(t *testing.T) {
	root, outside := filepath.Join(t.TempDir(), "root"), t.TempDir()
	WriteFile(t, root, "a.md", "# Alpha\n\nalpha words")
	WriteFile(t, outside, "far.md", "far away")
	NoErr(t, os.Symlink("a.md", filepath.Join(root, "inside.md")), "ln -s inside")
	NoErr(t, os.Symlink(filepath.Join(outside, "far.md"), filepath.Join(root, "outside.md")), "ln -s outside")
	NoErr(t, os.Symlink("gone.md", filepath.Join(root, "broken.md")), "ln -s broken")
	Equal(t, Disk(t, root), map[string]string{
		"a.md": "# Alpha\n\nalpha words", "inside.md": "# Alpha\n\nalpha words", "outside.md": "", "broken.md": "",
	}, "documents")
	p := NewPipeline(t, nil, root, "")
	p.Reconcile()
	RequireMatchesDisk(t, p.Client, root)
}
