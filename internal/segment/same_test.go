package segment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// TestSameAsZap indexes the same random documents, in the same batches (new documents,
// replaced ones, deleted ones), into two scorch indexes of the same mapping, one in this
// format and one in upstream's zap (v17, the go.mod dependency, and v16, Bleve's
// default), and asks both the same queries — terms, words,
// phrases, prefixes, fuzzy terms, regular expressions, conjunctions, disjunctions,
// Boolean queries, folder scopes, pages — with the index in several segments, merged
// into one, changed again and merged again (and the same with documents added alone,
// whose merges copy the full chunks of postings as they are): the hits, their order and their scores (to
// 1e-9) are the same, and so are the fields' dictionaries.
func TestSameAsZap(t *testing.T) {
	for _, version := range []int{17, 16} {
		t.Run(fmt.Sprintf("zap%d", version), func(t *testing.T) {
			if version != 17 && (testing.Short() || raceEnabled) {
				t.Skip("-short or -race: zap v17 only")
			}
			sameAsZap(t, version, 0)
			t.Run("added alone", func(t *testing.T) { sameAsZap(t, version, 9) })
			t.Run("added, then changed", func(t *testing.T) { sameAsZap(t, version, 4) })
		})
	}
}

// sameAsZap compares the indexes through nine batches of new, replaced and deleted
// documents, the first addsFor of them of new documents alone (as a first index is built,
// its segments merged with nothing deleted, which copies the full chunks of their
// postings).
func sameAsZap(t *testing.T, version int, addsFor int) {
	docsPerBatch := 300
	if testing.Short() {
		docsPerBatch = 120
	}
	ours := openTestIndex(t, Type, int(Version))
	zap := openTestIndex(t, "zap", version)
	v := newVocabulary(7, 3000)
	rng := rand.New(rand.NewPCG(7, 8))
	var live []string
	next, batches := 0, 0
	batch := func() {
		addsOnly := batches < addsFor
		batches++
		bo, bz := ours.NewBatch(), zap.NewBatch()
		for range docsPerBatch {
			id, d := v.doc()
			switch r := rng.IntN(10); {
			case addsOnly:
				id = docID(next, id)
				next++
				live = append(live, id)
			case r < 2 && len(live) > 0: // replace a document
				id = live[rng.IntN(len(live))]
			case r < 3 && len(live) > 0: // delete one
				i := rng.IntN(len(live))
				bo.Delete(live[i])
				bz.Delete(live[i])
				live = slices.Delete(live, i, i+1)
				continue
			default:
				id = docID(next, id)
				next++
				live = append(live, id)
			}
			if err := bo.Index(id, d); err != nil {
				t.Fatal(err)
			}
			if err := bz.Index(id, d); err != nil {
				t.Fatal(err)
			}
		}
		if err := ours.Batch(bo); err != nil {
			t.Fatal(err)
		}
		if err := zap.Batch(bz); err != nil {
			t.Fatal(err)
		}
	}
	qs := testQueries(v, rng, live)
	for range 4 {
		batch()
	}
	qs = append(qs, testQueries(v, rng, live)...)
	compareIndexes(t, "in segments", ours, zap, qs)
	forceMerge(t, ours, zap)
	compareIndexes(t, "merged", ours, zap, qs)
	for range 3 {
		batch()
	}
	compareIndexes(t, "changed after a merge", ours, zap, qs)
	forceMerge(t, ours, zap)
	compareIndexes(t, "merged again", ours, zap, qs)
	for range 2 {
		batch()
	}
	ours, zap = reopen(t, ours), reopen(t, zap)
	compareIndexes(t, "reopened", ours, zap, qs)
}

// reopen closes idx and opens it again, its segments read from their files.
func reopen(t *testing.T, idx bleve.Index) bleve.Index {
	t.Helper()
	path := idx.Name()
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	idx, err := bleve.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return closedAtCleanup(t, idx)
}

