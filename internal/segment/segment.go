package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	mmap "github.com/blevesearch/mmap-go"
	api "github.com/blevesearch/scorch_segment_api/v2"
	"github.com/blevesearch/vellum"
)

// Segment is a segment of this format: built in memory (New, Merge's inputs), or a file
// mapped into memory (Open).
type Segment struct {
	data []byte
	path string // "" until persisted
	file *os.File
	mm   mmap.MMap
	docs uint64
	ids  []byte // the identifiers, one after another
	ends []byte // where each ends, uint32 by document
	// the least and the greatest identifier, copied out when the segment is loaded
	idLo, idHi []byte
	names      []string
	// fields by number, and their numbers by name
	fields []*field
	byName map[string]int

	refs   atomic.Int64
	closed sync.Once
}

// field is a field of a segment.
type field struct {
	name      string
	positions bool
	norms     norms
	postings  []byte
	// dict is the terms' FST, loaded the first time they are asked for (terms): a
	// segment's pages stay unread until a search or a merge needs them.
	dict    []byte
	fstOnce sync.Once
	fst     *vellum.FST // nil when the field has no terms
	fstErr  error
}

// terms returns the field's FST of terms, nil when it has none.
func (f *field) terms() (*vellum.FST, error) {
	f.fstOnce.Do(func() {
		if len(f.dict) > 0 {
			if f.fst, f.fstErr = loadFST(f.dict); f.fstErr != nil {
				f.fstErr = fmt.Errorf("%w: field %q dictionary: %v", ErrDamaged, f.name, f.fstErr)
			}
		}
	})
	return f.fst, f.fstErr
}

// Scorch tells a segment in memory from one in a file by the interfaces it implements (a
// segment with a Path is in a file), so each is a type of its own around Segment.
type (
	// inMemory is a segment built by New, which scorch persists.
	inMemory struct{ *Segment }
	// inFile is a segment opened from its file.
	inFile struct{ *Segment }
)

// Persist writes the segment to a file at path, and syncs it.
func (s inMemory) Persist(path string) error { return s.persist(path) }

// Path is the segment's file.
func (s inFile) Path() string { return s.path }

var (
	_ api.Segment                     = (*Segment)(nil)
	_ api.UnpersistedSegment          = inMemory{}
	_ api.PersistedSegment            = inFile{}
	_ api.DiskStatsReporter           = (*Segment)(nil)
	_ api.TermDictionary              = (*Dictionary)(nil)
	_ api.PostingsList                = (*PostingsList)(nil)
	_ api.PostingsIterator            = (*PostingsIterator)(nil)
	_ api.OptimizablePostingsIterator = (*PostingsIterator)(nil)
)

// Open opens the segment file at path, after checking every section against its
// checksum: a damaged file is an error wrapping ErrDamaged (ErrVersion for a file of
// another format version).
func Open(path string) (*Segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	size := fi.Size()
	// The checksums are read through the file, not the mapping, and so is what load
	// checks: a segment's pages are mapped in only as searches and merges read them. The
	// kernel maps the page cache's large folios whole (a megabyte), so that reading a
	// byte of a small segment through the mapping made all of it resident: during a
	// first index of 100k documents, 120–170 MB of the peak resident set were the pages
	// of the segments held back for the final merge, which nothing had searched.
	t, err := check(f, uint64(size))
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("segment %s: %w", path, err)
	}
	mm, err := mmap.Map(f, mmap.RDONLY, 0)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("segment %s: %w", path, err)
	}
	s, err := load([]byte(mm), t, f)
	if err != nil {
		_ = mm.Unmap()
		_ = f.Close()
		return nil, fmt.Errorf("segment %s: %w", path, err)
	}
	s.path, s.file, s.mm = path, f, mm
	return s, nil
}

