package index_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/testkit"
)

// TestFullDisk: the index on a 1 MB tmpfs, fed until scorch cannot persist. The failure is
// reported (Err) and holds the next batches off (Apply fails with ErrCannotWrite) instead
// of piling them up in memory; once space is back the persister succeeds by itself, the
// index applies again, and everything applied is on disk. (Needs root to mount the tmpfs.)
func TestFullDisk(t *testing.T) {
	dir, resize := testkit.Tmpfs(t, "1m")
	x := openIndex(t, filepath.Join(dir, "index"))
	f := &feeder{x: x}
	r := rand.New(rand.NewPCG(3, 4))
	doc := func() *string {
		var b strings.Builder
		for range 2000 {
			for range 4 + r.IntN(6) {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
			b.WriteByte(' ')
		}
		return str(b.String())
	}
	applied, n := 0, 0
	apply := func() error {
		n++
		err := f.prepare(map[string]*string{fmt.Sprintf("d%04d.md", n): doc()})()
		if err == nil {
			applied++
		}
		return err
	}
	var applyErr error
	testkit.Eventually(t, time.Minute, func() (bool, string) {
		applyErr = apply()
		return applyErr != nil, fmt.Sprintf("%d documents applied, no error yet (Err %v)", applied, x.Err())
	})
	if !errors.Is(applyErr, ErrCannotWrite) || !strings.Contains(applyErr.Error(), "no space left on device") {
		t.Fatalf("apply on a full disk: %v", applyErr)
	}
	if err := x.Err(); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("Err on a full disk: %v", err)
	}

	resize("64m")
	testkit.Eventually(t, time.Minute, func() (bool, string) {
		err := x.Err()
		return err == nil, fmt.Sprintf("still failing: %v", err)
	})
	testkit.NoErr(t, apply(), "apply once space is back")
	x.Flush()
	if p, a := x.Persisted(), x.Checkpoint(); p != a {
		t.Fatalf("persisted up to %d of %d", p, a)
	}
	if got := x.State().Documents; got != uint64(applied) {
		t.Fatalf("%d documents in the index, %d applied", got, applied)
	}
}
