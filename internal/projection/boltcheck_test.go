package projection

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/testkit/damage"
)

// nestedBolt writes a bbolt file shaped like the ones guide reads: buckets in buckets
// (scorch's root.bolt keeps a bucket per snapshot, one per segment in it), small
// buckets stored inline in their parent's page, values larger than a page, and enough
// keys for branch pages; some keys deleted, so that the file has free pages.
func nestedBolt(t testing.TB, file string, docs int) {
	t.Helper()
	db, err := bolt.Open(file, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for tx := range min(6, 1+docs/10) {
		err := db.Update(func(tx2 *bolt.Tx) error {
			top, err := tx2.CreateBucketIfNotExists([]byte("snapshots"))
			if err != nil {
				return err
			}
			snap, err := top.CreateBucket(fmt.Appendf(nil, "%08d", tx))
			if err != nil {
				return err
			}
			for seg := range 4 {
				b, err := snap.CreateBucket(fmt.Appendf(nil, "seg-%d", seg))
				if err != nil {
					return err
				}
				if err := b.Put([]byte("path"), fmt.Appendf(nil, "%012x.zap", tx*4+seg)); err != nil {
					return err
				}
				if seg%2 == 0 { // larger than a quarter page: a page of its own, not inline
					for j := range 8 {
						if err := b.Put(fmt.Appendf(nil, "deleted-%d", j), bytes.Repeat([]byte{byte(j)}, 300)); err != nil {
							return err
						}
					}
				}
			}
			flat, err := tx2.CreateBucketIfNotExists([]byte("docs"))
			if err != nil {
				return err
			}
			for i := range docs {
				v := make([]byte, 20+rng.IntN(200))
				if i%97 == 0 && docs > 50 {
					v = make([]byte, 9000) // spans pages
				}
				for j := range v {
					v[j] = byte(rng.UintN(256))
				}
				if err := flat.Put(fmt.Appendf(nil, "doc-%d-%05d", tx, i), v); err != nil {
					return err
				}
			}
			if tx > 0 {
				_ = top.DeleteBucket(fmt.Appendf(nil, "%08d", tx-1))
				for i := 0; i < docs; i += 3 {
					_ = flat.Delete(fmt.Appendf(nil, "doc-%d-%05d", tx-1, i))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readAll reads every key and value of every bucket, at every depth, as a program
// reading the file would; it is run only on a file the check passed.
func readAll(db *bolt.DB) error {
	var walk func(b *bolt.Bucket, depth int) error
	walk = func(b *bolt.Bucket, depth int) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				if c := b.Bucket(k); c != nil {
					return walk(c, depth+1)
				}
			}
			_ = bytes.Clone(v)
			return nil
		})
	}
	return db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b, 1) })
	})
}

// readsWhole opens file with bbolt and reads it whole, with a panic or a fault an error.
func readsWhole(file string) error {
	return Guard(func() error {
		db, err := bolt.Open(file, 0o644, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			return err
		}
		defer db.Close()
		return readAll(db)
	})
}

// TestCheckBoltOfDamagedFiles damages a bbolt file with nested buckets in many ways and
// checks it: the check never panics nor faults (bbolt's own structural check runs on a
// goroutine of its own, where a damaged page's panic kills the process), it finds the
// damage or the file reads whole, and a file it passes is read whole, every key of every
// bucket, without a panic.
func TestCheckBoltOfDamagedFiles(t *testing.T) {
	pristine := filepath.Join(t.TempDir(), "pristine.bolt")
	nestedBolt(t, pristine, 300)
	if err := CheckBolt(pristine); err != nil {
		t.Fatalf("a whole file: %v", err)
	}
	dir := t.TempDir()
	raw, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	passed, found := 0, 0
	try := func(name string, b []byte) {
		file := filepath.Join(dir, "damaged.bolt")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		err := CheckBolt(file)
		switch {
		case err == nil:
			passed++
			rerr := readsWhole(file)
			if rerr != nil {
				t.Errorf("%s: the check passed a file that does not read whole: %v", name, rerr)
			}
		case errors.Is(err, ErrDamaged):
			found++
		default:
			t.Errorf("%s: %v, not damage", name, err)
		}
	}
	// One run of random bytes at a random place, over many places: every kind of page and
	// every field of one gets hit.
	for seed := range 1000 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		b := bytes.Clone(raw)
		at := rng.IntN(len(b))
		for i := at; i < min(len(b), at+1+rng.IntN(16)); i++ {
			b[i] = byte(rng.UintN(256))
		}
		try(fmt.Sprintf("a run at %d (seed %d)", at, seed), b)
	}
	// The damage the data directory's tests do.
	for seed := range 100 {
		for _, k := range []damage.Kind{damage.Scribble, damage.Truncate, damage.Zero} {
			if k != damage.Scribble && seed >= 10 {
				continue
			}
			file := filepath.Join(dir, "copy.bolt")
			if err := os.WriteFile(file, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := damage.File(file, k, rand.New(rand.NewPCG(uint64(seed), 7))); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			try(fmt.Sprintf("%s (seed %d)", k, seed), b)
		}
	}
	t.Logf("%d damaged files found damaged, %d read whole", found, passed)
	if found == 0 {
		t.Fatal("no damage found")
	}
}

// FuzzCheckBolt checks bytes read as a bbolt file: the check never panics, faults or
// hangs, and a file it passes reads whole.
func FuzzCheckBolt(f *testing.F) {
	pristine := filepath.Join(f.TempDir(), "pristine.bolt")
	nestedBolt(f, pristine, 10)
	raw, err := os.ReadFile(pristine)
	if err != nil {
		f.Fatal(err)
	}
	// bbolt grows its file ahead of its pages: the seed is the pages only, which keeps it
	// small enough to mutate quickly.
	c := &pageChecker{r: bytes.NewReader(raw), size: int64(len(raw))}
	if err := c.chooseMeta(); err != nil {
		f.Fatal(err)
	}
	raw = raw[:c.meta.hwm*uint64(c.meta.pageSize)]
	f.Logf("seed of %d bytes", len(raw))
	f.Add(raw)
	f.Add(raw[:8192])
	f.Fuzz(func(t *testing.T, b []byte) {
		file := filepath.Join(t.TempDir(), "fuzz.bolt")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := CheckBolt(file); err != nil {
			return
		}
		rerr := readsWhole(file)
		if rerr != nil {
			t.Fatalf("the check passed a file that does not read whole: %v", rerr)
		}
	})
}
