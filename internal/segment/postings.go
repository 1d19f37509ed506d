package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	api "github.com/blevesearch/scorch_segment_api/v2"
)

// The forms of a postings list (record.go).
const (
	formNone = iota
	formInline
	formShort
	formLong
)

// PostingsList is a term's postings in a segment, less the documents of except.
type PostingsList struct {
	f      *field
	except *roaring.Bitmap
	form   int
	n      int    // postings, deleted ones included
	chunks int    // formLong: the chunks they are cut into
	docs   uint64 // the segment's documents

	doc  uint32 // formInline
	pos1 uint64 // formInline: its position plus one, in a field of positions

	pairs []byte // formShort: from the first posting on

	bm    *roaring.Bitmap // formLong
	table []byte
	freqs []byte
	pos   []byte
}

func (pl *PostingsList) reset(f *field, except *roaring.Bitmap) {
	bm := pl.bm
	*pl = PostingsList{f: f, except: except, bm: bm}
	if except != nil && except.IsEmpty() {
		pl.except = nil
	}
}

// tableEntry is the size of a chunk table's entries.
func (f *field) tableEntry() int {
	if f.positions {
		return 12
	}
	return 8
}

// read decodes the dictionary value v of a segment of docs documents.
func (pl *PostingsList) read(v uint64, docs uint64) error {
	f := pl.f
	pl.docs = docs
	if v&inlineFlag != 0 {
		doc, pos1 := inlined(v)
		if uint64(doc) >= docs || f.positions != (pos1 > 0) {
			return damaged("inline postings %x", v)
		}
		pl.form, pl.n, pl.doc, pl.pos1 = formInline, 1, doc, pos1
		return nil
	}
	if v >= uint64(len(f.postings)) {
		return damaged("postings at %d of %d", v, len(f.postings))
	}
	r := decoder{b: f.postings, off: int(v)}
	n := r.uvarint()
	if r.err != nil || n == 0 || n > docs {
		return damaged("postings count %d", n)
	}
	pl.n = int(n)
	if n <= chunkPostings {
		pl.form, pl.pairs = formShort, f.postings[r.off:]
		return nil
	}
	pl.form = formLong
	chunks64 := r.uvarint()
	if r.err != nil || chunks64 < (n+chunkPostings-1)/chunkPostings || chunks64 > n {
		return damaged("postings of %d in %d chunks", n, chunks64)
	}
	chunks := int(chunks64)
	pl.chunks = chunks
	bmb := r.bytes(r.uvarint())
	es := f.tableEntry()
	pl.table = r.bytes(uint64(chunks * es))
	if r.err != nil {
		return damaged("postings: %v", r.err)
	}
	last := pl.table[(chunks-1)*es:]
	pl.freqs = r.bytes(uint64(binary.LittleEndian.Uint32(last[4:])))
	if f.positions {
		pl.pos = r.bytes(uint64(binary.LittleEndian.Uint32(last[8:])))
	}
	if r.err != nil {
		return damaged("postings: %v", r.err)
	}
	if pl.bm == nil {
		pl.bm = roaring.New()
	}
	if err := fromBuffer(pl.bm, bmb); err != nil {
		return damaged("postings bitmap: %v", err)
	}
	if pl.bm.GetCardinality() != n || uint64(pl.bm.Maximum()) >= docs {
		return damaged("postings bitmap of %d documents for %d postings", pl.bm.GetCardinality(), n)
	}
	if pl.bm.Maximum() != binary.LittleEndian.Uint32(last) {
		return damaged("postings end at %d, their last chunk at %d", pl.bm.Maximum(), binary.LittleEndian.Uint32(last))
	}
	return nil
}

// fromBuffer reads a bitmap in place; roaring panics on some malformed input.
func fromBuffer(bm *roaring.Bitmap, b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	_, err = bm.FromBuffer(b)
	return err
}

