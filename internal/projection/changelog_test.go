package projection_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// randomHistory is a history of n events over a few paths in two folders, with session
// documents, scans, and events that say what their document was before, in batches of a
// few events, their sequences from 1.
func randomHistory(r *rand.Rand, n int) []events.Batch {
	var out []events.Batch
	var b events.Batch
	prev := map[string]uint64{}
	for seq := uint64(1); seq <= uint64(n); seq++ {
		e := events.Event{Project: "p", Seq: seq, Time: time.Unix(1700000000+int64(seq), int64(seq)), Path: fmt.Sprintf("f%d/d%d.md", r.IntN(2), r.IntN(12))}
		switch k := r.IntN(12); {
		case k == 0:
			e.Op, e.Scan, e.Path = events.OpScanEnd, &events.Scan{ID: fmt.Sprint(seq)}, ""
		case k == 1:
			e.Op, e.Session, e.Path, e.Size, e.Status, e.Hash = events.OpUpsert, "tok", "mine.md", 1, events.StatusOK, events.HashContent([]byte("x"))
			e.Content = []byte("x")
		case k <= 3:
			e.Op = events.OpDelete
		default:
			c := fmt.Appendf(nil, "# %d\n", seq)
			e.Op, e.Size, e.Mtime, e.Hash, e.Content, e.Inode = events.OpUpsert, int64(len(c)), time.Unix(int64(seq), 7).UTC(), events.HashContent(c), c, seq%5
			e.Status = events.StatusOK
			if k == 4 {
				e.Status, e.Reason, e.Content = events.StatusBinary, "binary content", nil
			}
		}
		if e.Path != "" && e.Session == "" {
			if e.PrevSeq = prev[e.Path]; e.PrevSeq != 0 && r.IntN(2) == 0 {
				e.Prev = &events.Prev{Op: events.OpUpsert, Size: int64(seq), Hash: "h", Status: events.StatusOK, Inode: seq}
			}
			prev[e.Path] = seq
		}
		b.Events = append(b.Events, e)
		if r.IntN(4) == 0 {
			out, b = append(out, b), events.Batch{}
		}
	}
	return append(out, b)
}

