package projection_test

import (
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// store is one projection under test, opened on a directory.
type store interface {
	projection.Projection
	Close() error
}

// contractSubject opens a projection on dir and counts the documents it holds.
type contractSubject struct {
	name    string
	open    func(t *testing.T, dir string) store
	count   func(t *testing.T, s store) int
	corrupt func(t *testing.T, dir string) // makes the closed store unreadable
}

func contractSubjects() []contractSubject {
	garbage := func(t *testing.T, file string) {
		t.Helper()
		testkit.NoErr(t, os.WriteFile(file, []byte("not a store"), 0o644), "corrupt "+file)
	}
	return []contractSubject{
		{
			name: "Catalog",
			open: func(t *testing.T, dir string) store { return open(t, dir) },
			count: func(t *testing.T, s store) int {
				n := 0
				testkit.NoErr(t, s.(*projection.Catalog).Read(func(snap *projection.Snapshot) error {
					n = snap.Len()
					return nil
				}), "read")
				return n
			},
			corrupt: func(t *testing.T, dir string) { garbage(t, filepath.Join(dir, "catalog.db")) },
		},
		{
			name: "Index",
			open: func(t *testing.T, dir string) store {
				x := &index.Index{Dir: dir, Logger: testkit.Logger()}
				testkit.NoErr(t, x.Open(), "open index")
				return x
			},
			count: func(t *testing.T, s store) int { return int(s.(*index.Index).State().Documents) },
			corrupt: func(t *testing.T, dir string) {
				files, err := filepath.Glob(filepath.Join(dir, "*", "index_meta.json"))
				testkit.NoErr(t, err, "glob")
				more, _ := filepath.Glob(filepath.Join(dir, "index_meta.json"))
				files = append(files, more...)
				if len(files) == 0 {
					t.Fatalf("no index_meta.json under %s", dir)
				}
				for _, f := range files {
					garbage(t, f)
				}
			},
		},
	}
}

// TestProjectionContract runs one body against every projection: what the runner relies on.
func TestProjectionContract(t *testing.T) {
	first := new(fold).put("a.md", "one two").put("x/b.md", "three").scan()
	for _, sub := range contractSubjects() {
		t.Run(sub.name, func(t *testing.T) {
			t.Run("ApplyTwiceIsIdempotent", func(t *testing.T) {
				s := sub.open(t, t.TempDir())
				defer s.Close()
				testkit.NoErr(t, s.Apply(first.batch()), "apply")
				n, seq := sub.count(t, s), s.Checkpoint()
				testkit.NoErr(t, s.Apply(first.batch()), "apply again")
				testkit.Equal(t, sub.count(t, s), n, "documents after the same batch twice")
				testkit.Equal(t, s.Checkpoint(), seq, "checkpoint after the same batch twice")
				testkit.Equal(t, n, 2, "documents")
			})
			t.Run("ResetEmpties", func(t *testing.T) {
				s := sub.open(t, t.TempDir())
				defer s.Close()
				testkit.NoErr(t, s.Apply(first.batch()), "apply")
				testkit.NoErr(t, s.Reset(projection.State{StreamID: "GUIDE@2", Project: "p"}), "reset")
				testkit.Equal(t, sub.count(t, s), 0, "documents after reset")
				testkit.Equal(t, s.Checkpoint(), uint64(0), "checkpoint after reset")
				streamID, project := s.Identity()
				testkit.Equal(t, streamID+" "+project, "GUIDE@2 p", "identity after reset")
			})
			t.Run("ResumeAfterReopen", func(t *testing.T) {
				dir := t.TempDir()
				s := sub.open(t, dir)
				testkit.NoErr(t, s.Reset(projection.State{StreamID: "GUIDE@1", Project: "p"}), "reset")
				testkit.NoErr(t, s.Apply(first.batch()), "apply")
				testkit.NoErr(t, s.Close(), "close")
				s = sub.open(t, dir)
				defer s.Close()
				testkit.Equal(t, s.Checkpoint(), first.seq, "checkpoint after reopen")
				testkit.Equal(t, sub.count(t, s), 2, "documents after reopen")
				next := &fold{seq: first.seq}
				next.put("c.md", "four").del("a.md")
				testkit.NoErr(t, s.Apply(next.batch()), "apply the continuation")
				testkit.Equal(t, s.Checkpoint(), next.seq, "checkpoint after the continuation")
				testkit.Equal(t, sub.count(t, s), 2, "documents after the continuation")
			})
			t.Run("UnreadableIsRebuilt", func(t *testing.T) {
				dir := t.TempDir()
				s := sub.open(t, dir)
				testkit.NoErr(t, s.Apply(first.batch()), "apply")
				testkit.NoErr(t, s.Close(), "close")
				sub.corrupt(t, dir)
				s = sub.open(t, dir) // fails the test if Open fails
				defer s.Close()
				testkit.Equal(t, s.Checkpoint(), uint64(0), "checkpoint of a rebuilt store")
				testkit.Equal(t, sub.count(t, s), 0, "documents of a rebuilt store")
				testkit.NoErr(t, s.Apply(first.batch()), "apply from the stream again")
				testkit.Equal(t, sub.count(t, s), 2, "documents after the rebuild")
			})
		})
	}
}

// oldCatalog is a catalog written in format "catalog/1", before session documents.
const oldCatalog = "testdata/catalog-format1.db"

// TestOldFormatCatalogIsRebuilt opens catalog files of older formats: each starts empty,
// to be rebuilt from the stream, rather than misreading the old records; and the old file
// is replaced, so that the disk its pages took is handed back.
func TestOldFormatCatalogIsRebuilt(t *testing.T) {
	if testkit.Updating() {
		writeOldCatalog(t)
	}
	for _, fixture := range []string{
		oldCatalog,
		// Written by the catalog of format "catalog/3" (bodies in catalog.db), holding a
		// document of 256 kB.
		"testdata/catalog-format3.db",
	} {
		t.Run(filepath.Base(fixture), func(t *testing.T) {
			b, err := os.ReadFile(fixture)
			testkit.NoErr(t, err, "read the fixture")
			dir := t.TempDir()
			file := filepath.Join(dir, "catalog.db")
			testkit.NoErr(t, os.WriteFile(file, b, 0o644), "copy the fixture")
			c := open(t, dir)
			defer c.Close()
			testkit.Equal(t, c.Checkpoint(), uint64(0), "checkpoint of an old-format catalog")
			n := 0
			testkit.NoErr(t, c.Read(func(s *projection.Snapshot) error { n = s.Len(); return nil }), "read")
			testkit.Equal(t, n, 0, "documents of an old-format catalog")
			if fi, err := os.Stat(file); err != nil || len(b) > 64<<10 && fi.Size() >= int64(len(b)) {
				t.Errorf("the catalog file holds %d bytes (%v) after the rebuild; the old one held %d", fi.Size(), err, len(b))
			}
		})
	}
}

func writeOldCatalog(t *testing.T) {
	t.Helper()
	testkit.NoErr(t, os.MkdirAll(filepath.Dir(oldCatalog), 0o755), "mkdir")
	_ = os.Remove(oldCatalog)
	db, err := bolt.Open(oldCatalog, 0o644, nil)
	testkit.NoErr(t, err, "create the fixture")
	err = db.Update(func(tx *bolt.Tx) error {
		st, err := tx.CreateBucket([]byte("state"))
		if err != nil {
			return err
		}
		if err := st.Put([]byte("format"), []byte("catalog/1")); err != nil {
			return err
		}
		if err := st.Put([]byte("seq"), []byte{0, 0, 0, 0, 0, 0, 0, 7}); err != nil {
			return err
		}
		docs, err := tx.CreateBucket([]byte("docs"))
		if err != nil {
			return err
		}
		return docs.Put([]byte("a.md"), []byte("a record of the old format"))
	})
	testkit.NoErr(t, err, "write the fixture")
	testkit.NoErr(t, db.Close(), "close the fixture")
}
