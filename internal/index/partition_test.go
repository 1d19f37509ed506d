package index_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/testkit"
	gencorpus "github.com/guide/guide/tools/corpus"
)

// partitioned is a project's index whole, and the same project in partitions, each an
// index folding its partition's documents alone.
type partitioned struct {
	whole *index.Index
	parts []*index.Index
	fan   *search.Fanout
	down  map[int]bool // partitions that do not answer
	feeds []*feeder    // the whole's, then each partition's
}

func newPartitioned(t *testing.T, p int, docs map[string]*string) *partitioned {
	t.Helper()
	px := &partitioned{whole: openIndex(t, filepath.Join(t.TempDir(), "whole")), down: map[int]bool{}}
	feeds := []*feeder{{x: px.whole}}
	for k := range p {
		x := &index.Index{Dir: filepath.Join(t.TempDir(), fmt.Sprint("part", k)), Logger: testkit.Logger(),
			Holds: events.PartitionSet{Count: p, Own: []int{k}}.Holds}
		testkit.NoErr(t, x.Open(), "open")
		t.Cleanup(func() { _ = x.Close() })
		testkit.NoErr(t, x.Reset(stateFor()), "reset")
		px.parts = append(px.parts, x)
		feeds = append(feeds, &feeder{x: x})
	}
	// Two batches, so that the indexes hold more than one segment.
	first, second := map[string]*string{}, map[string]*string{}
	for path, c := range docs {
		if len(first) < len(docs)/2 {
			first[path] = c
		} else {
			second[path] = c
		}
	}
	for _, f := range feeds {
		f.batch(t, first)
		f.batch(t, second)
	}
	px.feeds = feeds
	px.fan = &search.Fanout{BM25: index.BM25Of, Count: p, Call: func(ctx context.Context, req search.PartRequest) ([]search.PartReply, []int, error) {
		// Through the wire encoding, as the partition services send it.
		raw, err := json.Marshal(req)
		if err != nil {
			return nil, nil, err
		}
		var replies []search.PartReply
		var missing []int
		for k, x := range px.parts {
			if px.down[k] {
				missing = append(missing, k)
				continue
			}
			var got search.PartRequest
			if err := json.Unmarshal(raw, &got); err != nil {
				return nil, nil, err
			}
			rep, err := x.Part(ctx, got)
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(rep)
			var back search.PartReply
			if err := json.Unmarshal(b, &back); err != nil {
				return nil, nil, err
			}
			back.Parts = []int{k} // as package partition's client sets them
			replies = append(replies, back)
		}
		return replies, missing, nil
	}}
	return px
}

// pages returns every page of a search, one line per hit and one per page's end.
func pages(t *testing.T, s func(context.Context, search.Request) (search.Result, error), q, folder string, limit int) string {
	t.Helper()
	pq, err := querylang.Parse(q)
	testkit.NoErr(t, err, "parse "+q)
	var b strings.Builder
	cursor := ""
	for n := 0; n < 8; n++ { // enough pages to cross partitions' cursors, few enough for -race
		res, err := s(context.Background(), search.Request{Query: pq, Folder: folder, Limit: limit, Cursor: cursor})
		if err != nil {
			fmt.Fprintf(&b, "error %v\n", err)
			return b.String()
		}
		for _, h := range res.Hits {
			fmt.Fprintf(&b, "%s\t%s\t%v\n", h.Session, h.Path, h.Score)
		}
		fmt.Fprintf(&b, "-- total %d relaxed %v corrections %v missing %v next %q\n", res.Total, res.Relaxed, res.Corrections, res.Missing, res.Next)
		if cursor = res.Next; cursor == "" {
			break
		}
	}
	return b.String()
}

// differentialDocs is a generated tree and the relevance tree.
func differentialDocs(t *testing.T, n int) map[string]*string {
	t.Helper()
	docs := map[string]*string{}
	dir := t.TempDir()
	_, err := gencorpus.Generate(dir, gencorpus.Options{Docs: n, Seed: 35})
	testkit.NoErr(t, err, "generate")
	for _, root := range []string{dir, filepath.Join(relevanceDir, "docs")} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			s := string(b)
			docs[filepath.ToSlash(rel)] = &s
			return nil
		})
		testkit.NoErr(t, err, "read "+root)
	}
	return docs
}