// modelWindow is what the stream's Window returns after the history: the last kept events
// of each document of the tree (every one when kept < 0), above after and up to last,
// below folder, without content.
func modelWindow(h []events.Batch, kept int, folder string, after, last uint64) []events.Event {
	var all []events.Event
	for _, b := range h {
		for _, e := range b.Events {
			if e.Session == "" && (e.Op == events.OpUpsert || e.Op == events.OpDelete) {
				all = append(all, e)
			}
		}
	}
	count := map[string]int{}
	var out []events.Event
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		if count[e.Path]++; kept >= 0 && count[e.Path] > kept {
			continue
		}
		if e.Seq > after && e.Seq <= last && (folder == "" || strings.HasPrefix(e.Path, folder+"/")) {
			e.Content = nil
			out = append(out, e)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// requireLog checks every window of the log against the model's, for every cursor from
// from and every folder.
func requireLog(t *testing.T, c *projection.Catalog, h []events.Batch, kept int, what string) {
	t.Helper()
	lh, from, ok := c.LogHorizon()
	if !ok {
		t.Fatalf("%s: no change log", what)
	}
	for after := from; after <= lh.Last; after++ {
		for _, folder := range []string{"", "f0", "f1", "f2"} {
			got, upTo, complete, err := c.LogWindow(testkit.Context(t), lh, "p", folder, after, 1<<20)
			testkit.NoErr(t, err, what)
			want := modelWindow(h, kept, folder, after, lh.Last)
			if len(got) == 0 && len(want) == 0 {
				got, want = nil, nil
			}
			for i := range got {
				if !got[i].Time.Equal(want[i].Time) {
					t.Fatalf("%s: after %d: event %d at %v, want %v", what, after, i, got[i].Time, want[i].Time)
				}
				got[i].Time = want[i].Time
			}
			if !reflect.DeepEqual(got, want) || upTo != lh.Last || !complete {
				t.Fatalf("%s: after %d, folder %q: up to %d (complete %v)\n got %+v\nwant %+v", what, after, folder, upTo, complete, got, want)
			}
		}
	}
}

func applyAll(t *testing.T, c *projection.Catalog, h []events.Batch) {
	t.Helper()
	for _, b := range h {
		testkit.NoErr(t, c.Apply(b), "apply")
	}
}

// TestChangeLogKeepsWhatTheStreamKeeps: the log holds the last events of each document of
// the tree, as many as the stream keeps (or all of them), never a session document's nor a
// scan, each as the stream's Window returns it; the same after the catalog is opened again.
func TestChangeLogKeepsWhatTheStreamKeeps(t *testing.T) {
	for _, kept := range []int{1, 3, -1} {
		t.Run(fmt.Sprintf("Kept%d", kept), func(t *testing.T) {
			h := randomHistory(rand.New(rand.NewPCG(3, uint64(kept+5))), 300)
			dir := t.TempDir()
			c := open(t, dir)
			testkit.NoErr(t, c.Reset(projection.State{StreamID: "S@1", Project: "p"}), "reset")
			testkit.NoErr(t, c.KeepHistory(int64(kept)), "keep history")
			applyAll(t, c, h)
			lh, from, _ := c.LogHorizon()
			testkit.Equal(t, lh, events.Horizon{Last: 300, Kept: int64(max(kept, -1)), ID: "S@1"}, "horizon")
			testkit.Equal(t, from, uint64(0), "the log's start")
			requireLog(t, c, h, kept, "applied")
			testkit.NoErr(t, c.Close(), "close")
			c = open(t, dir)
			defer c.Close()
			requireLog(t, c, h, kept, "reopened")
		})
	}
}

// TestChangeLogStartsWhenTold: a catalog told nothing of the stream's history (as one
// written by an older program) keeps no log; told, it keeps one from its checkpoint, which
// answers for cursors from there. Told another number of events per document, it starts
// again from its checkpoint; reset, from the stream's start.
func TestChangeLogStartsWhenTold(t *testing.T) {
	h := randomHistory(rand.New(rand.NewPCG(4, 4)), 200)
	c := open(t, t.TempDir())
	defer c.Close()
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "S@1", Project: "p"}), "reset")
	applyAll(t, c, h[:len(h)/2])
	if _, _, ok := c.LogHorizon(); ok {
		t.Fatal("a log without being told how many events the stream keeps")
	}
	at := c.Checkpoint()
	testkit.NoErr(t, c.KeepHistory(3), "keep history")
	applyAll(t, c, h[len(h)/2:])
	_, from, ok := c.LogHorizon()
	if !ok || from != at {
		t.Fatalf("the log starts at %d (ok %v), want %d", from, ok, at)
	}
	requireLog(t, c, h, 3, "from the checkpoint")

	at = c.Checkpoint()
	testkit.NoErr(t, c.KeepHistory(2), "keep another number")
	lh, from, _ := c.LogHorizon()
	testkit.Equal(t, [2]uint64{from, uint64(lh.Kept)}, [2]uint64{at, 2}, "start and events kept")
	got, _, _, err := c.LogWindow(testkit.Context(t), lh, "p", "", 0, 1000)
	testkit.NoErr(t, err, "window")
	testkit.Equal(t, len(got), 0, "events before the new start")

	testkit.NoErr(t, c.Reset(projection.State{StreamID: "S@2", Project: "p"}), "reset")
	lh, from, ok = c.LogHorizon()
	if !ok || from != 0 || lh.Last != 0 || lh.ID != "S@2" || lh.Kept != 2 {
		t.Fatalf("after a reset: %+v from %d (ok %v)", lh, from, ok)
	}
	applyAll(t, c, h)
	requireLog(t, c, h, 2, "rebuilt")
}

// sealed is a state value as the catalog stores it: the value, then its checksum.
func sealed(v []byte) []byte {
	return binary.BigEndian.AppendUint32(v, crc32.Checksum(v, crc32.MakeTable(crc32.Castagnoli)))
}

// TestChangeLogOfAnotherProgramIsDropped: a catalog whose checkpoint moved on without its
// log (an older program applied batches in between, keeping none) drops the log at open,
// rather than answer without those batches' events, and keeps one again from its
// checkpoint once told.
func TestChangeLogOfAnotherProgramIsDropped(t *testing.T) {
	h := randomHistory(rand.New(rand.NewPCG(5, 5)), 120)
	dir := t.TempDir()
	c := open(t, dir)
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "S@1", Project: "p"}), "reset")
	testkit.NoErr(t, c.KeepHistory(3), "keep history")
	applyAll(t, c, h[:len(h)/2])
	testkit.NoErr(t, c.Close(), "close")

	// An older program's batch: the checkpoint moves, the log does not.
	db, err := bolt.Open(filepath.Join(dir, "catalog.db"), 0o644, nil)
	testkit.NoErr(t, err, "open the file")
	var seq uint64
	testkit.NoErr(t, db.Update(func(tx *bolt.Tx) error {
		st := tx.Bucket([]byte("state"))
		v := st.Get([]byte("seq"))
		seq = binary.BigEndian.Uint64(v[:8]) + 1
		return st.Put([]byte("seq"), sealed(binary.BigEndian.AppendUint64(nil, seq)))
	}), "move the checkpoint")
	testkit.NoErr(t, db.Close(), "close the file")

	c = open(t, dir)
	defer c.Close()
	if _, _, ok := c.LogHorizon(); ok {
		t.Fatal("the log of another program's checkpoint was kept")
	}
	testkit.NoErr(t, c.KeepHistory(3), "keep history")
	lh, from, ok := c.LogHorizon()
	if !ok || from != seq || lh.Last != seq {
		t.Fatalf("the log starts at %d, up to %d (ok %v); want %d", from, lh.Last, ok, seq)
	}
	got, _, _, err := c.LogWindow(testkit.Context(t), events.Horizon{Last: seq}, "p", "", 0, 1000)
	testkit.NoErr(t, err, "window")
	testkit.Equal(t, len(got), 0, "events kept from before the log started again")
}

