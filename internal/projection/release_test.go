package projection_test

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// mappedRSS is how much of the catalog file is resident in this process's mapping of it,
// from /proc/self/smaps.
func mappedRSS(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	testkit.NoErr(t, err, "smaps")
	defer f.Close()
	var rss int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		// A mapping's first line: its addresses, permissions, offset, device, inode and,
		// for a file, its path.
		if fs := strings.Fields(l); len(fs) >= 5 && strings.Contains(fs[0], "-") && len(fs[1]) == 4 {
			in = len(fs) >= 6 && strings.HasPrefix(fs[5], dir) && strings.HasSuffix(fs[5], "catalog.db")
			continue
		}
		if v, ok := strings.CutPrefix(l, "Rss:"); ok && in {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			testkit.NoErr(t, err, "Rss of "+l)
			rss += kb << 10
		}
	}
	return rss
}

// TestCatalogReleasesMappedPagesWhileApplying: while batches are applied, the pages of the
// catalog file mapped into the process are those the batches touched, not the whole file
// at each remap as it grows (the mapping populated for the load is not for the remaps):
// without releases they pile up (at most the file, never all of it at once), and each
// batch that leaves the file ReleaseEvery past the last release hands them back. Between
// two releases they pile up again, to several times ReleaseEvery here (each batch touches
// pages of the content's across the file): the bound is the release, not ReleaseEvery.
// Where the last remap falls (the file crossing a power of two) depends on the layout, so
// the pages are read after every batch, not only the last.
func TestCatalogReleasesMappedPagesWhileApplying(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/smaps")
	}
	const every = 512 << 10
	// grow applies the batches and returns the most pages mapped after any of them, and
	// the most after a batch that released (the file, which ends at its last page, grew
	// by ReleaseEvery since the last release), with how many released.
	grow := func(releaseEvery int64) (most, afterRelease int64, releases int, size int64) {
		dir := t.TempDir()
		c := &projection.Catalog{Dir: dir, Logger: testkit.Logger(), ReleaseEvery: releaseEvery}
		testkit.NoErr(t, c.Open(), "open catalog")
		defer c.Close()
		var releasedAt int64
		f := new(fold)
		for b := range 120 {
			f.evs = nil
			for i := range 100 {
				// In the order of a walk, as a first index publishes them.
				f.put(fmt.Sprintf("folder%03d/doc%05d.md", b/4, b*100+i), fmt.Sprintf("# Title %d\n\n## One\n\n## Two\n\nSome text of document %d, %s", i, b*100+i, strings.Repeat("words ", i)))
			}
			testkit.NoErr(t, c.Apply(f.batch()), "apply")
			rss := mappedRSS(t, dir)
			most = max(most, rss)
			st, err := os.Stat(dir + "/catalog.db")
			testkit.NoErr(t, err, "stat")
			size = st.Size()
			if releaseEvery > 0 && size-releasedAt >= releaseEvery {
				releasedAt = size
				releases++
				afterRelease = max(afterRelease, rss)
			}
		}
		return most, afterRelease, releases, size
	}
	kept, _, _, size := grow(-1)
	if kept > size*9/10 {
		t.Errorf("without releases, %d bytes of a %d-byte file resident: more than the batches touched", kept, size)
	}
	if kept < 4*every {
		t.Fatalf("without releases, %d bytes of a %d-byte file resident: the test measures nothing", kept, size)
	}
	_, after, releases, size := grow(every)
	if releases < 4 {
		t.Fatalf("%d releases in a file of %d bytes, releasing every %d: the test measures nothing", releases, size, every)
	}
	if after > every/4 {
		t.Errorf("releasing every %d bytes of growth: %d bytes of a %d-byte file resident after a release (%d at most without releases)", every, after, size, kept)
	}
}