// shortDocs decodes a short list's documents into dst.
func (pl *PostingsList) shortDocs(dst []uint32) ([]uint32, error) {
	dst = dst[:0]
	var doc uint64
	i := 0
	for k := range pl.n {
		d, next, ok := uvarintAt(pl.pairs, i)
		if !ok {
			return dst, damaged("short postings")
		}
		if i, ok = skipUvarints(pl.pairs, next, 1); !ok {
			return dst, damaged("short postings")
		}
		if k == 0 {
			doc = d
		} else {
			doc += d
		}
		if doc >= pl.docs || k > 0 && d == 0 {
			return dst, damaged("short postings")
		}
		dst = append(dst, uint32(doc))
	}
	return dst, nil
}

// Count is how many documents hold the term, less the deleted ones.
func (pl *PostingsList) Count() uint64 {
	switch pl.form {
	case formInline:
		if pl.except != nil && pl.except.Contains(pl.doc) {
			return 0
		}
		return 1
	case formShort:
		if pl.except == nil {
			return uint64(pl.n)
		}
		var buf [chunkPostings]uint32
		docs, _ := pl.shortDocs(buf[:0])
		n := uint64(0)
		for _, d := range docs {
			if !pl.except.Contains(d) {
				n++
			}
		}
		return n
	case formLong:
		if pl.except == nil {
			return uint64(pl.n)
		}
		return uint64(pl.n) - pl.bm.AndCardinality(pl.except)
	}
	return 0
}

// orInto adds the list's documents, deleted ones included, to bm.
func (pl *PostingsList) orInto(bm *roaring.Bitmap) error {
	switch pl.form {
	case formInline:
		bm.Add(pl.doc)
	case formShort:
		var buf [chunkPostings]uint32
		docs, err := pl.shortDocs(buf[:0])
		if err != nil {
			return err
		}
		bm.AddMany(docs)
	case formLong:
		bm.Or(pl.bm)
	}
	return nil
}

// Size estimates the memory the list holds.
func (pl *PostingsList) Size() int {
	n := sizePostingsList
	if pl.except != nil {
		n += int(pl.except.GetSizeInBytes())
	}
	return n
}

func (pl *PostingsList) BytesRead() uint64     { return 0 }
func (pl *PostingsList) ResetBytesRead(uint64) {}
func (pl *PostingsList) BytesWritten() uint64  { return 0 }

var (
	sizePostingsList     = int(reflect.TypeFor[PostingsList]().Size())
	sizePostingsIterator = int(reflect.TypeFor[PostingsIterator]().Size())
	sizePosting          = int(reflect.TypeFor[Posting]().Size())
	sizeLocation         = int(reflect.TypeFor[Location]().Size())
)

// Iterator returns an iterator over the list's postings, reading their frequencies and
// norms, and their positions, as asked.
func (pl *PostingsList) Iterator(includeFreq, includeNorm, includeLocations bool, prealloc api.PostingsIterator) api.PostingsIterator {
	it, _ := prealloc.(*PostingsIterator)
	return pl.iterator(includeFreq || includeNorm || includeLocations, includeLocations, it)
}

func (pl *PostingsList) iterator(freqs, locs bool, it *PostingsIterator) *PostingsIterator {
	if it == nil {
		it = &PostingsIterator{}
	}
	locBuf, locIfaces, raw := it.locBuf, it.locIfaces, it.raw
	*it = PostingsIterator{
		pl: pl, freqs: freqs, locs: locs && pl.f != nil && pl.f.positions, except: pl.except,
		chunk: -1, locBuf: locBuf, locIfaces: locIfaces, raw: raw,
	}
	switch pl.form {
	case formNone:
		it.nChunks = 0
	case formInline, formShort:
		it.nChunks = 1
	case formLong:
		it.nChunks = pl.chunks
		it.all = pl.bm.Iterator()
	}
	it.p.norms = nil
	if pl.f != nil {
		it.p.norms = &pl.f.norms
	}
	return it
}