// TestChangeLogDamaged: a log entry that does not match its checksum is never returned:
// the read fails, and the catalog says it was built from no stream, to be rebuilt.
func TestChangeLogDamaged(t *testing.T) {
	h := randomHistory(rand.New(rand.NewPCG(6, 6)), 60)
	dir := t.TempDir()
	c := open(t, dir)
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "S@1", Project: "p"}), "reset")
	testkit.NoErr(t, c.KeepHistory(3), "keep history")
	applyAll(t, c, h)
	testkit.NoErr(t, c.Close(), "close")
	db, err := bolt.Open(filepath.Join(dir, "catalog.db"), 0o644, nil)
	testkit.NoErr(t, err, "open the file")
	testkit.NoErr(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("log"))
		k, v := b.Cursor().Last()
		v = append([]byte(nil), v...)
		v[len(v)/2] ^= 0x20
		return b.Put(append([]byte(nil), k...), v)
	}), "damage an entry")
	testkit.NoErr(t, db.Close(), "close the file")

	c = open(t, dir)
	defer c.Close()
	lh, _, ok := c.LogHorizon()
	if !ok {
		t.Fatal("no log")
	}
	_, _, _, err = c.LogWindow(context.Background(), lh, "p", "", 0, 1000)
	if !errors.Is(err, projection.ErrDamaged) {
		t.Fatalf("reading a damaged entry: %v", err)
	}
	if sid, _ := c.Identity(); sid != "" {
		t.Fatalf("the catalog still says it was built from %q", sid)
	}
	if _, _, ok := c.LogHorizon(); ok {
		t.Fatal("a damaged catalog's log still answers")
	}
}

// TestChangeLogStoresListsOfChangedDocumentsOnly: after a first scan of 300 documents, one
// event each, the log stores no list of sequences (each is its record's Seq); a document
// changed since and one deleted have theirs. Before, every document had one: 9 MB of 100k
// paths repeated. The log still answers as the stream does, opened again too.
func TestChangeLogStoresListsOfChangedDocumentsOnly(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "S@1", Project: "p"}), "reset")
	testkit.NoErr(t, c.KeepHistory(3), "keep history")
	var h []events.Batch
	f := new(fold)
	for i := range 300 {
		f.put(fmt.Sprintf("f%d/d%03d.md", i%2, i), fmt.Sprintf("# %d\n", i))
	}
	h = append(h, f.batch())
	f = &fold{seq: f.seq}
	f.put("f0/d010.md", "# changed\n").del("f1/d011.md")
	h = append(h, f.batch())
	for i := range h {
		for j := range h[i].Events {
			h[i].Events[j].Time = time.Unix(1700000000, 0)
		}
	}
	applyAll(t, c, h[:1])
	testkit.Equal(t, logLists(t, c, dir), []string{}, "lists after the first scan")
	c = open(t, dir)
	applyAll(t, c, h[1:])
	testkit.Equal(t, logLists(t, c, dir), []string{"f0/d010.md", "f1/d011.md"}, "lists after a change and a delete")
	c = open(t, dir)
	defer c.Close()
	requireLog(t, c, h, 3, "reopened")
}

// logLists closes c and returns the paths whose lists of sequences the log stores.
func logLists(t *testing.T, c *projection.Catalog, dir string) []string {
	t.Helper()
	testkit.NoErr(t, c.Close(), "close")
	db, err := bolt.Open(filepath.Join(dir, "catalog.db"), 0o444, &bolt.Options{ReadOnly: true})
	testkit.NoErr(t, err, "open the catalog's file")
	defer db.Close()
	out := []string{}
	testkit.NoErr(t, db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("logpaths")).ForEach(func(k, _ []byte) error { out = append(out, string(k)); return nil })
	}), "read the lists")
	return out
}

