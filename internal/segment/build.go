package segment

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	index "github.com/blevesearch/bleve_index_api"
)

// Building a segment. Each field keeps a map from its terms to their postings, and each
// term's postings are varints appended to a buffer of its own as the documents come (the
// form recordWriter reads): a token costs one map look-up and a few bytes, with no string
// and no struct of its own. The terms are then sorted once and their postings written in
// that order. What a build holds is the batch's postings and the file being written.

// builder builds a segment from analyzed documents.
type builder struct {
	docs   int
	byName map[string]*fieldBuilder
	fields []*fieldBuilder
	ids    []byte
	idEnds []uint32

	touched []*fieldBuilder // the fields of the document being added
	slab    []byte          // where terms' first postings are kept
	merged  map[string]int  // a field given twice in a document: its terms
	mfreqs  []mergedFreq
	pos     []uint64
	err     error
}

// fieldBuilder gathers one field's postings.
type fieldBuilder struct {
	name      string
	positions bool
	terms     map[string]uint32 // to their place in post
	post      []termPostings
	lengths   []uint32 // by document
	pending   []index.Field
}

type termPostings struct {
	buf  []byte // built postings
	last uint32 // the last document
	n    uint32 // how many
}

type mergedFreq struct {
	freq int
	locs []*index.TokenLocation
}

// slabSize is how much of the slab a term's postings first take; a term's postings
// outgrowing it move to a buffer of their own.
const (
	slabSize  = 64 << 10
	firstSize = 16
)

func newBuilder(docs int) *builder {
	return &builder{docs: docs, byName: map[string]*fieldBuilder{}, idEnds: make([]uint32, 0, docs)}
}

// add adds document doc, the next.
func (b *builder) add(doc int, d index.Document) error {
	b.touched = b.touched[:0]
	var id []byte
	visit := func(f index.Field) {
		name := f.Name()
		fb := b.byName[name]
		if fb == nil {
			fb = &fieldBuilder{name: name, positions: f.Options().IncludeTermVectors(), terms: map[string]uint32{}, lengths: make([]uint32, b.docs)}
			b.byName[name] = fb
			b.fields = append(b.fields, fb)
		}
		if len(fb.pending) == 0 {
			b.touched = append(b.touched, fb)
		}
		fb.pending = append(fb.pending, f)
		if name == idField {
			id = f.Value()
		} else if f.Options().IsStored() && b.err == nil {
			b.err = fmt.Errorf("segment: field %q is stored; this format stores the documents' ids alone", name)
		}
	}
	d.VisitComposite(func(f index.CompositeField) { visit(f) })
	d.VisitFields(visit)
	if b.err != nil {
		return b.err
	}
	if id == nil {
		return fmt.Errorf("segment: document %d has no %s field", doc, idField)
	}
	b.ids = append(b.ids, id...)
	if len(b.ids) > 1<<32-1 {
		return fmt.Errorf("segment: identifiers too long")
	}
	b.idEnds = append(b.idEnds, uint32(len(b.ids)))
	for _, fb := range b.touched {
		if err := b.addField(fb, uint32(doc)); err != nil {
			return err
		}
		clear(fb.pending)
		fb.pending = fb.pending[:0]
	}
	return nil
}

// Terms is a field that gives its analyzed terms straight, each once with its frequency
// and, when the field keeps term vectors, its positions in increasing order: the
// segment's builder reads these instead of Bleve's TokenFrequencies, a map with a struct
// of every term and of every occurrence. AnalyzedLength is still the field's length.
type Terms interface {
	index.Field
	// VisitTerms calls fn with each term of the field once. term and positions are only
	// read, and only during the call; positions is nil for a field without term vectors.
	VisitTerms(fn func(term []byte, freq int, positions []uint32) error) error
}

// addField adds the document's values of a field, its pending ones.
func (b *builder) addField(fb *fieldBuilder, doc uint32) error {
	if len(fb.pending) == 1 {
		f := fb.pending[0]
		fb.lengths[doc] = uint32(f.AnalyzedLength())
		if t, ok := f.(Terms); ok {
			return t.VisitTerms(func(term []byte, freq int, positions []uint32) error {
				p, err := b.posting(fb, term, doc, freq)
				if err != nil || !fb.positions {
					return err
				}
				if len(positions) != freq {
					return fmt.Errorf("segment: term %q of field %q occurs %d times at %d positions", term, fb.name, freq, len(positions))
				}
				prev := uint32(0)
				for _, at := range positions {
					if at < prev {
						return fmt.Errorf("segment: term %q of field %q: positions out of order", term, fb.name)
					}
					p.buf = binary.AppendUvarint(p.buf, uint64(at-prev))
					prev = at
				}
				return nil
			})
		}
		for term, tf := range f.AnalyzedTokenFrequencies() {
			if err := b.postingLocations(fb, term, doc, tf.Frequency(), tf.Locations); err != nil {
				return err
			}
		}
		return nil
	}
	// A field given more than once (an array): one posting of each term, as zap merges
	// them.
	if b.merged == nil {
		b.merged = map[string]int{}
	}
	clear(b.merged)
	b.mfreqs = b.mfreqs[:0]
	length := 0
	for _, f := range fb.pending {
		length += f.AnalyzedLength()
		for term, tf := range tokenFrequencies(f) {
			i, ok := b.merged[term]
			if !ok {
				i = len(b.mfreqs)
				b.merged[term] = i
				b.mfreqs = append(b.mfreqs, mergedFreq{})
			}
			b.mfreqs[i].freq += tf.Frequency()
			b.mfreqs[i].locs = append(b.mfreqs[i].locs, tf.Locations...)
		}
	}
	fb.lengths[doc] = uint32(length)
	for term, i := range b.merged {
		if err := b.postingLocations(fb, term, doc, b.mfreqs[i].freq, b.mfreqs[i].locs); err != nil {
			return err
		}
	}
	return nil
}