// PostingsIterator reads a postings list in the order of its documents. It reads a chunk
// at a time: its documents (from the list's bitmap, or its short record), and their
// frequencies when asked; positions are read for the postings returned alone.
type PostingsIterator struct {
	pl     *PostingsList
	freqs  bool // read the frequencies (for frequencies, norms or positions)
	locs   bool // read the positions
	except *roaring.Bitmap

	exceptIt   roaring.IntPeekable // over except, at or after the last document asked about
	nextExcept uint64              // the first document of except at or after it

	actual   *roaring.Bitmap     // ReplaceActual's: the documents to return
	actualIt roaring.IntPeekable // over actual
	actualBM *roaring.Bitmap     // ActualBitmap's answer, once made

	all     roaring.IntPeekable // the documents of a long list
	nChunks int
	chunk   int // the chunk read; -1 before the first
	lastDoc uint32
	m, k    int // the chunk's postings, and the next one's place among them
	docs    [chunkPostings]uint32
	fr      [chunkPostings]uint32
	posOff  int    // where posting k's positions begin in posData
	posData []byte // the positions of the list (a long list's, or a short one's)

	p         Posting
	locBuf    []Location
	locIfaces []api.Location
	raw       []byte
}

// load reads chunk c.
func (it *PostingsIterator) load(c int) error {
	pl := it.pl
	it.chunk, it.k = c, 0
	switch pl.form {
	case formInline:
		it.m, it.docs[0], it.fr[0], it.lastDoc = 1, pl.doc, 1, pl.doc
		return nil
	case formShort:
		r := decoder{b: pl.pairs}
		var doc uint64
		for k := range pl.n {
			d, f := r.uvarint(), r.uvarint()
			if k == 0 {
				doc = d
			} else {
				doc += d
			}
			if r.err != nil || f == 0 || f > 1<<31 || k > 0 && d == 0 || doc >= pl.docs {
				return damaged("short postings")
			}
			it.docs[k], it.fr[k] = uint32(doc), uint32(f)
		}
		it.m, it.lastDoc = pl.n, uint32(doc)
		it.posData, it.posOff = pl.pairs, r.off
		return nil
	}
	es := pl.f.tableEntry()
	e := pl.table[c*es:]
	it.lastDoc = binary.LittleEndian.Uint32(e)
	first, freqStart, posStart := uint32(0), 0, 0
	if c > 0 {
		pe := pl.table[(c-1)*es:]
		first = binary.LittleEndian.Uint32(pe) + 1
		freqStart = int(binary.LittleEndian.Uint32(pe[4:]))
		if pl.f.positions {
			posStart = int(binary.LittleEndian.Uint32(pe[8:]))
		}
	}
	// The chunk's documents are the list's after the chunk before's last, up to its own.
	it.m = 0
	it.all.AdvanceIfNeeded(first)
	for it.all.HasNext() && it.all.PeekNext() <= it.lastDoc {
		if it.m == chunkPostings {
			return damaged("chunk %d of more than %d postings", c, chunkPostings)
		}
		it.docs[it.m] = it.all.Next()
		it.m++
	}
	if it.m == 0 || it.docs[it.m-1] != it.lastDoc {
		return damaged("chunk %d does not end at %d", c, it.lastDoc)
	}
	if it.freqs {
		freqEnd := int(binary.LittleEndian.Uint32(e[4:]))
		if freqStart > freqEnd || freqEnd > len(pl.freqs) {
			return damaged("chunk %d frequencies", c)
		}
		b := pl.freqs[:freqEnd]
		i, ok := skipImpacts(b, freqStart)
		for j := range it.m {
			var f uint64
			if f, i, ok = uvarintAt(b, i); !ok || f == 0 || f > 1<<31 {
				return damaged("chunk %d frequencies", c)
			}
			it.fr[j] = uint32(f)
		}
		if !ok {
			return damaged("chunk %d frequencies", c)
		}
	}
	it.posData, it.posOff = pl.pos, posStart
	return nil
}