// TestChangeLogPacksItsEntries: the log of a first scan of 5,000 documents in folders (paths
// as a generated tree names them, a stream's times, inodes) takes at most 80 bytes of pages
// an event. Each entry its own key, as it was, took 147: its path whole (the log is every
// replica's, partitioned or not, 15 MB at 100k documents), a key, a checksum and bbolt's
// header each. The log still answers as the stream does, after changes and deletes too,
// reopened.
func TestChangeLogPacksItsEntries(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "S@1", Project: "p"}), "reset")
	testkit.NoErr(t, c.KeepHistory(2), "keep history")
	const n = 5000
	f := new(fold)
	var h []events.Batch
	for i := range n {
		f.put(fmt.Sprintf("section-%02d/topic-%03d/notes-%04d.md", i/500, i/25, i), fmt.Sprintf("# Notes %d\n\nText.\n", i))
		e := &f.evs[len(f.evs)-1]
		e.Time = time.Unix(1700000000+int64(i)/300, int64(i)*7919%1e9)
		e.Mtime = time.Unix(1690000000+int64(i)%977, int64(i)*104729%1e9).UTC()
		e.Inode = 1 << 20 * uint64(i+1)
		if len(f.evs) == 500 {
			h, f = append(h, f.batch()), &fold{seq: f.seq}
		}
	}
	applyAll(t, c, h)
	testkit.NoErr(t, c.Close(), "close")
	db, err := bolt.Open(filepath.Join(dir, "catalog.db"), 0o444, &bolt.Options{ReadOnly: true})
	testkit.NoErr(t, err, "open the catalog's file")
	var pages int
	testkit.NoErr(t, db.View(func(tx *bolt.Tx) error {
		s := tx.Bucket([]byte("log")).Stats()
		pages = s.BranchAlloc + s.LeafAlloc
		return nil
	}), "the log's pages")
	testkit.NoErr(t, db.Close(), "close the file")
	t.Logf("the log: %d bytes of pages for %d events, %.1f an event", pages, n, float64(pages)/n)
	if per := float64(pages) / n; per > 80 {
		t.Fatalf("the log takes %.1f bytes of pages an event (%d bytes for %d), want at most 80", per, pages, n)
	}

	c = open(t, dir)
	f = &fold{seq: f.seq}
	for i := 0; i < n; i += 97 {
		p := fmt.Sprintf("section-%02d/topic-%03d/notes-%04d.md", i/500, i/25, i)
		f.put(p, "# changed\n").put(p, "# changed again\n")
		if i%3 == 0 {
			f.del(p)
		}
	}
	for i := range f.evs {
		f.evs[i].Time = time.Unix(1700001000, int64(i))
	}
	h = append(h, f.batch())
	applyAll(t, c, h[len(h)-1:])
	testkit.NoErr(t, c.Close(), "close")
	c = open(t, dir)
	defer c.Close()
	lh, from, ok := c.LogHorizon()
	if !ok {
		t.Fatal("no change log")
	}
	for _, after := range []uint64{from, from + 1, 499, 500, 501, 4999, 5000, 5001, 5050, lh.Last - 1} {
		for _, folder := range []string{"", "section-03", "section-03/topic-140", "section-09/topic-199"} {
			got, upTo, complete, err := c.LogWindow(testkit.Context(t), lh, "p", folder, after, 1<<20)
			testkit.NoErr(t, err, "window")
			want := modelWindow(h, 2, folder, after, lh.Last)
			if len(got) != len(want) || upTo != lh.Last || !complete {
				t.Fatalf("after %d, folder %q: %d events up to %d (complete %v), want %d up to %d", after, folder, len(got), upTo, complete, len(want), lh.Last)
			}
			for i := range got {
				if !got[i].Time.Equal(want[i].Time) {
					t.Fatalf("after %d: event %d at %v, want %v", after, i, got[i].Time, want[i].Time)
				}
				got[i].Time = want[i].Time
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after %d, folder %q:\n got %+v\nwant %+v", after, folder, got[:min(3, len(got))], want[:min(3, len(want))])
			}
		}
	}
	// A window cut short by its limit continues where it stopped.
	var all []events.Event
	for after := from; ; {
		got, upTo, complete, err := c.LogWindow(testkit.Context(t), lh, "p", "", after, 333)
		testkit.NoErr(t, err, "window")
		all = append(all, got...)
		if complete {
			break
		}
		after = upTo
	}
	testkit.Equal(t, len(all), len(modelWindow(h, 2, "", from, lh.Last)), "events read in windows of 333")
}
