package index_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	. "github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// feed applies upserts (path → content; "" content with del=true deletes) as one batch
// with consecutive sequences after the index's checkpoint.
type feeder struct {
	x   *Index
	seq uint64
}

func (f *feeder) batch(t testing.TB, docs map[string]*string) {
	t.Helper()
	testkit.NoErr(t, f.prepare(docs)(), "apply")
}

// prepare is batch's Prepare: the batch's apply, to run after the batches before it.
func (f *feeder) prepare(docs map[string]*string) func() error {
	var b events.Batch
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, p := range keys {
		f.seq++
		e := events.Event{Op: events.OpDelete, Path: p, Seq: f.seq, Project: "test"}
		if c := docs[p]; c != nil {
			e = events.Event{Op: events.OpUpsert, Path: p, Seq: f.seq, Project: "test", Status: events.StatusOK,
				Content: []byte(*c), Hash: events.HashContent([]byte(*c)), Size: int64(len(*c)), Mtime: time.Now()}
		}
		b.Events = append(b.Events, e)
	}
	return f.x.Prepare(b)
}

func str(s string) *string { return &s }

func openIndex(t testing.TB, dir string) *Index {
	t.Helper()
	x := &Index{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, x.Open(), "open")
	t.Cleanup(func() { _ = x.Close() })
	if sid, _ := x.Identity(); sid == "" {
		testkit.NoErr(t, x.Reset(stateFor()), "reset")
	}
	return x
}

func paths(t testing.TB, x *Index, q string, folder string) []string {
	t.Helper()
	pq, err := querylang.Parse(q)
	testkit.NoErr(t, err, "parse "+q)
	res, err := x.Search(context.Background(), search.Request{Query: pq, Folder: folder, Limit: search.MaxLimit})
	testkit.NoErr(t, err, "search "+q)
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	slices.Sort(out)
	return out
}

func TestSmoke(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	f := &feeder{x: x}
	f.batch(t, map[string]*string{
		"a/Dragons.md": str("# Dragons\n\nFire-breathing beasts of the north."),
		"a/b/notes.md": str("A dragon was seen. Straße und STRASSE. 中华人民共和国成立。한국어를 배우다"),
		"c/other.txt":  str("nothing here but foo.bar and don't"),
		"c/Россия.md":  str("Москва — столица России."),
	})
	testkit.Equal(t, paths(t, x, "dragon", ""), []string{"a/Dragons.md", "a/b/notes.md"}, "dragon")
	testkit.Equal(t, paths(t, x, "dragon", "a/b"), []string{"a/b/notes.md"}, "dragon in a/b")
	testkit.Equal(t, paths(t, x, "foo", ""), []string{"c/other.txt"}, "foo")
	testkit.Equal(t, paths(t, x, "STRASSE", ""), []string{"a/b/notes.md"}, "strasse")
	testkit.Equal(t, paths(t, x, "人民", ""), []string{"a/b/notes.md"}, "人民")
	testkit.Equal(t, paths(t, x, "한국어", ""), []string{"a/b/notes.md"}, "한국어")
	testkit.Equal(t, paths(t, x, "москва", ""), []string{"c/Россия.md"}, "москва")
	testkit.Equal(t, paths(t, x, "россия", ""), []string{"c/Россия.md"}, "россия (name)")
	testkit.Equal(t, paths(t, x, `"fire breathing"`, ""), []string{"a/Dragons.md"}, "phrase")
	f.batch(t, map[string]*string{"a/Dragons.md": nil})
	testkit.Equal(t, paths(t, x, "dragon", ""), []string{"a/b/notes.md"}, "after delete")
}

// TestBatchesPreparedAheadApplyInOrder: a batch prepared before the one ahead of it is
// applied (as the runner prepares the next batch) applies as if prepared after it: a
// document changed in both ends as the later batch left it, one deleted in the later batch
// is gone, and the checkpoint is the later batch's.
func TestBatchesPreparedAheadApplyInOrder(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	f := &feeder{x: x}
	first := f.prepare(map[string]*string{
		"a.md": str("the amber lantern"),
		"b.md": str("a brass compass"),
		"c.md": str("a copper kettle"),
	})
	second := f.prepare(map[string]*string{
		"a.md": str("the azure lantern"),
		"c.md": nil,
		"d.md": str("a driftwood compass"),
	})
	testkit.NoErr(t, first(), "apply the first batch")
	testkit.Equal(t, paths(t, x, "amber", ""), []string{"a.md"}, "amber, after the first batch")
	testkit.NoErr(t, second(), "apply the second batch")
	testkit.Equal(t, paths(t, x, "amber", ""), []string(nil), "amber")
	testkit.Equal(t, paths(t, x, "azure", ""), []string{"a.md"}, "azure")
	testkit.Equal(t, paths(t, x, "compass", ""), []string{"b.md", "d.md"}, "compass")
	testkit.Equal(t, paths(t, x, "kettle", ""), []string(nil), "kettle")
	testkit.Equal(t, x.Checkpoint(), uint64(6), "checkpoint")
	testkit.Equal(t, x.State().Documents, uint64(3), "documents")
}

