package segment

import (
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	api "github.com/blevesearch/scorch_segment_api/v2"
	"github.com/blevesearch/vellum"
)

// Dictionary is a field's terms in a segment.
type Dictionary struct {
	seg    *Segment
	f      *field         // nil: a field the segment does not have
	fst    *vellum.FST    // nil: no terms
	reader *vellum.Reader // looks terms up, one at a time
}

// Dictionary returns the terms of the field called name (none, if the segment has no
// such field).
func (s *Segment) Dictionary(name string) (api.TermDictionary, error) {
	return s.dictionary(name)
}

func (s *Segment) dictionary(name string) (*Dictionary, error) {
	d := &Dictionary{seg: s}
	if i, ok := s.byName[name]; ok {
		d.f = s.fields[i]
		fst, err := d.f.terms()
		if err != nil {
			return nil, err
		}
		if fst != nil {
			r, err := fst.Reader()
			if err != nil {
				return nil, err
			}
			d.fst, d.reader = fst, r
		}
	}
	return d, nil
}

// Cardinality is how many terms the field has in the segment (Bleve's BM25 takes the sum
// over the segments for the field's total length).
func (d *Dictionary) Cardinality() int {
	if d.fst == nil {
		return 0
	}
	return d.fst.Len()
}

// Contains reports whether term is one of the field's.
func (d *Dictionary) Contains(term []byte) (bool, error) {
	if d.fst == nil {
		return false, nil
	}
	_, ok, err := fstGet(d.fst, term)
	return ok, err
}

// PostingsList returns term's postings, less the documents of except.
func (d *Dictionary) PostingsList(term []byte, except *roaring.Bitmap, prealloc api.PostingsList) (api.PostingsList, error) {
	pl, _ := prealloc.(*PostingsList)
	return d.postingsList(term, except, pl)
}

func (d *Dictionary) postingsList(term []byte, except *roaring.Bitmap, pl *PostingsList) (*PostingsList, error) {
	if pl == nil {
		pl = &PostingsList{}
	}
	pl.reset(d.f, except)
	if d.fst == nil {
		return pl, nil
	}
	v, ok, err := fstGet(d.reader, term)
	if err != nil {
		return nil, fmt.Errorf("segment: field %q: %w", d.f.name, err)
	}
	if !ok {
		return pl, nil
	}
	if err := pl.read(v, d.seg.docs); err != nil {
		return nil, fmt.Errorf("segment: field %q, term %q: %w", d.f.name, term, err)
	}
	return pl, nil
}

// AutomatonIterator walks the terms from startKeyInclusive to endKeyExclusive (nil: no
// bound) that automaton a accepts (nil: every term), with how many documents hold each,
// deleted ones included.
func (d *Dictionary) AutomatonIterator(a api.Automaton, startKeyInclusive, endKeyExclusive []byte) api.DictionaryIterator {
	return d.iterator(a, startKeyInclusive, endKeyExclusive, false)
}

// AutomatonIteratorOmitCount is AutomatonIterator without the counts, which Bleve's
// fuzzy and regexp searches do not read.
func (d *Dictionary) AutomatonIteratorOmitCount(a api.Automaton, startKeyInclusive, endKeyExclusive []byte) api.DictionaryIterator {
	return d.iterator(a, startKeyInclusive, endKeyExclusive, true)
}

func (d *Dictionary) iterator(a api.Automaton, start, end []byte, omitCount bool) *DictionaryIterator {
	it := &DictionaryIterator{d: d, omitCount: omitCount}
	if d.fst == nil {
		return it
	}
	var aut vellum.Automaton
	if a != nil {
		aut = a
	}
	fi, err := fstSearch(d.fst, aut, start, end)
	switch {
	case err == nil:
		it.it = fi
	case !errors.Is(err, vellum.ErrIteratorDone):
		it.err = err
	}
	return it
}

// DictionaryIterator walks a dictionary's terms.
type DictionaryIterator struct {
	d         *Dictionary
	it        *vellum.FSTIterator
	err       error
	entry     index.DictEntry
	omitCount bool
}

// Next returns the next term, nil after the last.
func (i *DictionaryIterator) Next() (*index.DictEntry, error) {
	if i.err != nil {
		return nil, i.err
	}
	if i.it == nil {
		return nil, nil
	}
	term, v, err := fstCurrent(i.it)
	if err != nil {
		i.err = err
		return nil, err
	}
	i.entry.Term = string(term)
	i.entry.EditDistance = i.it.EditDistance()
	i.entry.Count = 0
	if !i.omitCount {
		n, err := i.d.f.count(v, i.d.seg.docs)
		if err != nil {
			i.err = fmt.Errorf("segment: field %q, term %q: %w", i.d.f.name, term, err)
			return nil, i.err
		}
		i.entry.Count = n
	}
	if err := fstNext(i.it); err != nil {
		i.it = nil
		if !errors.Is(err, vellum.ErrIteratorDone) {
			i.err = err
		}
	}
	return &i.entry, nil
}

// count returns how many postings the dictionary value v stands for.
func (f *field) count(v uint64, docs uint64) (uint64, error) {
	if v&inlineFlag != 0 {
		return 1, nil
	}
	if v >= uint64(len(f.postings)) {
		return 0, damaged("postings at %d of %d", v, len(f.postings))
	}
	n, _, ok := uvarintAt(f.postings, int(v))
	if !ok || n == 0 || n > docs {
		return 0, damaged("postings count %d", n)
	}
	return n, nil
}

// vellum panics on some malformed dictionaries rather than failing: checked by their
// checksums, they are what was written, but a panic is an error here all the same.

func recovered(err *error) {
	if r := recover(); r != nil {
		*err = damaged("dictionary: %v", r)
	}
}

func fstNext(it *vellum.FSTIterator) (err error) {
	defer recovered(&err)
	return it.Next()
}

func fstSearch(f *vellum.FST, a vellum.Automaton, start, end []byte) (it *vellum.FSTIterator, err error) {
	defer recovered(&err)
	return f.Search(a, start, end)
}

func fstGet(r interface {
	Get([]byte) (uint64, bool, error)
}, term []byte) (v uint64, ok bool, err error) {
	defer recovered(&err)
	return r.Get(term)
}

func fstCurrent(it *vellum.FSTIterator) (term []byte, v uint64, err error) {
	defer recovered(&err)
	term, v = it.Current()
	return term, v, nil
}

func fstIterator(f *vellum.FST) (it *vellum.FSTIterator, err error) {
	defer recovered(&err)
	return f.Iterator(nil, nil)
}