// differentialQueries are the relevance set's queries, and queries of every kind the
// engine ranks differently: one word, several, sentences of neighbouring words, phrases,
// typing errors, words no document holds, a folder.
func differentialQueries(t *testing.T, docs map[string]*string) [][2]string {
	t.Helper()
	var qs []labelled
	b, err := os.ReadFile(filepath.Join(relevanceDir, "queries.json"))
	testkit.NoErr(t, err, "read queries")
	testkit.NoErr(t, json.Unmarshal(b, &qs), "decode queries")
	var out [][2]string
	for _, q := range qs {
		out = append(out, [2]string{q.Query, q.Folder})
	}
	// Words of the generated documents, common and rare.
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range docs {
			if !yield(p) {
				return
			}
		}
	})
	var words []string
	for _, p := range paths[:40] {
		for _, w := range strings.Fields(*docs[p])[:12] {
			w = strings.Trim(strings.ToLower(w), ".,;:!?#*()[]\"'`")
			if len(w) > 3 && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	words = slices.DeleteFunc(words, func(w string) bool {
		_, err := querylang.Parse(w)
		return err != nil // only common words
	})
	for i, w := range words[:min(len(words), 30)] {
		out = append(out, [2]string{w, ""})
		if i+2 < len(words) {
			out = append(out, [2]string{w + " " + words[i+1], ""}, [2]string{w + " " + words[i+1] + " " + words[i+2], ""},
				[2]string{`"` + w + " " + words[i+1] + `"`, ""})
		}
	}
	top := strings.SplitN(paths[0], "/", 2)[0]
	out = append(out, [2]string{words[0], top}, [2]string{"zzqxnotaword", ""}, [2]string{"dragn", ""},
		[2]string{"the dragon and the castle", ""}, [2]string{"dragon castel", ""}, [2]string{"guidelines", "guidelines"})
	return out
}

// TestPartitionsRankAsOne: a project in four partitions, searched through the partitions'
// steps and their wire encoding, returns for every query the same pages as the whole
// project: the same hits in the same order with the same scores, totals, corrections
// and cursors.
func TestPartitionsRankAsOne(t *testing.T) {
	n := 250
	if testing.Short() {
		n = 100
	}
	docs := differentialDocs(t, n)
	px := newPartitioned(t, 4, docs)
	var sizes []uint64
	for _, x := range px.parts {
		sizes = append(sizes, x.State().Documents)
	}
	t.Logf("%d documents; partitions hold %v", len(docs), sizes)
	qs := differentialQueries(t, docs)
	differ := 0
	for _, q := range qs {
		for _, limit := range []int{7, 20} {
			want := pages(t, px.whole.Search, q[0], q[1], limit)
			got := pages(t, px.fan.Search, q[0], q[1], limit)
			if got != want {
				differ++
				if differ <= 3 {
					t.Errorf("%q in %q, pages of %d: %s", q[0], q[1], limit, firstDifference(want, got))
				}
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d searches differ", differ, 2*len(qs))
	}
	if m := px.fan.Misses.Load(); m != 0 {
		t.Errorf("%d terms were scored without the whole project's counts", m)
	}
	if g := px.fan.Gathers.Load(); g >= int64(2*len(qs)) {
		t.Errorf("%d gathering steps for %d queries searched twice: the statistics of the first were not kept", g, len(qs))
	}
}

// TestPartitionStatisticsKeptUntilAPartitionChanges: a search of a query searched before
// takes the statistics kept from the first, one step of every partition; once a partition
// has applied a change they are stale, and the search ranks as the whole project again.
func TestPartitionStatisticsKeptUntilAPartitionChanges(t *testing.T) {
	docs := differentialDocs(t, 80)
	px := newPartitioned(t, 4, docs)
	const q = "the system"
	want := pages(t, px.whole.Search, q, "", 5)
	testkit.Equal(t, pages(t, px.fan.Search, q, "", 5), want, "first search")
	gathers := px.fan.Gathers.Load()
	testkit.Equal(t, pages(t, px.fan.Search, q, "", 5), want, "second search")
	testkit.Equal(t, px.fan.Gathers.Load(), gathers, "gathering steps of the second search")
	// A document of every partition that holds both words, and one more that does.
	more := map[string]*string{}
	for i := range 8 {
		c := fmt.Sprintf("# More %d\n\nThe system, the system and the system again.\n", i)
		more[fmt.Sprintf("more/doc-%d.md", i)] = &c
	}
	for _, f := range px.feeds {
		f.batch(t, more)
	}
	want = pages(t, px.whole.Search, q, "", 5)
	testkit.Equal(t, pages(t, px.fan.Search, q, "", 5), want, "the search once partitions changed")
	if px.fan.Stale() == 0 {
		t.Errorf("the statistics kept were not found stale")
	}
	if m := px.fan.Misses.Load(); m != 0 {
		t.Errorf("%d terms were scored without the whole project's counts", m)
	}
}

// TestPartitionMissingMakesAPartialAnswer: with a partition down, a search answers from
// the others and names the one missing, never an error.
func TestPartitionMissingMakesAPartialAnswer(t *testing.T) {
	docs := differentialDocs(t, 80)
	px := newPartitioned(t, 4, docs)
	px.down[2] = true
	got := pages(t, px.fan.Search, `"the"`, "", 100)
	if !strings.Contains(got, "missing [2]") || strings.HasPrefix(got, "error ") {
		t.Errorf("a search with partition 2 down:\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if f := strings.Split(line, "\t"); len(f) == 3 && events.PartitionOf(events.DocKey{Session: f[0], Path: f[1]}, 4) == 2 {
			t.Errorf("a hit of the partition that is down: %s", line)
		}
	}
}

// firstDifference shows where two texts part, with the lines before.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		wl, gl := "", ""
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			from := max(0, i-3)
			return fmt.Sprintf("line %d\nwhole:\n%s\npartitioned:\n%s", i+1,
				strings.Join(w[from:min(len(w), i+4)], "\n"), strings.Join(g[from:min(len(g), i+4)], "\n"))
		}
	}
	return "no difference"
}
