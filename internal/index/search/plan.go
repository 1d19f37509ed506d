package search

import (
	"context"
	"strings"

	bq "github.com/blevesearch/bleve/v2/search/query"

	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/text"
)

// Weights: a name match counts twice a content match (the other fields' weights are in
// schema.Ranked); another form of the word ("dragons" for "dragon") counts half as much as
// the word itself; words of the query that stand near each other in a document, as they
// do in the query, add boostNear per pair.
const (
	boostName       = 2.0
	boostContent    = 1.0
	boostForm       = 0.5
	boostContentCJK = 1.0
	boostNear       = 4.0
)

// Limits of the expansion of a word to the other indexed forms of its stem: how many
// dictionary terms that share its stem's prefix are looked at, and how many forms are
// searched.
const (
	maxFormScan = 2000
	maxForms    = 32
	maxFormTail = 9 // bytes a form may add to the stem ("organ" → "organizations")
)

// build turns a parsed query into Bleve's query tree, without ever using Bleve's query
// string syntax: every word is a term query on a field.
func (v view) build(q querylang.Query, folder string, scope *Scope, relaxed bool) bq.Query {
	var required []bq.Query
	for _, w := range q.Words {
		required = append(required, v.wordQuery(w, 1))
	}
	for _, p := range q.Phrases {
		required = append(required, v.phraseQuery(p))
	}
	// Each level of Bleve's searchers costs a call per matching document. A conjunction of
	// one query scores as that query (a sum of one score), so none is made: not around a
	// single word, and not around the required part (NewBooleanQuery would wrap it in
	// one). A filter that admits every document is left out too: a Boolean query of its
	// required part alone is then searched as that part.
	var must bq.Query
	switch {
	case relaxed:
		d := bq.NewDisjunctionQuery(required)
		d.SetMin(1)
		must = d
	case len(required) == 1:
		must = required[0]
	default:
		must = bq.NewConjunctionQuery(required)
	}
	top := &bq.BooleanQuery{Must: must}
	for _, w := range q.Optional {
		top.AddShould(v.wordQuery(w, 0.2))
	}
	for _, p := range q.Pairs {
		near := bq.NewPhraseQuery(p, schema.Content)
		near.SetBoost(boostNear)
		top.AddShould(near)
	}
	if !v.admitsAll(folder, scope) {
		top.AddFilter(scopeQuery(folder, scope))
	}
	return top
}

func term(field, t string, boost float64) bq.Query {
	q := bq.NewTermQuery(t)
	q.SetField(field)
	q.SetBoost(boost)
	return q
}

// wordQuery finds one folded word in the name or the content: the word itself, or another
// form of it (the indexed words of the same English stem), or, for a CJK word, a run of
// bigrams.
func (v view) wordQuery(w string, weight float64) bq.Query {
	var cs []termClause
	s := v.stem(w)
	for _, f := range schema.Ranked {
		t := w
		if f.Stemmed && s != "" {
			t = s
		}
		cs = append(cs, termClause{f.Name, t, weight * f.Boost})
	}
	if s != "" {
		for _, form := range v.forms(schema.Name, w, s) {
			cs = append(cs, termClause{schema.Name, form, weight * boostName * boostForm})
		}
		// Other forms are looked for in the content only: the Markdown fields rank the
		// word itself, and each form searched there would cost a term look-up per field.
		for _, form := range v.forms(schema.Content, w, s) {
			cs = append(cs, termClause{schema.Content, form, weight * boostContent * boostForm})
		}
	}
	terms := newTermsQuery(cs, &v.saturations, &v.counts, v.part)
	if !text.HasCJK(w) {
		return terms
	}
	m := bq.NewMatchPhraseQuery(w)
	m.SetField(schema.ContentCJK)
	m.Analyzer = schema.AnalyzerCJK
	m.SetBoost(weight * boostContentCJK)
	return newSumQuery([]bq.Query{terms, m})
}

// forms returns the words of field other than w whose stem is s. A Porter stem is a
// prefix of its words, except that a final y may have become i ("happi" for happy), so
// the dictionary is scanned from the stem less a final i.
func (v view) forms(field, w, s string) []string {
	if v.part != nil && v.part.st != nil {
		return v.part.st.Forms[termKey(field, w)]
	}
	out := v.formsHere(field, w, s)
	if v.part != nil && v.part.rec != nil {
		v.part.mu.Lock()
		v.part.rec.Forms[termKey(field, w)] = out
		v.part.mu.Unlock()
	}
	return out
}

// formsHere is forms in this index alone.
func (v view) formsHere(field, w, s string) []string {
	prefix := strings.TrimSuffix(s, "i")
	if len(prefix) < 2 {
		return nil
	}
	d, err := v.idx.FieldDictPrefix(field, []byte(prefix))
	if err != nil {
		return nil
	}
	defer d.Close()
	var out []string
	for n := 0; n < maxFormScan && len(out) < maxForms; n++ {
		e, err := d.Next()
		if err != nil || e == nil {
			break
		}
		if e.Term == w || len(e.Term) > len(s)+maxFormTail {
			continue
		}
		if v.stem(e.Term) == s {
			out = append(out, e.Term)
		}
	}
	return out
}

// phraseQuery finds words next to each other, in the name or the content.
func (v view) phraseQuery(p []string) bq.Query {
	name := bq.NewPhraseQuery(p, schema.Name)
	name.SetBoost(boostName)
	content := bq.NewPhraseQuery(p, schema.Content)
	content.SetBoost(boostContent)
	qs := []bq.Query{name, content}
	joined := strings.Join(p, " ")
	if text.HasCJK(joined) {
		m := bq.NewMatchPhraseQuery(joined)
		m.SetField(schema.ContentCJK)
		m.Analyzer = schema.AnalyzerCJK
		m.SetBoost(boostContentCJK)
		qs = append(qs, m)
	}
	return newSumQuery(qs)
}

// stem returns the stemmed form of a folded word.
func (v view) stem(w string) string {
	a := v.idx.Mapping().AnalyzerNamed(schema.AnalyzerStem)
	if a == nil {
		return ""
	}
	toks := a.Analyze([]byte(w))
	if len(toks) != 1 {
		return ""
	}
	return string(toks[0].Term)
}

// plainTerms returns the terms of a query that is one word's alone, over every document:
// no other word, phrase or ranking words, no filter. Such a query is collected by
// collect rather than by Bleve.
func plainTerms(q bq.Query) *termsQuery {
	b, ok := q.(*bq.BooleanQuery)
	if !ok || b.Should != nil || b.MustNot != nil || b.Filter != nil {
		return nil
	}
	tq, _ := b.Must.(*termsQuery)
	return tq
}

// best finds the best documents of q for a page of limit hits — limit+1+tieSlack of them,
// or more when they tie — ordered by score and then path, as run does without a cursor;
// exact is run's. One word's query, and a sentence's, are collected directly (collect),
// others by Bleve.
func (v view) best(ctx context.Context, q bq.Query, limit int, relaxed bool) (Result, func(int) bool, error) {
	if !v.BleveCollector {
		if tq := plainTerms(q); tq != nil {
			return v.collect(ctx, tq, nil, limit, relaxed)
		}
		if tq, groups := plainSentence(q); tq != nil {
			return v.collect(ctx, tq, groups, limit, relaxed)
		}
	}
	return v.run(ctx, q, limit+1+tieSlack, nil, relaxed, false)
}
