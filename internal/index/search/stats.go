package search

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bsearch "github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// A project split into partitions is searched as one index would be (parts.go): every
// partition scores by the statistics of the whole project, which a first step gathers from
// each (Gathered) and sums (Stats). BM25 needs three of them: the number of documents, the
// mean length of each field, and the number of documents holding each term searched; and
// the query's plan needs the other forms of each word that any partition holds, since a
// plan of other terms scores every document differently (the norm of a query counts its
// terms).

// FieldLength is the words of one field over the documents indexed that have it, and how
// many those are (the index's field lengths, summed over partitions).
type FieldLength struct {
	Words uint64 `json:"w"`
	Docs  uint64 `json:"d"`
}

// Stats are the statistics of a whole project that a partition scores one search by.
type Stats struct {
	BM25 *bsearch.BM25Stats `json:"bm25"`
	// Terms: documents holding each term, by termKey(field, term).
	Terms map[string]uint64 `json:"terms"`
	// Forms: the other indexed forms of a word (forms), by termKey(field, word).
	Forms map[string][]string `json:"forms"`
	// AdmitsAll: no partition holds documents of another session than the search's
	// (admitsAll), so the search needs no filter.
	AdmitsAll map[string]bool `json:"admits_all"`
}

func termKey(field, term string) string { return field + "\x00" + term }

// part is how one search of one index takes part in a search of several: the whole
// project's statistics it scores by, or the record of what it looked up, to gather them.
type part struct {
	st  *Stats
	rec *Gathered
	mu  sync.Mutex // guards rec
	// misses counts the terms scored without a whole-project count (the index changed
	// between the steps): each is scored by this index's own count.
	misses atomic.Int64
}

// docs returns how many documents hold the term, in the whole project when st is set,
// and records this index's count when gathering.
func (p *part) docs(field, term string, here uint64) uint64 {
	if p == nil {
		return here
	}
	k := termKey(field, term)
	if p.rec != nil {
		p.mu.Lock()
		p.rec.Terms[k] = here
		p.mu.Unlock()
	}
	if p.st == nil {
		return here
	}
	n, ok := p.st.Terms[k]
	if !ok {
		p.misses.Add(1)
		return here
	}
	return n
}

// statsReader is an index reader that counts a term's documents over the whole project
// (part.docs), for Bleve's term searchers, which take the count from their term reader.
type statsReader struct {
	*scorch.IndexSnapshot
	p *part
}

func (r *statsReader) TermFieldReader(ctx context.Context, term []byte, field string, freq, norm, vectors bool) (bindex.TermFieldReader, error) {
	tfr, err := r.IndexSnapshot.TermFieldReader(ctx, term, field, freq, norm, vectors)
	if err != nil {
		return nil, err
	}
	return &countedTermReader{TermFieldReader: tfr, n: r.p.docs(field, string(term), tfr.Count())}, nil
}

// DocCount is the documents of the whole project.
func (r *statsReader) DocCount() (uint64, error) {
	if r.p.st != nil && r.p.st.BM25 != nil {
		return uint64(r.p.st.BM25.DocCount), nil
	}
	return r.IndexSnapshot.DocCount()
}

// countedTermReader is a term's reader whose count is the whole project's.
type countedTermReader struct {
	bindex.TermFieldReader
	n uint64
}

func (t *countedTermReader) Count() uint64 { return t.n }

// snapshotOf returns the scorch snapshot a reader reads, through a statsReader.
func snapshotOf(r bindex.IndexReader) (*scorch.IndexSnapshot, bool) {
	switch r := r.(type) {
	case *scorch.IndexSnapshot:
		return r, true
	case *statsReader:
		return r.IndexSnapshot, true
	}
	return nil, false
}