func stateFor() projection.State { return projection.State{StreamID: "s@1", Project: "test"} }

// TestPhrases: a phrase is its words next to each other, in this order, in the content or
// the name; a longer phrase whose pairs all occur, but apart, is not found.
func TestPhrases(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	(&feeder{x: x}).batch(t, map[string]*string{
		"a.md":          str("The magic system of Varn. Old magic, new system."),
		"b.md":          str("system magic; a magic wand and a wand system"),
		"Magic Wand.md": str("nothing"),
	})
	for _, c := range []struct {
		q    string
		want []string
	}{
		{`"magic system"`, []string{"a.md"}},
		{`"system magic"`, []string{"b.md"}},
		{`"magic wand"`, []string{"Magic Wand.md", "b.md"}},
		{`"magic system of varn"`, []string{"a.md"}},
		{`"magic wand system"`, nil},               // "magic wand" and "wand system" both occur, apart
		{`"varn old magic new"`, []string{"a.md"}}, // across a full stop, as Bleve's phrases are
		{`"system of"`, []string{"a.md"}},
	} {
		testkit.Equal(t, paths(t, x, c.q, ""), c.want, c.q)
	}
}

// TestTiesPageByPath: documents of equal score come by path, on the first page and across
// cursors, none twice and none missed.
func TestTiesPageByPath(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	docs := map[string]*string{}
	var want []string
	for i := range 50 {
		p := fmt.Sprintf("d/%02d.md", (i*37)%50)
		docs[p] = str("same words in every one")
		want = append(want, p)
	}
	(&feeder{x: x}).batch(t, docs)
	slices.Sort(want)
	q, err := querylang.Parse("words")
	testkit.NoErr(t, err, "parse")
	var got []string
	cur := ""
	for {
		res, err := x.Search(context.Background(), search.Request{Query: q, Limit: 7, Cursor: cur})
		testkit.NoErr(t, err, "search")
		for _, h := range res.Hits {
			got = append(got, h.Path)
		}
		if res.Next == "" {
			break
		}
		cur = res.Next
	}
	testkit.Equal(t, got, want, "pages")
}

// TestSentenceRanking: a query of three words or more ranks every document holding some
// of them — more of them first, then those where its neighbouring words stand side by
// side — and says whether any document holds them all.
func TestSentenceRanking(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	f := &feeder{x: x}
	f.batch(t, map[string]*string{
		"apart.md":    str("# Notes\n\nThe archive was compressed by the clerk; extract what you need.\n"),
		"together.md": str("# Tar\n\nExtract a compressed archive with one command, fast.\n"),
		"one.md":      str("# Misc\n\nAn archive of letters.\n"),
		"none.md":     str("# Other\n\nNothing here.\n"),
	})
	run := func(q string) search.Result {
		pq, err := querylang.Parse(q)
		testkit.NoErr(t, err, "parse")
		res, err := x.Search(context.Background(), search.Request{Query: pq, Limit: 10})
		testkit.NoErr(t, err, "search")
		return res
	}
	order := func(res search.Result) []string {
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.Path)
		}
		return out
	}
	res := run("extract a compressed archive into the current directory")
	testkit.Equal(t, order(res), []string{"together.md", "apart.md", "one.md"}, "ranked")
	testkit.Equal(t, res.Relaxed, true, "relaxed: no document holds every word")
	testkit.Equal(t, res.Total, uint64(3), "total: documents holding some of the words")

	f.batch(t, map[string]*string{"all.md": str("Extract the compressed archive into the current directory.\n")})
	res = run("extract a compressed archive into the current directory")
	testkit.Equal(t, order(res)[0], "all.md", "the document holding every word, side by side")
	testkit.Equal(t, res.Relaxed, false, "relaxed once one document holds every word")
}