// ensure makes posting k one to read, loading the next chunk when the chunk is read; it
// reports false when the list is.
func (it *PostingsIterator) ensure() (bool, error) {
	for it.k >= it.m {
		if it.chunk+1 >= it.nChunks {
			it.chunk = it.nChunks
			return false, nil
		}
		if err := it.load(it.chunk + 1); err != nil {
			return false, err
		}
	}
	return true, nil
}

// skip passes posting k over.
func (it *PostingsIterator) skip() error {
	if it.locs && it.pl.form != formInline {
		var ok bool
		if it.posOff, ok = skipUvarints(it.posData, it.posOff, int(it.fr[it.k])); !ok {
			return damaged("positions")
		}
	}
	it.k++
	return nil
}

// take returns posting k, and moves past it.
func (it *PostingsIterator) take() (*Posting, error) {
	p := &it.p
	k := it.k
	p.doc = uint64(it.docs[k])
	p.freq = 0
	if it.freqs {
		p.freq = uint64(it.fr[k])
	}
	p.locs = nil
	if it.locs {
		f := int(it.fr[k])
		if len(it.locBuf) < f {
			n := max(f, 2*len(it.locBuf), 4)
			it.locBuf = make([]Location, n)
			it.locIfaces = make([]api.Location, n)
			for i := range it.locBuf {
				it.locIfaces[i] = &it.locBuf[i]
			}
		}
		if it.pl.form == formInline {
			it.locBuf[0].field, it.locBuf[0].pos = it.pl.f.name, it.pl.pos1-1
		} else {
			var pos uint64
			i := it.posOff
			for j := range f {
				d, next, ok := uvarintAt(it.posData, i)
				if !ok {
					return nil, damaged("positions")
				}
				pos += d
				it.locBuf[j].field, it.locBuf[j].pos = it.pl.f.name, pos
				i = next
			}
			it.posOff = i
		}
		p.locs = it.locIfaces[:f]
	}
	it.k++
	return p, nil
}

// seek moves to the first posting at or after document t (deleted or not), and reports
// whether there is one in the chunk then read.
func (it *PostingsIterator) seek(t uint32) (bool, error) {
	if it.chunk < 0 {
		if it.nChunks == 0 {
			return false, nil
		}
		if err := it.load(0); err != nil {
			return false, err
		}
	}
	if it.chunk >= it.nChunks {
		return false, nil
	}
	if t > it.lastDoc {
		c := it.chunkOf(t, it.chunk+1)
		if c >= it.nChunks {
			it.chunk, it.k, it.m = it.nChunks, 0, 0
			return false, nil
		}
		if err := it.load(c); err != nil {
			return false, err
		}
	}
	for it.k < it.m && it.docs[it.k] < t {
		if err := it.skip(); err != nil {
			return false, err
		}
	}
	return it.k < it.m, nil
}

// chunkOf returns the first chunk from chunk from on whose last document is t or after
// it (nChunks when none is): a long list's, by its chunk table.
func (it *PostingsIterator) chunkOf(t uint32, from int) int {
	if it.pl.form != formLong {
		return it.nChunks
	}
	es := it.pl.f.tableEntry()
	return from + sort.Search(it.nChunks-from, func(i int) bool {
		return binary.LittleEndian.Uint32(it.pl.table[(from+i)*es:]) >= t
	})
}

// Next returns the next posting, nil after the last. The posting is the iterator's own,
// and changes with the next call.
func (it *PostingsIterator) Next() (api.Posting, error) {
	p, err := it.next()
	if p == nil || err != nil {
		return nil, err
	}
	return p, nil
}

func (it *PostingsIterator) next() (*Posting, error) {
	if it.actualIt != nil {
		if !it.actualIt.HasNext() {
			return nil, nil
		}
		d := it.actualIt.Next()
		if !it.freqs {
			it.p.doc, it.p.freq, it.p.locs = uint64(d), 0, nil
			return &it.p, nil
		}
		ok, err := it.seek(d)
		if err != nil {
			return nil, err
		}
		if !ok || it.docs[it.k] != d {
			return nil, damaged("document %d not in its postings", d)
		}
		return it.take()
	}
	for {
		ok, err := it.ensure()
		if !ok || err != nil {
			return nil, err
		}
		if it.except != nil && it.excepted(it.docs[it.k]) {
			if err := it.skip(); err != nil {
				return nil, err
			}
			continue
		}
		return it.take()
	}
}

