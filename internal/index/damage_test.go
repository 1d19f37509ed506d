package index_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/testkit/damage"
)

// damageBatches are the batches of damageCorpus: enough documents for segments of some
// size, in a few batches (a few segments).
func damageBatches() []map[string]*string {
	rng := rand.New(rand.NewPCG(8, 9))
	var out []map[string]*string
	for b := range 3 {
		docs := map[string]*string{}
		for i := range 400 {
			var s strings.Builder
			for range 30 + rng.IntN(50) {
				fmt.Fprintf(&s, "w%d ", rng.IntN(3000))
			}
			docs[fmt.Sprintf("b%d/doc%d.md", b, i)] = str(s.String())
		}
		out = append(out, docs)
	}
	return out
}

// replay applies damageBatches to x as the runner does: events at or below its
// checkpoint are skipped.
func replay(t *testing.T, x *Index) {
	t.Helper()
	f := &feeder{x: x}
	for _, docs := range damageBatches() {
		f.batch(t, docs)
	}
}

// damageCorpus fills an index with damageBatches and returns searches and their hits.
func damageCorpus(t *testing.T, dir string) map[string][]string {
	t.Helper()
	return fillForDamage(t, &Index{Dir: dir, Logger: testkit.Logger()})
}

// fillForDamage opens x, fills it with damageBatches, closes it and returns searches and
// their hits.
func fillForDamage(t *testing.T, x *Index) map[string][]string {
	t.Helper()
	testkit.NoErr(t, x.Open(), "open")
	testkit.NoErr(t, x.Reset(stateFor()), "reset")
	replay(t, x)
	want := map[string][]string{}
	for i := range 40 {
		q := fmt.Sprintf("w%d", i*71)
		want[q] = pathsOf(t, x, q)
	}
	testkit.NoErr(t, x.Close(), "close")
	return want
}

// pathsOf searches q and returns the hits' paths, sorted, or the error as the only element.
func pathsOf(t *testing.T, x *Index, q string) []string {
	pq, err := querylang.Parse(q)
	testkit.NoErr(t, err, "parse")
	res, err := x.Search(context.Background(), search.Request{Query: pq, Limit: search.MaxLimit})
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	slices.Sort(out)
	return out
}

// TestDamagedIndexFiles damages each file of an index at rest in every way and opens it
// again: no panic, and either the index is empty, to be rebuilt from the stream, or every
// search finds what it found before.
func TestDamagedIndexFiles(t *testing.T) {
	base := filepath.Join(t.TempDir(), "index")
	want := damageCorpus(t, base)
	var files []string
	testkit.NoErr(t, filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(base, p)
			files = append(files, rel)
		}
		return err
	}), "list")
	t.Logf("files: %v", files)
	for _, file := range files {
		for _, k := range damage.Kinds {
			t.Run(file+"/"+string(k), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "index")
				testkit.CopyDir(t, base, dir)
				testkit.NoErr(t, damage.File(filepath.Join(dir, file), k, rand.New(rand.NewPCG(uint64(len(file)), 3))), "damage")
				x := &Index{Dir: dir, Logger: testkit.Logger()}
				testkit.NoErr(t, x.Open(), "open")
				defer x.Close()
				if x.Checkpoint() == 0 {
					if len(x.Repairs()) == 0 && file != "index_meta.json" {
						t.Error("rebuilt, but no repair reported")
					}
					testkit.NoErr(t, x.Reset(stateFor()), "reset")
				}
				// Scorch falls back to an older snapshot, with its own checkpoint, when a
				// segment of the latest is missing: the stream is replayed from there.
				replay(t, x)
				for q, hits := range want {
					testkit.Equal(t, pathsOf(t, x, q), hits, "hits of "+q)
				}
			})
		}
	}
}

// TestIndexDamagedWhileOpen scribbles over the segments of an open index, whose pages
// scorch reads through a mapping: searches answer what they answered before or an error,
// never other hits; a search that panics marks the index damaged, and Close returns.
func TestIndexDamagedWhileOpen(t *testing.T) {
	base := filepath.Join(t.TempDir(), "index")
	want := damageCorpus(t, base)
	x := &Index{Dir: base, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "open")
	zaps, _ := filepath.Glob(filepath.Join(base, "store", "*.zap"))
	for _, z := range zaps {
		// A segment the merger replaced since the listing is no longer the index's.
		if err := damage.File(z, damage.Scribble, rand.New(rand.NewPCG(1, 1))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("scribble: %v", err)
		}
	}
	for q := range want {
		got := pathsOf(t, x, q)
		if len(got) == 1 && strings.HasPrefix(got[0], "error: ") {
			continue
		}
		_ = got // a segment read through the mapping may not notice: damage at rest is what Open checks
	}
	closed := make(chan error, 1)
	go func() { closed <- x.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute): // a hang, not a measure
		t.Fatal("Close hangs after searches over damaged segments")
	}
}

// fdLimit is the limit on open files under which the process can open spare more: the
// limit bounds the numbers of new files (each the lowest free), not their count.
func fdLimit(t *testing.T, spare int) uint64 {
	t.Helper()
	d, err := os.Open("/proc/self/fd")
	testkit.NoErr(t, err, "open files")
	names, err := d.Readdirnames(-1)
	own := d.Fd()
	d.Close()
	testkit.NoErr(t, err, "open files")
	open := map[uint64]bool{}
	for _, n := range names {
		fd, err := strconv.ParseUint(n, 10, 64)
		if err == nil && fd != uint64(own) {
			open[fd] = true
		}
	}
	limit := uint64(0)
	for free := 0; free < spare || open[limit]; limit++ {
		if !open[limit] {
			free++
		}
	}
	return limit
}

// TestIndexOpenFailingForLackOfFilesKeepsIt opens an index when the process may open no
// more files (EMFILE), with one file more to spare each time until the open succeeds:
// every open that fails says so, and the index is kept, never deleted and rebuilt — in
// particular when the files run out while scorch loads a segment, which scorch logs and
// passes over, opening the index as if it held nothing. Once files can be opened again,
// it opens with everything it held.
func TestIndexOpenFailingForLackOfFilesKeepsIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	// Several segments, unmerged: an open then holds a file of each at once, and runs out
	// partway through loading them.
	want := fillForDamage(t, &Index{Dir: dir, Logger: testkit.Logger(), IdleMerge: time.Hour})
	segs, _ := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	t.Logf("%d segments", len(segs))
	var lim syscall.Rlimit
	testkit.NoErr(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim), "getrlimit")
	for spare := 0; ; spare++ {
		if spare > 64 {
			t.Fatal("still no open with 64 files to spare")
		}
		low := lim
		low.Cur = fdLimit(t, spare)
		testkit.NoErr(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low), "setrlimit")
		x := &Index{Dir: dir, Logger: testkit.Logger()}
		err := x.Open()
		testkit.NoErr(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim), "restore the limit")
		if err == nil {
			t.Logf("opened with %d files to spare", spare)
			testkit.NoErr(t, x.Close(), "close")
			break
		}
		t.Logf("with %d files to spare: %v", spare, err)
		if !strings.Contains(err.Error(), "too many open files") {
			t.Fatalf("with %d files to spare, the open failed with %v, not for lack of files", spare, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
			t.Fatalf("with %d files to spare, the open failed, and the index is gone: %v", spare, err)
		}
	}
	x := &Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "open again")
	defer x.Close()
	if x.Checkpoint() == 0 {
		t.Fatal("the index was deleted")
	}
	for q, hits := range want {
		testkit.Equal(t, pathsOf(t, x, q), hits, "hits of "+q)
	}
}
