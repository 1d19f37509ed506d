package projection_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

type fold struct {
	seq uint64
	evs []events.Event
}

func (f *fold) put(path, content string) *fold {
	f.seq++
	f.evs = append(f.evs, events.Event{Op: events.OpUpsert, Project: "p", Path: path, Size: int64(len(content)),
		Mtime: time.Unix(int64(f.seq), 0).UTC(), Hash: events.HashContent([]byte(content)), Status: events.StatusOK,
		Content: []byte(content), Seq: f.seq})
	return f
}

func (f *fold) del(path string) *fold {
	f.seq++
	f.evs = append(f.evs, events.Event{Op: events.OpDelete, Project: "p", Path: path, Seq: f.seq})
	return f
}

func (f *fold) scan() *fold {
	f.seq++
	f.evs = append(f.evs, events.Event{Op: events.OpScanEnd, Project: "p", Scan: &events.Scan{ID: "s", Documents: 1}, Seq: f.seq})
	return f
}

func (f *fold) batch() events.Batch { return events.Batch{Events: f.evs} }

func open(t *testing.T, dir string) *projection.Catalog {
	t.Helper()
	c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, c.Open(), "open catalog")
	return c
}

// dump is everything a query can see, as plain values.
type dump struct {
	Docs      map[string]projection.Document
	Summaries map[string]projection.Summary
	Content   map[string]string
	Folders   map[string][2]int
	Seq       uint64
}

func snapshot(t *testing.T, c *projection.Catalog) dump {
	t.Helper()
	d := dump{Docs: map[string]projection.Document{}, Summaries: map[string]projection.Summary{}, Content: map[string]string{},
		Folders: map[string][2]int{}}
	err := c.Read(func(s *projection.Snapshot) error {
		d.Seq = s.State().Seq
		root, _ := s.Folder("")
		root.Walk(func(f *projection.Folder) {
			d.Folders[f.Path] = [2]int{f.Documents, f.Words}
			for _, doc := range f.Docs() {
				d.Docs[doc.Path] = *doc
				sum, err := s.Summary(doc)
				if err != nil {
					t.Fatal(err)
				}
				d.Summaries[doc.Path] = sum
				if doc.Readable() {
					b, err := s.Content(doc)
					if err != nil {
						t.Fatal(err)
					}
					d.Content[doc.Path] = string(b)
				}
			}
		})
		return nil
	})
	testkit.NoErr(t, err, "read")
	return d
}

func history() *fold {
	return new(fold).put("a.md", "one two three").put("x/y/b.md", "# B\n\nfour five").put("x/c.md", "six").
		put("a.md", "one").del("x/c.md").put("x/y/z/d.md", "same").put("x/e.md", "same").scan()
}

func TestCatalogFold(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	testkit.NoErr(t, c.Apply(history().batch()), "apply")
	d := snapshot(t, c)
	testkit.Equal(t, d.Content, map[string]string{"a.md": "one", "x/y/b.md": "# B\n\nfour five", "x/y/z/d.md": "same", "x/e.md": "same"}, "content")
	testkit.Equal(t, d.Folders, map[string][2]int{"": {4, 6}, "x": {3, 5}, "x/y": {2, 4}, "x/y/z": {1, 1}}, "folder counts")
	testkit.Equal(t, d.Docs["x/y/b.md"].Title, "B", "title")
	testkit.Equal(t, d.Seq, uint64(8), "checkpoint")
}

func TestCatalogApplyIsIdempotent(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	h := history()
	testkit.NoErr(t, c.Apply(h.batch()), "apply")
	want := snapshot(t, c)
	testkit.NoErr(t, c.Apply(h.batch()), "apply again")
	testkit.Equal(t, snapshot(t, c), want, "state after applying the same batch twice")
	// Events split differently into batches give the same state.
	c2 := open(t, t.TempDir())
	defer c2.Close()
	for _, e := range h.evs {
		testkit.NoErr(t, c2.Apply(events.Batch{Events: []events.Event{e}}), "apply one")
	}
	testkit.Equal(t, snapshot(t, c2), want, "state from one-event batches")
}

func TestCatalogResumesAfterReopen(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	h := history()
	testkit.NoErr(t, c.Apply(h.batch()), "apply")
	want := snapshot(t, c)
	testkit.NoErr(t, c.Close(), "close")

	c = open(t, dir)
	defer c.Close()
	testkit.Equal(t, snapshot(t, c), want, "state after reopening")
	testkit.Equal(t, c.Checkpoint(), uint64(8), "checkpoint after reopening")
	select {
	case <-c.Scanned():
	default:
		t.Error("a reopened catalog forgot it holds a complete scan")
	}
}

func TestCatalogRebuildsUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	testkit.NoErr(t, os.WriteFile(filepath.Join(dir, "catalog.db"), []byte("not a bbolt file at all, just junk"), 0o644), "write junk")
	c := open(t, dir)
	defer c.Close()
	testkit.Equal(t, c.Checkpoint(), uint64(0), "checkpoint of a rebuilt catalog")
	if r := c.Repairs(); len(r) != 1 || r[0].File != "catalog.db" {
		t.Errorf("the repair was not reported: %+v", r)
	}
}

func TestCatalogLockedByAnotherOpen(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	defer c.Close()
	c2 := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
	if err := c2.Open(); err == nil {
		c2.Close()
		t.Fatal("a second open of the same catalog succeeded")
	}
}

func TestCatalogResetForgetsEverything(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	testkit.NoErr(t, c.Apply(history().batch()), "apply")
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "S@2", Project: "p"}), "reset")
	d := snapshot(t, c)
	testkit.Equal(t, len(d.Docs), 0, "documents after reset")
	sid, project := c.Identity()
	testkit.Equal(t, sid+"/"+project, "S@2/p", "identity after reset")
}

// TestCatalogSharedContent: two documents with the same bytes share stored content; deleting
// one leaves the other readable.
func TestCatalogSharedContent(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	f := new(fold).put("a.md", "shared").put("b.md", "shared")
	testkit.NoErr(t, c.Apply(f.batch()), "apply")
	f2 := &fold{seq: f.seq}
	f2.del("a.md")
	testkit.NoErr(t, c.Apply(f2.batch()), "delete one")
	f3 := &fold{seq: f2.seq}
	f3.put("c.md", "other")
	testkit.NoErr(t, c.Apply(f3.batch()), "a later batch collects garbage")
	testkit.Equal(t, snapshot(t, c).Content, map[string]string{"b.md": "shared", "c.md": "other"}, "content")
}

func TestBulkLoadKeepsFoldersSorted(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	f := new(fold)
	for _, n := range []string{"m", "c", "x", "a", "q", "b"} {
		f.put("big/"+n+".md", n)
	}
	f.del("big/q.md").put("big/c.md", "changed")
	testkit.NoErr(t, c.Apply(f.batch()), "apply")
	var names []string
	_ = c.Read(func(s *projection.Snapshot) error {
		fo, _ := s.Folder("big")
		for _, d := range fo.Docs() {
			names = append(names, d.Name())
		}
		return nil
	})
	testkit.Equal(t, names, []string{"a.md", "b.md", "c.md", "m.md", "x.md"}, "sorted documents")
}

// TestCloseRightAfterOpen: Open starts a garbage collection of unreferenced content in the
// background; a Close that comes before it ends must wait for it, not pull the file from
// under it (a query process stopped right after it started crashed on exit).
func TestCloseRightAfterOpen(t *testing.T) {
	dir := t.TempDir()
	c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, c.Open(), "open")
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
	var b events.Batch
	for i := range 2000 {
		body := []byte(fmt.Sprintf("# Doc %d\n\nSome words.\n", i))
		b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("d/%d.md", i),
			Size: int64(len(body)), Mtime: time.Unix(0, 0), Hash: events.HashContent(body), Status: events.StatusOK,
			Content: body, Seq: uint64(i + 1)})
	}
	testkit.NoErr(t, c.Apply(b), "apply")
	testkit.NoErr(t, c.Close(), "close")
	for range 20 {
		c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
		testkit.NoErr(t, c.Open(), "reopen")
		testkit.NoErr(t, c.Close(), "close right after open")
	}
}

// TestCatalogFirstBatchKeepsItsContent: the content of the first batch applied after an
// open is read back (an open once started a garbage collection that could take it for
// garbage).
func TestCatalogFirstBatchKeepsItsContent(t *testing.T) {
	h := history()
	for range 200 {
		c := open(t, t.TempDir())
		testkit.NoErr(t, c.Apply(h.batch()), "apply")
		snapshot(t, c) // fails on content missing from the catalog
		testkit.NoErr(t, c.Close(), "close")
	}
}