// checkBuffers are what check reads sections into: a segment is opened after each batch of
// a first index and each merge, and a new buffer each time was 300 MB of garbage at 100k.
var checkBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// check reads the footer and table of contents of a file of size bytes, and checks every
// section's checksum.
func check(r io.ReaderAt, size uint64) (*toc, error) {
	if size < uint64(len(magic))+footerSize {
		return nil, damaged("%d bytes", size)
	}
	var head [8]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, err
	}
	if head != magic {
		return nil, damaged("not a segment file")
	}
	fb := make([]byte, footerSize)
	if _, err := r.ReadAt(fb, int64(size-footerSize)); err != nil {
		return nil, err
	}
	ft, err := decodeFooter(fb, size)
	if err != nil {
		return nil, err
	}
	tb := make([]byte, ft.tocLength)
	if _, err := r.ReadAt(tb, int64(ft.tocOffset)); err != nil {
		return nil, err
	}
	if crc32.Checksum(tb, castagnoli) != ft.tocCRC {
		return nil, damaged("table of contents checksum")
	}
	t, err := decodeTOC(tb, ft.tocOffset)
	if err != nil {
		return nil, err
	}
	bp := checkBuffers.Get().(*[]byte)
	defer checkBuffers.Put(bp)
	buf := *bp
	for _, s := range t.sections {
		crc := uint32(0)
		for at, end := s.offset, s.offset+s.length; at < end; {
			n := min(uint64(len(buf)), end-at)
			if _, err := r.ReadAt(buf[:n], int64(at)); err != nil {
				return nil, err
			}
			crc = crc32.Update(crc, castagnoli, buf[:n])
			at += n
		}
		if crc != s.crc {
			return nil, damaged("checksum of section %d of field %d", s.kind, s.field)
		}
	}
	return t, nil
}

// load reads the segment in data, whose checksums are checked (t: its table of contents).
// What it checks beyond them it reads through r, data's file, not through data (Open).
func load(data []byte, t *toc, r io.ReaderAt) (*Segment, error) {
	s := &Segment{data: data, docs: t.docs, names: t.names, byName: make(map[string]int, len(t.names))}
	s.refs.Store(1)
	sec := func(i int) []byte {
		sp := t.sections[i]
		return data[sp.offset : sp.offset+sp.length]
	}
	ids := sec(0)
	if uint64(len(ids)) < 4*t.docs {
		return nil, damaged("ids")
	}
	s.ids, s.ends = ids[:uint64(len(ids))-4*t.docs], ids[uint64(len(ids))-4*t.docs:]
	if err := s.scanIDs(r, t.sections[0].offset); err != nil {
		return nil, err
	}
	var headBuf [maxNormsHead]byte
	for i, name := range t.names {
		f := &field{name: name, positions: t.flags[i]&flagPositions != 0, postings: sec(2 + 3*i), dict: sec(3 + 3*i)}
		sp := t.sections[1+3*i]
		head := headBuf[:min(sp.length, maxNormsHead)]
		if _, err := r.ReadAt(head, int64(sp.offset)); err != nil {
			return nil, err
		}
		var err error
		if f.norms, err = decodeNorms(head, sp.length, t.docs); err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		if f.norms.width > 0 {
			f.norms.b = sec(1 + 3*i)[1:]
		}
		s.byName[name] = i
		s.fields = append(s.fields, f)
	}
	if _, ok := s.byName[idField]; !ok && t.docs > 0 {
		return nil, damaged("no %s field", idField)
	}
	return s, nil
}

// scanIDs reads the identifiers through r (their section at off): it checks that each
// ends after the one before and within the section, and copies out the least and the
// greatest.
func (s *Segment) scanIDs(r io.ReaderAt, off uint64) error {
	bp := checkBuffers.Get().(*[]byte)
	defer checkBuffers.Put(bp)
	half := len(*bp) / 2
	endsBuf, idsBuf := (*bp)[:half], (*bp)[half:]
	size := uint64(len(s.ids))
	var win []byte   // identifiers read, from winAt
	var winAt uint64 // where win begins in the section
	var prev uint64  // where the identifier before ends
	for first := uint64(0); first < s.docs; {
		n := min(s.docs-first, uint64(half/4))
		eb := endsBuf[:4*n]
		if _, err := r.ReadAt(eb, int64(off+size+4*first)); err != nil {
			return err
		}
		for k := range n {
			end := uint64(binary.LittleEndian.Uint32(eb[4*k:]))
			if end < prev || end > size {
				return damaged("ids")
			}
			start := prev
			prev = end
			if start < winAt || end > winAt+uint64(len(win)) {
				buf := idsBuf
				if end-start > uint64(len(buf)) {
					buf = make([]byte, end-start)
				}
				win, winAt = buf[:min(uint64(len(buf)), size-start)], start
				if _, err := r.ReadAt(win, int64(off+start)); err != nil {
					return err
				}
			}
			id := win[start-winAt : end-winAt]
			if first+k == 0 || bytes.Compare(id, s.idLo) < 0 {
				s.idLo = append(s.idLo[:0], id...)
			}
			if first+k == 0 || bytes.Compare(id, s.idHi) > 0 {
				s.idHi = append(s.idHi[:0], id...)
			}
		}
		first += n
	}
	if prev != size {
		return damaged("ids")
	}
	return nil
}

// loadFST loads a vellum FST, which panics on some malformed input rather than failing:
// checked by its checksum, the input is what was written, but a panic is an error here
// all the same.
func loadFST(b []byte) (f *vellum.FST, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return vellum.Load(b)
}

