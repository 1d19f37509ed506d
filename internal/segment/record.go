package segment

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// A term's postings, as its field's dictionary finds them. The dictionary's value for the
// term is either the postings themselves, when they are one occurrence in one document
// (half of a dictionary's terms are words found once), or where their record begins in
// the field's postings section:
//
//	inline (bit 63 set): bits 0–31 the document, bits 32–62 the occurrence's position
//	plus one in a field of positions (0 in another)
//
//	short record, of at most chunkPostings postings (one chunk):
//	  uvarint n
//	  n × (uvarint document, as the rise from the one before; uvarint frequency)
//	  the positions (in a field of positions): each posting's, in turn
//
//	long record, of more:
//	  uvarint n
//	  uvarint chunks, how many chunks the postings are cut into (each of at most
//	    chunkPostings postings: a merge copies the full chunks of the lists it merges as
//	    they are, so that a chunk of fewer may be followed by more)
//	  uvarint length, and the documents as a roaring bitmap (portable format)
//	  the chunk table, a fixed-size entry per chunk:
//	    uint32 its last document, uint32 where its frequencies end, and in a field of
//	    positions uint32 where its positions end (little-endian, from the start of
//	    the frequencies and of the positions)
//	  the frequencies: each chunk's impacts (impact.go), then its postings' frequencies
//	  the positions (in a field of positions)
//
// A posting's positions are its occurrences' positions, each as its rise from the one
// before (the first from 0), as many as its frequency. Lengths (norms) are not in the
// postings: they are the document's, in the field's norms section.

const inlineFlag = 1 << 63

// inlineValue returns the dictionary value of one occurrence in document doc, at
// position pos in a field of positions, and whether it can be inlined.
func inlineValue(doc uint32, positions bool, pos uint64) (uint64, bool) {
	if !positions {
		return inlineFlag | uint64(doc), true
	}
	if pos >= 1<<31-1 {
		return 0, false
	}
	return inlineFlag | (pos+1)<<32 | uint64(doc), true
}

// inlined decodes an inline value: the document, and the position plus one (0 in a
// field without positions).
func inlined(v uint64) (doc uint32, pos1 uint64) {
	return uint32(v), v >> 32 & (1<<31 - 1)
}

// The postings a segment is built or merged from are, for each term, a list of postings
// in the order of their documents, each as
//
//	uvarint document (the rise from the one before; the first as it is)
//	uvarint frequency
//	in a field of positions, frequency × uvarint position (the rise from the one before)
//
// which recordWriter turns into the term's dictionary value and record.

// recordWriter encodes postings records of one field: a term's postings are given in
// the order of their documents, one by one (add) or a whole chunk of a long record at a
// time (copyChunk, a merge's), and finish writes the term's record.
type recordWriter struct {
	positions bool
	lengths   []uint32 // the field's length in each document of the segment written

	all []uint32 // the documents of the postings given
	// The postings given and not yet in a chunk: documents, frequencies, and positions
	// one posting's after the other's (posEnd: where each one's end).
	docs   []uint32
	freqs  []uint32
	pos    []byte
	posEnd []int

	chunks  int
	front   []Impact
	bm      *roaring.Bitmap
	freqBuf []byte
	posBuf  []byte
	table   []byte
	err     error
}

// start begins a term.
func (w *recordWriter) start() {
	w.all, w.docs, w.freqs, w.pos, w.posEnd = w.all[:0], w.docs[:0], w.freqs[:0], w.pos[:0], w.posEnd[:0]
	w.freqBuf, w.posBuf, w.table = w.freqBuf[:0], w.posBuf[:0], w.table[:0]
	w.chunks, w.err = 0, nil
}

// add gives the next posting: its document, frequency, and positions as they are kept.
func (w *recordWriter) add(doc, freq uint32, pos []byte) {
	if len(w.docs) == chunkPostings {
		w.flush()
	}
	w.all = append(w.all, doc)
	w.docs = append(w.docs, doc)
	w.freqs = append(w.freqs, freq)
	if w.positions {
		w.pos = append(w.pos, pos...)
		w.posEnd = append(w.posEnd, len(w.pos))
	}
}

// flush makes a chunk of the postings given and not yet in one.
func (w *recordWriter) flush() {
	if len(w.docs) == 0 {
		return
	}
	w.front = w.front[:0]
	for k, d := range w.docs {
		w.front = addImpact(w.front, Impact{uint64(w.freqs[k]), uint64(w.lengths[d])})
	}
	w.front = capImpacts(w.front)
	w.freqBuf = appendImpacts(w.freqBuf, w.front)
	for _, f := range w.freqs {
		w.freqBuf = binary.AppendUvarint(w.freqBuf, uint64(f))
	}
	w.posBuf = append(w.posBuf, w.pos...)
	w.endChunk(w.docs[len(w.docs)-1])
	w.docs, w.freqs, w.pos, w.posEnd = w.docs[:0], w.freqs[:0], w.pos[:0], w.posEnd[:0]
}

