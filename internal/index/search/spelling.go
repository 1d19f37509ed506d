package search

import (
	"cmp"
	"slices"
	"unicode/utf8"

	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/text"
)

// Typo tolerance: a word of at least minTypoRunes letters that no document holds, in any
// form, is replaced by the indexed word closest to it, within maxTypoEdits edits (fewest
// edits first, then the word most documents hold).
const (
	minTypoRunes = 5
	maxTypoEdits = 2
)

// Correction is a word of the query replaced by one the index holds.
type Correction struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// correct returns q with its unknown words corrected, and the corrections made.
func (v view) correct(q querylang.Query) (querylang.Query, []Correction) {
	adv, err := v.idx.Advanced()
	if err != nil {
		return q, nil
	}
	r, err := adv.Reader()
	if err != nil {
		return q, nil
	}
	defer r.Close()
	fz, ok := r.(bindex.IndexReaderFuzzy)
	if !ok {
		return q, nil
	}
	var subs []Correction
	words := slices.Clone(q.Words)
	for i, w := range words {
		if !typoWord(w) || v.known(w) {
			continue
		}
		if to := closest(fz, w); to != "" {
			words[i] = to
			subs = append(subs, Correction{From: w, To: to})
		}
	}
	if len(subs) == 0 {
		return q, nil
	}
	q.Words = words
	return q, subs
}

// known reports whether a document holds the word, or another form of it, in its name or
// its content.
func (v view) known(w string) bool {
	for _, f := range []string{schema.Content, schema.Name} {
		if v.holds(f, w) {
			return true
		}
	}
	s := v.stem(w)
	return s != "" && (len(v.forms(schema.Content, w, s)) > 0 || len(v.forms(schema.Name, w, s)) > 0)
}

// holds reports whether field holds the word w (true when in doubt). The dictionary is
// closed however its reading ends: Bleve holds its index's lock until then, and a panic
// on a damaged segment that left it open would make the index's Close wait forever.
func (v view) holds(field, w string) bool {
	d, err := v.idx.FieldDictRange(field, []byte(w), []byte(w))
	if err != nil {
		return true // in doubt, leave the word alone
	}
	defer d.Close()
	e, _ := d.Next()
	return e != nil
}

// Candidate is an indexed word near a word no document holds: its field, its distance
// in edits, and how many documents of the field hold it.
type Candidate struct {
	Field string `json:"f"`
	Term  string `json:"t"`
	Dist  uint8  `json:"e"`
	Count uint64 `json:"n"`
}

// closest finds the indexed word nearest to w: fewest edits, then most documents, then
// the first in order.
func closest(fz bindex.IndexReaderFuzzy, w string) string {
	return pick(candidates(fz, w))
}

// candidates are the indexed words within maxTypoEdits of w, in the fields corrections
// come from.
func candidates(fz bindex.IndexReaderFuzzy, w string) []Candidate {
	var cs []Candidate
	for _, f := range []string{schema.Content, schema.Name} {
		func() {
			d, a, err := fz.FieldDictFuzzyAutomaton(f, w, maxTypoEdits, "")
			if err != nil {
				return
			}
			defer d.Close()
			for n := 0; n < maxFormScan; n++ {
				e, err := d.Next()
				if err != nil || e == nil {
					break
				}
				if ok, dist := a.MatchAndDistance(e.Term); ok && dist > 0 && utf8.RuneCountInString(e.Term) >= minTypoRunes-1 {
					cs = append(cs, Candidate{f, e.Term, dist, e.Count})
				}
			}
		}()
	}
	return cs
}

// pick chooses among candidates: fewest edits, then most documents, then the first in
// order; "" when there are none.
func pick(cs []Candidate) string {
	if len(cs) == 0 {
		return ""
	}
	slices.SortFunc(cs, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.Dist, b.Dist), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Term, b.Term))
	})
	return cs[0].Term
}

// typoWord reports whether w is a word a correction may replace.
func typoWord(w string) bool {
	return utf8.RuneCountInString(w) >= minTypoRunes && !text.HasCJK(w)
}