// excepted reports whether document d, at or after the one asked about before, is one
// of except's: by a cursor on except rather than a search in it for every posting.
func (it *PostingsIterator) excepted(d uint32) bool {
	if uint64(d) < it.nextExcept {
		return false
	}
	if it.exceptIt == nil {
		it.exceptIt = it.except.Iterator()
	}
	it.exceptIt.AdvanceIfNeeded(d)
	if !it.exceptIt.HasNext() {
		it.nextExcept = math.MaxUint64
		return false
	}
	it.nextExcept = uint64(it.exceptIt.PeekNext())
	return it.nextExcept == uint64(d)
}

// Advance returns the first posting at or after document num, nil when there is none.
func (it *PostingsIterator) Advance(num uint64) (api.Posting, error) {
	p, err := it.advance(num)
	if p == nil || err != nil {
		return nil, err
	}
	return p, nil
}

func (it *PostingsIterator) advance(num uint64) (*Posting, error) {
	if num > 1<<32-1 {
		it.chunk, it.k, it.m = it.nChunks, 0, 0
		if it.actualIt != nil {
			it.actualIt = roaring.New().Iterator()
		}
		return nil, nil
	}
	if it.actualIt != nil {
		it.actualIt.AdvanceIfNeeded(uint32(num))
		return it.next()
	}
	if _, err := it.seek(uint32(num)); err != nil {
		return nil, err
	}
	return it.next()
}

// Impacts returns into dst the impacts of the chunk of the list holding document docNum
// (a document of the list, deleted or not), and the document after the chunk's last; ok
// is false when the iterator reads no frequencies or the list holds no such chunk. No
// posting of the chunk scores above the most one of its impacts does (impact.go).
func (it *PostingsIterator) Impacts(docNum uint64, dst []Impact) (out []Impact, end uint64, ok bool) {
	pl := it.pl
	if !it.freqs || docNum > 1<<32-1 || pl.f == nil {
		return dst[:0], 0, false
	}
	d := uint32(docNum)
	switch pl.form {
	case formInline:
		if d > pl.doc {
			return dst[:0], 0, false
		}
		return append(dst[:0], Impact{1, uint64(pl.f.norms.length(pl.doc))}), uint64(pl.doc) + 1, true
	case formShort:
		if it.chunk < 0 {
			if err := it.load(0); err != nil {
				return dst[:0], 0, false
			}
		}
		if d > it.lastDoc || it.chunk != 0 {
			return dst[:0], 0, false
		}
		dst = dst[:0]
		for j := range it.m {
			dst = addImpact(dst, Impact{uint64(it.fr[j]), uint64(pl.f.norms.length(it.docs[j]))})
		}
		return capImpacts(dst), uint64(it.lastDoc) + 1, true
	case formLong:
		c := it.chunkOf(d, 0)
		if c >= it.nChunks {
			return dst[:0], 0, false
		}
		es := pl.f.tableEntry()
		freqStart := 0
		if c > 0 {
			freqStart = int(binary.LittleEndian.Uint32(pl.table[(c-1)*es+4:]))
		}
		out, _, ok := readImpacts(pl.freqs, freqStart, dst)
		if !ok {
			return dst[:0], 0, false
		}
		return out, uint64(binary.LittleEndian.Uint32(pl.table[c*es:])) + 1, true
	}
	return dst[:0], 0, false
}