func openTestIndex(t *testing.T, typ string, version int) bleve.Index {
	t.Helper()
	Register()
	m, err := testMapping()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	idx, err := bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, map[string]any{
		"forceSegmentType":    typ,
		"forceSegmentVersion": version,
		// No merges but those the test asks for: both indexes keep the same segments,
		// whose dictionaries' sizes are BM25's field lengths.
		"scorchMergePlanOptions": map[string]any{"MaxSegmentsPerTier": 1000, "FloorSegmentSize": 1, "FloorSegmentFileSize": 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	idx.SetName(dir)
	return closedAtCleanup(t, idx)
}

// onceClosed is an index closed once, by whoever closes it first.
type onceClosed struct {
	bleveIndex
	once *sync.Once
}

type bleveIndex = bleve.Index

func (i onceClosed) Close() (err error) {
	i.once.Do(func() { err = i.bleveIndex.Close() })
	return err
}

func closedAtCleanup(t *testing.T, idx bleve.Index) bleve.Index {
	c := onceClosed{bleveIndex: idx, once: &sync.Once{}}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func forceMerge(t *testing.T, idxs ...bleve.Index) {
	t.Helper()
	for _, idx := range idxs {
		adv, err := idx.Advanced()
		if err != nil {
			t.Fatal(err)
		}
		if err := adv.(*scorch.Scorch).ForceMerge(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
}

type namedQuery struct {
	name string
	q    query.Query
	from int
	size int
}

// testQueries makes queries of words of the vocabulary, common and rare, and of the
// documents' ids.
func testQueries(v *vocabulary, rng *rand.Rand, live []string) []namedQuery {
	var qs []namedQuery
	add := func(q query.Query, name string, args ...any) {
		qs = append(qs, namedQuery{name: fmt.Sprintf(name, args...), q: q, size: 50})
	}
	word := func() string {
		switch rng.IntN(3) {
		case 0:
			return v.words[rng.IntN(20)] // common
		case 1:
			return v.words[20+rng.IntN(300)]
		}
		return v.words[rng.IntN(len(v.words))]
	}
	fields := []string{"name", "path", "title", "meta", "headings", "lead", "content"}
	for range 25 {
		f, w := fields[rng.IntN(len(fields))], word()
		tq := bleve.NewTermQuery(strings.ToLower(w))
		tq.SetField(f)
		add(tq, "term %s:%s", f, w)
		mq := bleve.NewMatchQuery(w + " " + word())
		mq.SetField(f)
		add(mq, "match %s:%q", f, mq.Match)
		mq = bleve.NewMatchQuery(w + " " + word())
		mq.SetField(f)
		mq.SetOperator(query.MatchQueryOperatorAnd)
		add(mq, "match all %s:%q", f, mq.Match)
	}
	for range 20 {
		f := []string{"content", "title", "name"}[rng.IntN(3)]
		pq := bleve.NewMatchPhraseQuery(v.words[rng.IntN(40)] + " " + v.words[rng.IntN(40)])
		pq.SetField(f)
		add(pq, "phrase %s:%q", f, pq.MatchPhrase)
		ph := bleve.NewPhraseQuery([]string{strings.ToLower(word()), strings.ToLower(word())}, f)
		add(ph, "phrase terms %s:%v", f, ph.Terms)
	}
	for range 15 {
		f, w := fields[rng.IntN(len(fields))], strings.ToLower(word())
		r := []rune(w)
		p := bleve.NewPrefixQuery(string(r[:min(len(r), 1+rng.IntN(3))]))
		p.SetField(f)
		add(p, "prefix %s:%s", f, p.Prefix)
		fz := bleve.NewFuzzyQuery(w)
		fz.SetField(f)
		fz.SetFuzziness(1 + rng.IntN(2))
		add(fz, "fuzzy %s:%s~%d", f, w, fz.Fuzziness)
		re := bleve.NewRegexpQuery(string(r[:min(len(r), 2)]) + ".*")
		re.SetField(f)
		add(re, "regexp %s:%s", f, re.Regexp)
		wc := bleve.NewWildcardQuery("*" + string(r[len(r)-1:]) + "?")
		wc.SetField(f)
		add(wc, "wildcard %s:%s", f, wc.Wildcard)
	}
	for range 15 {
		var subs []query.Query
		for range 2 + rng.IntN(3) {
			f := fields[rng.IntN(len(fields))]
			if rng.IntN(2) == 0 {
				f = "content"
			}
			mq := bleve.NewMatchQuery(v.words[rng.IntN(60)])
			mq.SetField(f)
			mq.SetBoost(float64(1 + rng.IntN(3)))
			subs = append(subs, mq)
		}
		add(bleve.NewConjunctionQuery(subs...), "conjunction %d", len(subs))
		dq := bleve.NewDisjunctionQuery(subs...)
		add(dq, "disjunction %d", len(subs))
		dq = bleve.NewDisjunctionQuery(subs...)
		dq.SetMin(2)
		add(dq, "disjunction of 2 of %d", len(subs))
		bq := bleve.NewBooleanQuery()
		bq.AddMust(subs[0])
		bq.AddShould(subs[1:]...)
		nq := bleve.NewTermQuery(strings.ToLower(word()))
		nq.SetField("content")
		bq.AddMustNot(nq)
		add(bq, "boolean %d", len(subs))
		// A folder's scope, as guide searches one.
		scope := bleve.NewTermQuery(v.words[rng.IntN(40)])
		scope.SetField("folders")
		add(bleve.NewConjunctionQuery(subs[0], scope), "scoped")
	}
	for i := range 5 {
		var ids []string
		for range 3 {
			if len(live) > 0 {
				ids = append(ids, live[rng.IntN(len(live))])
			}
		}
		add(bleve.NewDocIDQuery(append(ids, "no such document")), "ids %d", i)
	}
	add(bleve.NewMatchAllQuery(), "all")
	// Pages of a query of many hits.
	for _, from := range []int{0, 10, 20, 500} {
		mq := bleve.NewMatchQuery(v.words[0] + " " + v.words[1])
		mq.SetField("content")
		qs = append(qs, namedQuery{name: fmt.Sprintf("page from %d", from), q: mq, from: from, size: 10})
	}
	return qs
}

func compareIndexes(t *testing.T, phase string, ours, zap bleve.Index, qs []namedQuery) {
	t.Helper()
	no, _ := ours.DocCount()
	nz, _ := zap.DocCount()
	if no != nz {
		t.Fatalf("%s: %d documents, zap %d", phase, no, nz)
	}
	hits := 0
	kinds := map[string]int{} // queries of each kind with hits
	for _, nq := range qs {
		req := bleve.NewSearchRequestOptions(nq.q, nq.size, nq.from, false)
		req.SortBy([]string{"-_score", "_id"})
		ro, err := ours.Search(req)
		if err != nil {
			t.Fatalf("%s: %s: %v", phase, nq.name, err)
		}
		rz, err := zap.Search(req)
		if err != nil {
			t.Fatalf("%s: %s: zap: %v", phase, nq.name, err)
		}
		if ro.Total != rz.Total || len(ro.Hits) != len(rz.Hits) {
			t.Errorf("%s: %s: %d hits (%d shown), zap %d (%d)", phase, nq.name, ro.Total, len(ro.Hits), rz.Total, len(rz.Hits))
			continue
		}
		hits += len(ro.Hits)
		if len(ro.Hits) > 0 {
			kinds[strings.Fields(nq.name)[0]]++
		}
		if i, ok := sameRanking(ro.Hits, rz.Hits); !ok {
			a, b := ro.Hits[i], rz.Hits[i]
			t.Errorf("%s: %s: hit %d is %s (%.12g), zap %s (%.12g)", phase, nq.name, i, a.ID, a.Score, b.ID, b.Score)
		}
	}
	for _, k := range []string{"term", "match", "phrase", "prefix", "fuzzy", "regexp", "wildcard", "conjunction", "disjunction", "boolean", "scoped", "ids", "page"} {
		if kinds[k] == 0 {
			t.Errorf("%s: no %s query has hits", phase, k)
		}
	}
	t.Logf("%s: %d hits; queries with hits: %v", phase, hits, kinds)
	for _, f := range testFields {
		compareDicts(t, phase, f.name, ours, zap)
	}
	compareDicts(t, phase, "_id", ours, zap)
}

// sameRanking reports whether two pages of hits rank the same documents with the same
// scores (to 1e-9) in the same order, and if not, the first hit that differs. Hits whose
// scores are within 1e-9 of each other are tied, and may come in either order: Bleve sums
// a document's scores of several terms in an order that follows the documents' numbers in
// a segment, which scorch gives in the order a batch's analyses finish, so two indexes of
// the same documents differ in the last bits of such scores — upstream zap against itself
// as well. A tie that reaches the end of the page may be cut at different documents.
func sameRanking(a, b []*search.DocumentMatch) (int, bool) {
	same := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*max(1, math.Abs(y)) }
	for i := 0; i < len(a); {
		if a[i].ID == b[i].ID && same(a[i].Score, b[i].Score) {
			i++
			continue
		}
		j := i
		for j < len(a) && same(a[j].Score, a[i].Score) && same(b[j].Score, a[i].Score) {
			j++
		}
		if j == i {
			return i, false
		}
		if j < len(a) {
			ids := func(h []*search.DocumentMatch) []string {
				var s []string
				for _, d := range h {
					s = append(s, d.ID)
				}
				slices.Sort(s)
				return s
			}
			if !slices.Equal(ids(a[i:j]), ids(b[i:j])) {
				return i, false
			}
		}
		i = j
	}
	return 0, true
}

func TestSameRanking(t *testing.T) {
	hits := func(s ...any) []*search.DocumentMatch {
		var h []*search.DocumentMatch
		for i := 0; i < len(s); i += 2 {
			h = append(h, &search.DocumentMatch{ID: s[i].(string), Score: s[i+1].(float64)})
		}
		return h
	}
	tie := math.Nextafter(2, 3) // 2 and the next float64: one term's score summed in another order
	for _, c := range []struct {
		name  string
		a, b  []*search.DocumentMatch
		first int
		same  bool
	}{
		{"same", hits("a", 3.0, "b", 2.0), hits("a", 3.0, "b", 2.0), 0, true},
		{"tied, swapped", hits("x", 3.0, "a", tie, "b", 2.0, "c", 1.0), hits("x", 3.0, "b", tie, "a", 2.0, "c", 1.0), 0, true},
		{"tie cut at the page's end", hits("x", 3.0, "a", 2.0, "b", 2.0), hits("x", 3.0, "c", 2.0, "a", 2.0), 0, true},
		{"another document in a tie", hits("a", 2.0, "b", 2.0, "c", 1.0), hits("a", 2.0, "d", 2.0, "c", 1.0), 1, false},
		{"swapped, not tied", hits("a", 3.0, "b", 2.0), hits("b", 3.0, "a", 2.0), 0, false},
		{"another score", hits("a", 3.0, "b", 2.0), hits("a", 3.0, "b", 2.1), 1, false},
	} {
		if i, ok := sameRanking(c.a, c.b); ok != c.same || !ok && i != c.first {
			t.Errorf("%s: sameRanking = %d, %v; want %d, %v", c.name, i, ok, c.first, c.same)
		}
	}
}

// compareDicts compares a field's terms, and how many documents hold each (deleted ones
// included). zap's dictionary counts every term after a term of one posting as 1 in a
// merged segment (its iterator's postings list keeps the one posting's mark), so the
// counts are held to zap's postings lists rather than to its dictionary.
func compareDicts(t *testing.T, phase, field string, ours, zap bleve.Index) {
	t.Helper()
	read := func(idx bleve.Index) []index.DictEntry {
		d, err := idx.FieldDict(field)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var out []index.DictEntry
		for {
			e, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				return out
			}
			out = append(out, *e)
		}
	}
	a, b := read(ours), read(zap)
	if len(a) != len(b) {
		t.Errorf("%s: field %s: %d terms, zap %d", phase, field, len(a), len(b))
		return
	}
	adv, err := zap.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range a {
		if a[i].Term != b[i].Term {
			t.Errorf("%s: field %s: term %d is %q, zap %q", phase, field, i, a[i].Term, b[i].Term)
			return
		}
		var n uint64
		for _, s := range r.(*scorch.IndexSnapshot).Segments() {
			d, err := s.Segment().Dictionary(field)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := d.PostingsList([]byte(b[i].Term), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			n += pl.Count()
		}
		if a[i].Count != n {
			t.Errorf("%s: field %s: term %q in %d documents, zap %d", phase, field, a[i].Term, a[i].Count, n)
			return
		}
	}
}

// TestSameDocumentsAsZapUnsafe: batches that return before they are persisted (as
// guide's index applies them), persisted and merged by scorch in the background,
// segments in memory merged too, then the index closed and reopened: each query finds
// the same documents as zap's index of the same batches does.
func TestSameDocumentsAsZapUnsafe(t *testing.T) {
	Register()
	m, err := testMapping()
	if err != nil {
		t.Fatal(err)
	}
	open := func(typ string, version int) bleve.Index {
		dir := t.TempDir()
		idx, err := bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, map[string]any{
			"forceSegmentType": typ, "forceSegmentVersion": version, "unsafe_batch": true,
		})
		if err != nil {
			t.Fatal(err)
		}
		idx.SetName(dir)
		return closedAtCleanup(t, idx)
	}
	ours, zap := open(Type, int(Version)), open("zap", 16)
	v := newVocabulary(17, 2000)
	rng := rand.New(rand.NewPCG(17, 18))
	var live []string
	persisted := make(chan struct{}, 2)
	for b := range 30 {
		bo, bz := ours.NewBatch(), zap.NewBatch()
		for i := range 40 {
			id, d := v.doc()
			id = docID(b*100+i, id)
			if len(live) > 0 && rng.IntN(5) == 0 {
				id = live[rng.IntN(len(live))]
				bo.Delete(id)
				bz.Delete(id)
				continue
			}
			live = append(live, id)
			_ = bo.Index(id, d)
			_ = bz.Index(id, d)
		}
		if b == 29 { // the last batch: persisted, with every one before it
			bo.SetPersistedCallback(func(error) { persisted <- struct{}{} })
			bz.SetPersistedCallback(func(error) { persisted <- struct{}{} })
		}
		if b == 29 { // the last batch: persisted, with every one before it
			bo.SetPersistedCallback(func(error) { persisted <- struct{}{} })
			bz.SetPersistedCallback(func(error) { persisted <- struct{}{} })
		}
		if err := ours.Batch(bo); err != nil {
			t.Fatal(err)
		}
		if err := zap.Batch(bz); err != nil {
			t.Fatal(err)
		}
	}
	qs := testQueries(v, rng, live)
	same := func(phase string) {
		t.Helper()
		for _, nq := range qs {
			ids := func(idx bleve.Index) []string {
				req := bleve.NewSearchRequestOptions(nq.q, 10000, 0, false)
				res, err := idx.Search(req)
				if err != nil {
					t.Fatalf("%s: %s: %v", phase, nq.name, err)
				}
				var out []string
				for _, h := range res.Hits {
					out = append(out, h.ID)
				}
				slices.Sort(out)
				return out
			}
			if a, b := ids(ours), ids(zap); !slices.Equal(a, b) {
				t.Fatalf("%s: %s: %d documents, zap %d", phase, nq.name, len(a), len(b))
			}
		}
	}
	same("as applied")
	// Persisted, then closed and opened again.
	<-persisted
	<-persisted
	ours, zap = reopen(t, ours), reopen(t, zap)
	same("reopened")
}
