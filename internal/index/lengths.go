package index

import (
	"encoding/json"
	"math"

	bdoc "github.com/blevesearch/bleve/v2/document"
	bsearch "github.com/blevesearch/bleve/v2/search"

	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/text"
)

// keyLengths holds the field lengths, written in the same batch as the documents counted.
var keyLengths = []byte("guide.lengths")

// lengthFields are the fields whose mean length BM25 is given: the text fields a word is
// searched in.
var lengthFields = []string{schema.Name, schema.Path, schema.Title, schema.Headings, schema.Meta, schema.Lead, schema.Content, schema.ContentCJK}

// fieldLength is the words of one field over every document indexed that has it.
type fieldLength struct {
	Words uint64 `json:"w"`
	Docs  uint64 `json:"d"`
}

// lengths are the field lengths of every document indexed since the index was created,
// so that BM25 weighs a field's length against the mean length of that field. Bleve's
// own BM25 takes the number of different words of a field for its total length (the
// mean of a README's text came out as 27 words), which made every long document rank as
// if it were fifty times the mean and a passing mention in a short one outrank it. A
// document indexed again is counted again, and a deleted one stays counted: the mean is
// of the documents indexed, which is what a mean length needs to be.
type lengths map[string]fieldLength

// add counts the words of an indexed document's fields. counted, when not nil, holds
// the length of each of schema.Ranked's fields as the document's analysis made it
// (analyzedLengths), -1 for one to count here: counting a text again was a second pass
// over every byte of it in the goroutine that builds the index's segments.
func (l lengths) add(d *document, counted []int) {
	for i, f := range schema.Ranked {
		n := -1
		if counted != nil {
			n = counted[i]
		}
		if n < 0 {
			txt := d.field(f.Name)
			n = text.CountWords(txt)
			if f.Stemmed {
				n = countTokens(txt)
			}
		}
		if n > 0 {
			l[f.Name] = fieldLength{Words: l[f.Name].Words + uint64(n), Docs: l[f.Name].Docs + 1}
		}
	}
	if d.ContentCJK != "" {
		n := 0
		for _, r := range d.ContentCJK {
			if text.IsCJK(r) {
				n++ // a bigram starts at nearly every CJK character
			}
		}
		l[schema.ContentCJK] = fieldLength{Words: l[schema.ContentCJK].Words + uint64(n), Docs: l[schema.ContentCJK].Docs + 1}
	}
}

// analyzedLengths are the lengths of doc's fields of schema.Ranked as their analysis
// counted them (a field the mapping left out is 0 long; one not analyzed as a wordField,
// -1, is counted by add).
func analyzedLengths(doc *bdoc.Document) []int {
	out := make([]int, len(schema.Ranked))
	for _, f := range doc.Fields {
		i, ok := rankedIndex[f.Name()]
		if !ok {
			continue
		}
		if w, ok := f.(*wordField); ok && w.done {
			out[i] += w.length
		} else {
			out[i] = -1
		}
	}
	return out
}

// rankedIndex is each ranked field's place in schema.Ranked.
var rankedIndex = func() map[string]int {
	m := make(map[string]int, len(schema.Ranked))
	for i, f := range schema.Ranked {
		m[f.Name] = i
	}
	return m
}()

func (l lengths) clone() lengths {
	out := make(lengths, len(l))
	for k, v := range l {
		out[k] = v
	}
	return out
}

func (l lengths) encode() []byte {
	b, _ := json.Marshal(l)
	return b
}

func decodeLengths(b []byte) lengths {
	l := lengths{}
	if len(b) > 0 {
		_ = json.Unmarshal(b, &l) // unreadable: counted afresh, the ranking degrades gently
	}
	return l
}

// bm25Stats are the statistics BM25 scores with: the number of documents, and per field
// a "cardinality" Bleve divides by that number to get the field's mean length (it rounds
// up). A field without counts (a keyword field, or one no document has yet) is given a
// mean of one word; so is "*", the field of the unscored disjunctions Bleve merges a
// filter's terms into.
func (l lengths) bm25Stats(docs uint64) *bsearch.BM25Stats {
	if docs == 0 || len(l) == 0 {
		return nil
	}
	st := &bsearch.BM25Stats{DocCount: float64(docs), FieldCardinality: map[string]int{}}
	for _, f := range append(lengthFields, schema.Folders, schema.Dir, schema.Session, schema.Ext, "*") {
		mean := 1.0
		if c := l[f]; c.Docs > 0 {
			mean = max(1, float64(c.Words)/float64(c.Docs))
		}
		st.FieldCardinality[f] = int(math.Round(mean * float64(docs)))
	}
	return st
}

// countTokens counts the tokens the stemmed fields' analyzer makes of s: each word, and
// the parts of a word written in camel case besides it (camelParts). BM25 weighs a
// field's length in tokens against the mean of lengths counted the same way.
func countTokens(s string) int {
	n := 0
	text.Words([]byte(s), func(sp text.Span) bool {
		n++
		if parts := camelSplit([]byte(s[sp.Start:sp.End])); len(parts) >= 2 {
			n += len(parts)
		}
		return true
	})
	return n
}

// FieldLengths returns the field lengths of the documents applied, for the statistics of
// a search over several partitions (search.Fanout), which sums them.
func (x *Index) FieldLengths() map[string]search.FieldLength {
	l := x.lengths.Load()
	if l == nil {
		return nil
	}
	out := make(map[string]search.FieldLength, len(*l))
	for f, n := range *l {
		out[f] = search.FieldLength{Words: n.Words, Docs: n.Docs}
	}
	return out
}

// BM25Of returns the statistics BM25 scores docs documents by, from field lengths summed
// over partitions: what one index of all of them would score by (Index.BM25).
func BM25Of(l map[string]search.FieldLength, docs uint64) *bsearch.BM25Stats {
	own := make(lengths, len(l))
	for f, n := range l {
		own[f] = fieldLength{Words: n.Words, Docs: n.Docs}
	}
	return own.bm25Stats(docs)
}