// ActualBitmap returns the documents the iterator returns, as a bitmap: nil for a list
// of one posting (DocNum1Hit gives it).
func (it *PostingsIterator) ActualBitmap() *roaring.Bitmap {
	if it.actual != nil {
		return it.actual
	}
	if it.actualBM != nil {
		return it.actualBM
	}
	pl := it.pl
	switch pl.form {
	case formShort:
		var buf [chunkPostings]uint32
		docs, err := pl.shortDocs(buf[:0])
		if err != nil {
			return nil
		}
		bm := roaring.New()
		for _, d := range docs {
			if pl.except == nil || !pl.except.Contains(d) {
				bm.Add(d)
			}
		}
		it.actualBM = bm
	case formLong:
		if pl.except == nil || !pl.bm.Intersects(pl.except) {
			it.actualBM = pl.bm
		} else {
			it.actualBM = roaring.AndNot(pl.bm, pl.except)
		}
	}
	return it.actualBM
}

// DocNum1Hit returns the document of a list of one posting not yet read.
func (it *PostingsIterator) DocNum1Hit() (uint64, bool) {
	pl := it.pl
	if pl.form != formInline || it.chunk >= 0 || it.actual != nil || pl.except != nil && pl.except.Contains(pl.doc) {
		return 0, false
	}
	return uint64(pl.doc), true
}

// ReplaceActual makes the iterator return the documents of bm alone, a subset of its own
// (Bleve's conjunctions give it the documents every term holds).
func (it *PostingsIterator) ReplaceActual(bm *roaring.Bitmap) {
	it.actual = bm
	it.actualIt = bm.Iterator()
}

// Size estimates the memory the iterator holds.
func (it *PostingsIterator) Size() int {
	return sizePostingsIterator + len(it.locBuf)*sizeLocation
}

func (it *PostingsIterator) BytesRead() uint64     { return 0 }
func (it *PostingsIterator) ResetBytesRead(uint64) {}
func (it *PostingsIterator) BytesWritten() uint64  { return 0 }

// Posting is a posting a PostingsIterator returns.
type Posting struct {
	doc   uint64
	freq  uint64
	norms *norms
	locs  []api.Location
}

// Number is the posting's document.
func (p *Posting) Number() uint64 { return p.doc }

// Frequency is how many times the term occurs in the document's field.
func (p *Posting) Frequency() uint64 { return p.freq }

// Norm is one over the square root of the field's length in the document, as zap
// reports it.
func (p *Posting) Norm() float64 { return normOf(p.norms.length(uint32(p.doc))) }

// NormUint64 is the field's length in the document.
func (p *Posting) NormUint64() uint64 { return uint64(p.norms.length(uint32(p.doc))) }

// Locations are the term's occurrences in the field, by position.
func (p *Posting) Locations() []api.Location { return p.locs }

// Size estimates the memory the posting holds.
func (p *Posting) Size() int { return sizePosting + len(p.locs)*sizeLocation }

// Location is an occurrence of a term: its position alone (guide's analyzers give no
// offsets, and its fields no array positions).
type Location struct {
	field string
	pos   uint64
}

func (l *Location) Field() string            { return l.field }
func (l *Location) Start() uint64            { return 0 }
func (l *Location) End() uint64              { return 0 }
func (l *Location) Pos() uint64              { return l.pos }
func (l *Location) ArrayPositions() []uint64 { return nil }
func (l *Location) Size() int                { return sizeLocation + len(l.field) }

// nextRaw returns the next posting, deleted or not, with its positions as they are kept
// (a merge copies them as they are); ok is false after the last.
func (it *PostingsIterator) nextRaw() (doc, freq uint32, pos []byte, ok bool, err error) {
	if ok, err = it.ensure(); !ok || err != nil {
		return 0, 0, nil, false, err
	}
	k := it.k
	doc, freq = it.docs[k], it.fr[k]
	if it.pl.f.positions {
		if it.pl.form == formInline {
			it.raw = binary.AppendUvarint(it.raw[:0], it.pl.pos1-1)
			pos = it.raw
		} else {
			end, ok := skipUvarints(it.posData, it.posOff, int(freq))
			if !ok {
				return 0, 0, nil, false, damaged("positions")
			}
			pos, it.posOff = it.posData[it.posOff:end], end
		}
	}
	it.k++
	return doc, freq, pos, true, nil
}