// TestBodiesReadIntoOneBuffer reads bodies stored compressed and as they are, long and
// short, one after the other into one buffer: each read gives its own body whole, never
// what an earlier read left in the buffer.
func TestBodiesReadIntoOneBuffer(t *testing.T) {
	c := &projection.Catalog{Dir: t.TempDir(), Logger: testkit.Logger()}
	testkit.NoErr(t, c.Open(), "open")
	t.Cleanup(func() { _ = c.Close() })
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "s", Project: "p"}), "reset")
	random := make([]byte, 3000) // S2 cannot make it smaller: stored as it is
	for i := range random {
		random[i] = byte(i*7919%251) ^ byte(i>>3)
	}
	bodies := map[string]string{
		"long.md":   strings.Repeat("the dragon sleeps under the mountain; ", 400),
		"short.md":  "# Short\n\nA few words.",
		"raw.md":    string(random),
		"medium.md": strings.Repeat("maps of the crown, ", 40),
	}
	f := &fold{}
	for p, b := range bodies {
		f.put(p, b)
	}
	testkit.NoErr(t, c.Apply(f.scan().batch()), "apply")
	var buf projection.BodyBuffer
	for _, p := range []string{"long.md", "short.md", "raw.md", "medium.md", "long.md", "raw.md", "short.md"} {
		testkit.NoErr(t, c.Read(func(s *projection.Snapshot) error {
			d, ok := s.Document(p)
			if !ok {
				t.Fatalf("%s not in the catalog", p)
			}
			b, err := s.Body(d)
			if err != nil {
				return err
			}
			got, err := b.ReadBuffered(&buf)
			if err != nil {
				return err
			}
			if string(got) != bodies[p] {
				t.Errorf("%s read into the shared buffer: %d bytes %.40q…, want %d bytes %.40q…", p, len(got), got, len(bodies[p]), bodies[p])
			}
			return nil
		}), "read")
	}
}

// TestTitleOfFoldedFrontMatter: a front matter title written as a folded YAML block
// ("title: >") is the title the catalog records — the one list, view and search hits show
// and the index ranks — not the ">" its first line holds.
func TestTitleOfFoldedFrontMatter(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	f := new(fold).put("a.md", "---\ntitle: >\n  Folded\n  title\n---\n# Heading\n\nText of it.\n").scan()
	testkit.NoErr(t, c.Apply(f.batch()), "apply")
	testkit.Equal(t, snapshot(t, c).Docs["a.md"].Title, "Folded title", "title")
}

// TestKeptBodyOutlivesItsSnapshot: a body kept past its snapshot (KeepBody) is read once
// the catalog's lock is free, even after the catalog replaced its body file (a reset, here)
// or closed; its file closes with the last release. A session document's size counts in
// SessionTotals until it is deleted.
func TestKeptBodyOutlivesItsSnapshot(t *testing.T) {
	c := open(t, t.TempDir())
	const text = "# Kept\n\nread after the snapshot ended"
	testkit.NoErr(t, c.Apply((&fold{}).put("a.md", text).batch()), "apply")
	var kept projection.Body
	testkit.NoErr(t, c.Read(func(s *projection.Snapshot) error {
		d, _ := s.Document("a.md")
		var err error
		kept, err = s.KeepBody(d)
		return err
	}), "keep the body")
	testkit.NoErr(t, c.Reset(projection.State{StreamID: "another", Project: "p"}), "reset")
	b, err := kept.Read()
	testkit.NoErr(t, err, "read after the reset")
	testkit.Equal(t, string(b), text, "the kept body")
	testkit.NoErr(t, c.Close(), "close")
	b, err = kept.Read()
	testkit.NoErr(t, err, "read after close")
	testkit.Equal(t, string(b), text, "the kept body")
	kept.Release()
}

// TestSessionTotals: the catalog counts the bytes of every session document, with the
// sequence it stands at, for readers that take no lock.
func TestSessionTotals(t *testing.T) {
	c := open(t, t.TempDir())
	t.Cleanup(func() { _ = c.Close() })
	ev := func(seq uint64, op events.Op, name, content string) events.Event {
		return events.Event{Op: op, Project: "p", Session: "tok", Path: name, Size: int64(len(content)),
			Mtime: time.Unix(1, 0).UTC(), Hash: events.HashContent([]byte(content)), Status: events.StatusOK, Content: []byte(content), Seq: seq}
	}
	testkit.NoErr(t, c.Apply(events.Batch{Events: []events.Event{ev(1, events.OpUpsert, "a.md", "12345"), ev(2, events.OpUpsert, "b.md", "123")}}), "apply")
	testkit.Equal(t, c.SessionTotals(), projection.SessionTotals{Bytes: 8, Seq: 2}, "two documents")
	testkit.NoErr(t, c.Apply(events.Batch{Events: []events.Event{ev(3, events.OpUpsert, "a.md", "1"), {Op: events.OpDelete, Project: "p", Session: "tok", Path: "b.md", Seq: 4}}}), "apply")
	testkit.Equal(t, c.SessionTotals(), projection.SessionTotals{Bytes: 1, Seq: 4}, "one replaced, one deleted")
}