// build makes an in-memory segment of the documents.
func build(results []index.Document) (*Segment, error) {
	b := newBuilder(len(results))
	for d, doc := range results {
		if err := b.add(d, doc); err != nil {
			return nil, err
		}
	}
	w := appendWriter{make([]byte, 0, b.size())}
	fw := newFileWriter(&w, uint64(len(results)))
	defer fw.release()
	if err := b.write(fw); err != nil {
		return nil, err
	}
	t := fw.toc
	return load(w.b, &t, bytes.NewReader(w.b))
}

// persist writes the segment to a file at path, and syncs it.
func (s *Segment) persist(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(s.data) // in one write: a buffer would copy it
	return finishFile(f, path, err)
}

// finishFile ends the writing of the segment file f at path, written whole unless err:
// synced and closed, or removed when any step failed.
func finishFile(f *os.File, path string, err error) error {
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// Count is how many documents the segment holds, deleted ones included.
func (s *Segment) Count() uint64 { return s.docs }

// Fields names the segment's fields, _id first.
func (s *Segment) Fields() []string { return s.names }

func (s *Segment) id(num uint64) ([]byte, bool) {
	if num >= s.docs {
		return nil, false
	}
	start := uint32(0)
	if num > 0 {
		start = binary.LittleEndian.Uint32(s.ends[4*(num-1):])
	}
	return s.ids[start:binary.LittleEndian.Uint32(s.ends[4*num:])], true
}

// DocID returns document num's identifier.
func (s *Segment) DocID(num uint64) ([]byte, error) {
	id, ok := s.id(num)
	if !ok {
		return nil, fmt.Errorf("segment: document %d of %d", num, s.docs)
	}
	return append([]byte(nil), id...), nil
}

// VisitStoredFields visits document num's stored fields: its identifier, which is all
// this format stores.
func (s *Segment) VisitStoredFields(num uint64, visitor api.StoredFieldValueVisitor) error {
	id, ok := s.id(num)
	if !ok {
		return fmt.Errorf("segment: document %d of %d", num, s.docs)
	}
	visitor(idField, 't', id, nil)
	return nil
}

// DocNumbers returns the numbers of the documents of the identifiers ids.
func (s *Segment) DocNumbers(ids []string) (*roaring.Bitmap, error) {
	bm := roaring.New()
	if len(ids) == 0 {
		return bm, nil
	}
	// Scorch asks every segment of the index for the identifiers of every batch, to mark
	// the documents a batch replaces: while a first index holds its segments unmerged, a
	// hundred segments for each batch. A scan publishes in the order of its walk, so the
	// identifiers of one batch mostly lie outside an older segment's range, which is
	// checked (in memory) before its dictionary is read at all.
	var d *Dictionary
	var pl *PostingsList
	var err error
	for _, id := range ids {
		key := unsafe.Slice(unsafe.StringData(id), len(id))
		if bytes.Compare(key, s.idLo) < 0 || bytes.Compare(key, s.idHi) > 0 {
			continue
		}
		if d == nil {
			if d, err = s.dictionary(idField); err != nil {
				return nil, err
			}
			if d.fst == nil {
				return bm, nil
			}
		}
		pl, err = d.postingsList(key, nil, pl)
		if err != nil {
			return nil, err
		}
		if err := pl.orInto(bm); err != nil {
			return nil, err
		}
	}
	return bm, nil
}

// Size estimates the memory the segment holds (its data, when built in memory).
func (s *Segment) Size() int {
	n := int(reflect.TypeFor[Segment]().Size())
	if s.mm == nil {
		n += len(s.data)
	}
	for _, f := range s.fields {
		n += int(reflect.TypeFor[field]().Size()) + len(f.name)
	}
	return n
}

// AddRef takes a reference to the segment.
func (s *Segment) AddRef() { s.refs.Add(1) }

// DecRef lets a reference go: the last unmaps the file.
func (s *Segment) DecRef() error {
	if s.refs.Add(-1) > 0 {
		return nil
	}
	var err error
	s.closed.Do(func() {
		if s.mm != nil {
			err = s.mm.Unmap()
		}
		if s.file != nil {
			err = errors.Join(err, s.file.Close())
		}
	})
	return err
}

// Close lets the segment's first reference go.
func (s *Segment) Close() error { return s.DecRef() }

// BytesRead, ResetBytesRead and BytesWritten report no statistics.
func (s *Segment) BytesRead() uint64     { return 0 }
func (s *Segment) ResetBytesRead(uint64) {}
func (s *Segment) BytesWritten() uint64  { return 0 }
