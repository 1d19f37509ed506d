package index_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/testkit"
)

const relevanceDir = "../../testdata/relevance"

// labelled is one query of testdata/relevance/queries.json. The first relevant document
// is the one the query is after; the others are acceptable answers.
type labelled struct {
	Query    string   `json:"query"`
	Folder   string   `json:"folder,omitempty"`
	Relevant []string `json:"relevant"`
}

// figures are the committed relevance figures: recall@k is the share of queries whose
// first relevant document ranks in the top k; MRR is the mean reciprocal rank of the
// best-ranked relevant document (0 when none is found in the top 20).
type figures struct {
	Queries   int     `json:"queries"`
	RecallAt1 float64 `json:"recall@1"`
	RecallAt5 float64 `json:"recall@5"`
	MRR       float64 `json:"mrr"`
}

// TestRelevance ranks the labelled queries over the relevance tree, reports recall@1,
// recall@5 and MRR, and fails when any falls below the committed figures, so that a
// change in ranking shows up in review. Run with -update to commit new figures.
func TestRelevance(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	docs := map[string]*string{}
	root := filepath.Join(relevanceDir, "docs")
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
	testkit.NoErr(t, err, "read relevance tree")
	(&feeder{x: x}).batch(t, docs)

	var qs []labelled
	b, err := os.ReadFile(filepath.Join(relevanceDir, "queries.json"))
	testkit.NoErr(t, err, "read queries")
	testkit.NoErr(t, json.Unmarshal(b, &qs), "decode queries")

	var got figures
	for _, q := range qs {
		ranked := rank(t, x, q.Query, q.Folder)
		first := slices.Index(ranked, q.Relevant[0]) + 1
		best := 0
		for _, r := range q.Relevant {
			if i := slices.Index(ranked, r) + 1; i > 0 && (best == 0 || i < best) {
				best = i
			}
		}
		if first == 1 {
			got.RecallAt1++
		}
		if first >= 1 && first <= 5 {
			got.RecallAt5++
		}
		if best > 0 {
			got.MRR += 1 / float64(best)
		}
		if first != 1 {
			t.Logf("%-28q rank of %s: %d; top: %v", q.Query, q.Relevant[0], first, ranked[:min(3, len(ranked))])
		}
	}
	n := float64(len(qs))
	got = figures{Queries: len(qs), RecallAt1: round(got.RecallAt1 / n), RecallAt5: round(got.RecallAt5 / n), MRR: round(got.MRR / n)}
	t.Logf("relevance over %d queries: recall@1 %.3f, recall@5 %.3f, MRR %.3f", got.Queries, got.RecallAt1, got.RecallAt5, got.MRR)

	file := filepath.Join(relevanceDir, "figures.json")
	if testkit.Updating() { // -update writes the figures measured to testdata/relevance/figures.json
		out, _ := json.MarshalIndent(got, "", "  ")
		testkit.NoErr(t, os.WriteFile(file, append(out, '\n'), 0o644), "write figures")
		return
	}
	var want figures
	b, err = os.ReadFile(file)
	testkit.NoErr(t, err, "read committed figures (run with -update to create them)")
	testkit.NoErr(t, json.Unmarshal(b, &want), "decode figures")
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"recall@1", got.RecallAt1, want.RecallAt1}, {"recall@5", got.RecallAt5, want.RecallAt5}, {"MRR", got.MRR, want.MRR}} {
		if c.got < c.want {
			t.Errorf("%s fell to %.3f from the committed %.3f", c.name, c.got, c.want)
		}
	}
	if got.Queries != want.Queries {
		t.Errorf("%d queries, the figures were measured over %d: run with -update", got.Queries, want.Queries)
	}
}

// TestNameOutranksPassingMention: a document named after the word beats a long document
// that mentions it once.
func TestNameOutranksPassingMention(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	long := "# Diary\n\n"
	for i := range 300 {
		long += fmt.Sprintf("Day %d: rain, bread, the road north, a song about the sea. ", i)
	}
	long += "Someone saw a griffin. "
	long += long[10:]
	(&feeder{x: x}).batch(t, map[string]*string{
		"notes/diary.md":         &long,
		"creatures/Griffin.md":   str("# Griffin\n\nHalf eagle, half lion."),
		"creatures/unrelated.md": str("# Unrelated\n\nNothing to see."),
	})
	testkit.Equal(t, rank(t, x, "griffin", ""), []string{"creatures/Griffin.md", "notes/diary.md"}, "ranking")
}