func (w *recordWriter) endChunk(last uint32) {
	if len(w.freqBuf) > 1<<32-1 || len(w.posBuf) > 1<<32-1 {
		w.err = fmt.Errorf("postings: list too long")
	}
	w.table = binary.LittleEndian.AppendUint32(w.table, last)
	w.table = binary.LittleEndian.AppendUint32(w.table, uint32(len(w.freqBuf)))
	if w.positions {
		w.table = binary.LittleEndian.AppendUint32(w.table, uint32(len(w.posBuf)))
	}
	w.chunks++
}

// copyChunk gives the postings of a chunk of a long record as they are: their documents
// (renumbered), the chunk's frequencies with its impacts, and its positions. The impacts
// are the chunk's still, for the postings and their documents' lengths are the same.
func (w *recordWriter) copyChunk(docs []uint32, freqs, pos []byte) {
	w.flush()
	w.all = append(w.all, docs...)
	w.freqBuf = append(w.freqBuf, freqs...)
	if w.positions {
		w.posBuf = append(w.posBuf, pos...)
	}
	w.endChunk(docs[len(docs)-1])
}

// finish returns the dictionary value of the postings given, appending their record to
// rec when they are not inlined; offset is where the record begins in the field's
// postings section.
func (w *recordWriter) finish(rec []byte, offset uint64) ([]byte, uint64, error) {
	n := len(w.all)
	if n == 0 {
		return rec, 0, fmt.Errorf("postings: none")
	}
	if w.err != nil {
		return rec, 0, w.err
	}
	if w.chunks == 0 && n == 1 && w.freqs[0] == 1 {
		var pos uint64
		if w.positions {
			pos, _, _ = uvarintAt(w.pos, 0)
		}
		if v, ok := inlineValue(w.docs[0], w.positions, pos); ok {
			return rec, v, nil
		}
	}
	if offset >= inlineFlag {
		return rec, 0, fmt.Errorf("postings: section too long")
	}
	value := offset
	rec = binary.AppendUvarint(rec, uint64(n))
	if w.chunks == 0 && n <= chunkPostings {
		prev := uint32(0)
		for k, d := range w.docs {
			rec = binary.AppendUvarint(rec, uint64(d-prev))
			rec = binary.AppendUvarint(rec, uint64(w.freqs[k]))
			prev = d
		}
		rec = append(rec, w.pos...)
		return rec, value, nil
	}
	w.flush()
	if w.err != nil {
		return rec, 0, w.err
	}
	rec = binary.AppendUvarint(rec, uint64(w.chunks))
	if w.bm == nil {
		w.bm = roaring.New()
	}
	w.bm.Clear()
	w.bm.AddMany(w.all)
	w.bm.RunOptimize()
	rec = binary.AppendUvarint(rec, w.bm.GetSerializedSizeInBytes())
	aw := appendWriter{rec}
	if _, err := w.bm.WriteTo(&aw); err != nil {
		return rec, 0, err
	}
	rec = aw.b
	rec = append(rec, w.table...)
	rec = append(rec, w.freqBuf...)
	rec = append(rec, w.posBuf...)
	return rec, value, nil
}

// encode returns the dictionary value of the n postings p, of the built form, appending
// their record to rec when they are not inlined; offset is where the record begins in
// the field's postings section.
func (w *recordWriter) encode(rec []byte, offset uint64, p []byte, n int) ([]byte, uint64, error) {
	if n <= 0 {
		return rec, 0, fmt.Errorf("postings: none")
	}
	w.start()
	var doc uint64
	i := 0
	for k := range n {
		d, next, ok := uvarintAt(p, i)
		if !ok {
			return rec, 0, fmt.Errorf("postings: truncated")
		}
		f, next2, ok := uvarintAt(p, next)
		if !ok || f == 0 || f > 1<<31 {
			return rec, 0, fmt.Errorf("postings: frequency %d", f)
		}
		if k == 0 {
			doc = d
		} else {
			if d == 0 {
				return rec, 0, fmt.Errorf("postings: document %d twice", doc)
			}
			doc += d
		}
		if doc >= uint64(len(w.lengths)) {
			return rec, 0, fmt.Errorf("postings: document %d of %d", doc, len(w.lengths))
		}
		i = next2
		var pos []byte
		if w.positions {
			if i, ok = skipUvarints(p, next2, int(f)); !ok {
				return rec, 0, fmt.Errorf("postings: positions truncated")
			}
			pos = p[next2:i]
		}
		w.add(uint32(doc), uint32(f), pos)
	}
	if i != len(p) {
		return rec, 0, fmt.Errorf("postings: %d bytes left", len(p)-i)
	}
	return w.finish(rec, offset)
}

// appendPositions appends the positions of one posting, as rises from the one before;
// positions out of order (a field given twice in a document) are put in order.
func appendPositions(dst []byte, pos []uint64) []byte {
	if !slices.IsSorted(pos) {
		slices.Sort(pos)
	}
	prev := uint64(0)
	for _, p := range pos {
		dst = binary.AppendUvarint(dst, p-prev)
		prev = p
	}
	return dst
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}