// tokenFrequencies are f's terms as Bleve gives them: a Terms field's made from its terms
// (for a field given more than once in a document, rare enough to pay for it).
func tokenFrequencies(f index.Field) index.TokenFrequencies {
	if t, ok := f.(Terms); ok {
		return TokenFrequencies(t)
	}
	return f.AnalyzedTokenFrequencies()
}

// TokenFrequencies makes Bleve's form of t's terms, each term's bytes its own.
func TokenFrequencies(t Terms) index.TokenFrequencies {
	out := make(index.TokenFrequencies)
	_ = t.VisitTerms(func(term []byte, freq int, positions []uint32) error {
		tf := &index.TokenFreq{Term: append([]byte(nil), term...)}
		tf.SetFrequency(freq)
		for _, at := range positions {
			tf.Locations = append(tf.Locations, &index.TokenLocation{Position: int(at)})
		}
		out[string(term)] = tf
		return nil
	})
	return out
}

// posting appends a posting of term in document doc, its document and frequency, and
// returns the term's postings for its positions to follow.
func (b *builder) posting(fb *fieldBuilder, term []byte, doc uint32, freq int) (*termPostings, error) {
	id, ok := fb.terms[string(term)]
	if !ok {
		id = uint32(len(fb.post))
		fb.terms[string(term)] = id
		if len(b.slab)+firstSize > cap(b.slab) {
			b.slab = make([]byte, 0, slabSize)
		}
		at := len(b.slab)
		b.slab = b.slab[:at+firstSize]
		fb.post = append(fb.post, termPostings{buf: b.slab[at : at : at+firstSize]})
	}
	p := &fb.post[id]
	if freq <= 0 {
		return nil, fmt.Errorf("segment: term %q of field %q occurs %d times", term, fb.name, freq)
	}
	p.buf = binary.AppendUvarint(p.buf, uint64(doc-p.last))
	p.buf = binary.AppendUvarint(p.buf, uint64(freq))
	p.last = doc
	p.n++
	return p, nil
}

// postingLocations appends a posting of term in document doc with Bleve's locations.
func (b *builder) postingLocations(fb *fieldBuilder, term string, doc uint32, freq int, locs []*index.TokenLocation) error {
	p, err := b.posting(fb, unsafe.Slice(unsafe.StringData(term), len(term)), doc, freq)
	if err != nil || !fb.positions {
		return err
	}
	if len(locs) != freq {
		return fmt.Errorf("segment: term %q of field %q occurs %d times at %d positions", term, fb.name, freq, len(locs))
	}
	// The positions as they come, if they come in order (they do but in a field
	// given twice); else again, in order.
	at, prev := len(p.buf), 0
	for _, l := range locs {
		if l.Position < prev {
			prev = -1
			break
		}
		p.buf = binary.AppendUvarint(p.buf, uint64(l.Position-prev))
		prev = l.Position
	}
	if prev < 0 {
		p.buf = p.buf[:at]
		b.pos = b.pos[:0]
		for _, l := range locs {
			if l.Position < 0 {
				return fmt.Errorf("segment: term %q of field %q at position %d", term, fb.name, l.Position)
			}
			b.pos = append(b.pos, uint64(l.Position))
		}
		p.buf = appendPositions(p.buf, b.pos)
	}
	return nil
}

// size estimates the bytes of the segment file, a little over.
func (b *builder) size() int {
	n := len(b.ids) + 4*b.docs + 1024
	for _, fb := range b.fields {
		n += 4*b.docs + 16*len(fb.post)
		for i := range fb.post {
			n += len(fb.post[i].buf)
		}
	}
	return n + n/8
}

// write writes the segment to w.
func (b *builder) write(f *fileWriter) error {
	f.writeIDs(b.ids, b.idEnds)
	names := make([]string, len(b.fields))
	for i, fb := range b.fields {
		names[i] = fb.name
	}
	if _, ok := b.byName[idField]; !ok {
		return fmt.Errorf("segment: no %s field", idField)
	}
	var rec []byte
	var terms []string
	for fi, name := range fieldOrder(names) {
		fb := b.byName[name]
		var flags byte
		if fb.positions {
			flags |= flagPositions
		}
		f.addField(name, flags)

		f.begin()
		rec = appendNorms(rec[:0], fb.lengths)
		f.write(rec)
		f.end(sectionNorms, fi)

		terms = terms[:0]
		for t := range fb.terms {
			terms = append(terms, t)
		}
		slices.Sort(terms)
		if err := f.startDict(); err != nil {
			return err
		}
		f.begin()
		w := recordWriter{positions: fb.positions, lengths: fb.lengths}
		var off uint64
		for _, t := range terms {
			p := &fb.post[fb.terms[t]]
			var v uint64
			var err error
			rec, v, err = w.encode(rec[:0], off, p.buf, int(p.n))
			if err != nil {
				return fmt.Errorf("segment: field %q, term %q: %w", name, t, err)
			}
			f.write(rec)
			off += uint64(len(rec))
			// vellum copies the key: the term's bytes are only read.
			if err := f.builder.Insert(unsafe.Slice(unsafe.StringData(t), len(t)), v); err != nil {
				return err
			}
		}
		f.end(sectionPostings, fi)
		if err := f.endDict(fi); err != nil {
			return err
		}
		// The field's postings are written: let them go.
		fb.terms, fb.post = nil, nil
	}
	return f.finish()
}