func rank(t *testing.T, x *index.Index, q, folder string) []string {
	t.Helper()
	pq, err := querylang.Parse(q)
	testkit.NoErr(t, err, "parse "+q)
	res, err := x.Search(testkit.Context(t), search.Request{Query: pq, Folder: folder, Limit: 20})
	testkit.NoErr(t, err, "search "+q)
	out := []string{}
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	return out
}

func round(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }

// TestLengthIsWeighedAgainstTheMean: BM25 weighs a document's length against the mean
// length of the documents, so that a document that is about a word, longer than the
// mean, outranks a short one that mentions it once. (Bleve's own mean was the number of
// different words per document: in a tree of long texts over a small vocabulary, every
// text seemed dozens of times too long, and the passing mention won.)
func TestLengthIsWeighedAgainstTheMean(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := openIndex(t, dir)
	filler := strings.Fields("the road north and the rain on the bread of the sea with a song")
	text := func(words int, mentions int) *string {
		var b strings.Builder
		for i := range words {
			if mentions > 0 && i%(words/mentions) == 0 {
				b.WriteString("griffin ")
				continue
			}
			b.WriteString(filler[i%len(filler)] + " ")
		}
		s := b.String()
		return &s
	}
	docs := map[string]*string{
		"notes/bestiary.md": text(200, 20),
		"notes/travel.md":   text(40, 1),
	}
	for i := range 8 {
		docs[fmt.Sprintf("notes/day%d.md", i)] = text(120, 0)
	}
	(&feeder{x: x}).batch(t, docs)
	want := []string{"notes/bestiary.md", "notes/travel.md"}
	testkit.Equal(t, rank(t, x, "griffin", ""), want, "ranking")
	// The lengths are kept with the index: opened again, it ranks the same.
	testkit.NoErr(t, x.Close(), "close")
	testkit.Equal(t, rank(t, openIndex(t, dir), "griffin", ""), want, "ranking after reopening")
}

// TestCamelCaseTitleIsFoundByItsWords: a title written in camel case is found, and
// ranked, by the words it joins.
func TestCamelCaseTitleIsFoundByItsWords(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	(&feeder{x: x}).batch(t, map[string]*string{
		"a/internmap.md": str("# InternMap\n\nKeys by value, for dates used as keys.\n\nMore of it.\n"),
		"b/other.md":     str("# Other\n\nA plan of the town.\n\nAn intern drew a map of it.\n"),
	})
	testkit.Equal(t, rank(t, x, "intern map", ""), []string{"a/internmap.md", "b/other.md"}, "ranking")
}

// TestWordWeighsTheSameWhateverItsForms: a word's score does not depend on how many other
// forms of it the index holds. "convert" has three other forms in other documents and
// "bridge" none; a document holding one and a document holding the other, alike in every
// other way, score the same for a query of both.
func TestWordWeighsTheSameWhateverItsForms(t *testing.T) {
	x := openIndex(t, filepath.Join(t.TempDir(), "index"))
	(&feeder{x: x}).batch(t, map[string]*string{
		"one.md":   str("alpha beta convert gamma delta"),
		"two.md":   str("alpha beta bridge gamma delta"),
		"three.md": str("epsilon converted zeta"),
		"four.md":  str("epsilon converting zeta"),
		"five.md":  str("epsilon converts zeta"),
		"six.md":   str("epsilon bridges zeta"),
	})
	pq, err := querylang.Parse("convert bridge")
	testkit.NoErr(t, err, "parse")
	res, err := x.Search(testkit.Context(t), search.Request{Query: pq, Limit: 20})
	testkit.NoErr(t, err, "search")
	score := map[string]float64{}
	for _, h := range res.Hits {
		score[h.Path] = h.Score
	}
	if score["one.md"] == 0 || math.Abs(score["one.md"]-score["two.md"]) > 1e-9*score["two.md"] {
		t.Fatalf("scores: one.md %v, two.md %v (all: %v); want them equal", score["one.md"], score["two.md"], score)
	}
}
