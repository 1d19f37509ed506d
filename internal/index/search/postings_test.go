package search_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	bsearch "github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"

	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/index/search"
)

// TestTermsQueryScoresAsBleve holds termsQuery, which reads postings itself, to the sum of
// Bleve's term queries it stands for: the same documents, with the same scores, alone,
// under a conjunction (which moves it on with Advance) and a filter, across segments and
// deleted documents.
func TestTermsQueryScoresAsBleve(t *testing.T) {
	t.Parallel()
	x, vocab := randomIndex(t, 21)
	r := rand.New(rand.NewPCG(5, 6))
	fields := []string{schema.Name, schema.Path, schema.Title, schema.Meta, schema.Headings, schema.Lead, schema.Content}
	for round := range 150 {
		var cs []search.Clause
		for range 1 + r.IntN(12) {
			cs = append(cs, search.Clause{Field: fields[r.IntN(len(fields))], Term: vocab[r.IntN(len(vocab))], Boost: 0.1 + 2*r.Float64()})
		}
		terms, generic := search.TermsQuery(cs)
		other := search.Term(schema.Content, vocab[r.IntN(len(vocab))], 1)
		filter := search.Term(schema.Folders, fmt.Sprintf("d%d", r.IntN(3)), 0)
		for _, c := range []struct {
			name         string
			direct, want bq.Query
		}{
			{"alone", terms, generic},
			{"conjunction", bq.NewConjunctionQuery([]bq.Query{other, terms}), bq.NewConjunctionQuery([]bq.Query{other, generic})},
			{"filtered", &bq.BooleanQuery{Must: terms, Filter: filter}, &bq.BooleanQuery{Must: generic, Filter: filter}},
		} {
			got, want := bleveSearch(t, x, c.direct), bleveSearch(t, x, c.want)
			if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
				t.Fatalf("round %d, %s, clauses %v: direct matches %v, Bleve's terms %v", round, c.name, cs, sortedKeys(got), sortedKeys(want))
			}
			for id, s := range want {
				if math.Abs(got[id]-s) > 1e-12*s {
					t.Fatalf("round %d, %s, clauses %v: %s scores %v direct, %v by Bleve's terms", round, c.name, cs, id, got[id], s)
				}
			}
		}
	}
}

// TestTermsAdvanceAsBleve moves termsQuery's searcher and Bleve's sum of term searchers
// to the same random documents: each lands on the same next match, with the same score.
func TestTermsAdvanceAsBleve(t *testing.T) {
	t.Parallel()
	x, vocab := randomIndex(t, 41)
	r := rand.New(rand.NewPCG(7, 8))
	idx := bleveIndex(t, x)
	reader, ctx, err := (&search.Engine{Index: x}).Reader(t.Context(), idx)
	noErr(t, err, "reader")
	defer reader.Close()
	for round := range 100 {
		var cs []search.Clause
		for range 1 + r.IntN(6) {
			cs = append(cs, search.Clause{Field: schema.Content, Term: vocab[r.IntN(len(vocab))], Boost: 1})
		}
		dq, gq := search.TermsQuery(cs)
		direct, err := dq.Searcher(ctx, reader, idx.Mapping(), bsearch.SearcherOptions{})
		noErr(t, err, "direct")
		generic, err := gq.Searcher(ctx, reader, idx.Mapping(), bsearch.SearcherOptions{})
		noErr(t, err, "generic")
		sctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(direct.DocumentMatchPoolSize()+generic.DocumentMatchPoolSize(), 0)}
		target := uint64(0)
		for {
			target += uint64(r.IntN(40))
			id := make([]byte, 8)
			binary.BigEndian.PutUint64(id, target)
			a, err := direct.Advance(sctx, id)
			noErr(t, err, "advance direct")
			b, err := generic.Advance(sctx, id)
			noErr(t, err, "advance generic")
			if (a == nil) != (b == nil) || a != nil && (!a.IndexInternalID.Equals(b.IndexInternalID) || math.Abs(a.Score-b.Score) > 1e-12*b.Score) {
				t.Fatalf("round %d, %v, advance to %d: direct %v, Bleve's terms %v", round, cs, target, a, b)
			}
			if a == nil {
				break
			}
			target = binary.BigEndian.Uint64(a.IndexInternalID) + 1
			sctx.DocumentMatchPool.Put(a)
			sctx.DocumentMatchPool.Put(b)
		}
		_ = direct.Close()
		_ = generic.Close()
	}
}
