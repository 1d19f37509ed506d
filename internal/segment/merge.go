package segment

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/RoaringBitmap/roaring/v2"
	api "github.com/blevesearch/scorch_segment_api/v2"
	"github.com/blevesearch/vellum"
)

// dropped is the new number of a document a merge drops.
const dropped = math.MaxUint64

// merge writes the documents of in, less those of drops, to a new segment file at path.
// Every term's postings are read from each segment holding it, in the order of the
// segments, renumbered, and written again as built ones are, so that the chunks and
// their impacts are those of the merged list.
func merge(in []api.Segment, drops []*roaring.Bitmap, path string, closeCh chan struct{}, sr api.StatsReporter) ([][]uint64, uint64, error) {
	segs := make([]*Segment, len(in))
	for i, s := range in {
		switch g := s.(type) {
		case *Segment:
			segs[i] = g
		case inMemory:
			segs[i] = g.Segment
		case inFile:
			segs[i] = g.Segment
		default:
			return nil, 0, fmt.Errorf("segment: cannot merge a segment of type %T", s)
		}
	}
	nums := make([][]uint64, len(segs))
	var docs uint64
	for i, s := range segs {
		nums[i] = make([]uint64, s.docs)
		var drop *roaring.Bitmap
		if i < len(drops) {
			drop = drops[i]
		}
		for d := range s.docs {
			if drop != nil && drop.Contains(uint32(d)) {
				nums[i][d] = dropped
				continue
			}
			nums[i][d] = docs
			docs++
		}
	}
	if docs > maxDocs {
		return nil, 0, fmt.Errorf("segment: a merge of %d documents", docs)
	}

	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	m := merger{segs: segs, nums: nums, docs: docs, closeCh: closeCh, w: newFileWriter(bw, docs)}
	defer m.w.release()
	if err := finishFile(f, bw, path, m.write()); err != nil {
		return nil, 0, err
	}
	if sr != nil {
		sr.ReportBytesWritten(m.w.n)
	}
	return nums, m.w.n, nil
}

type merger struct {
	segs    []*Segment
	nums    [][]uint64
	docs    uint64
	closeCh chan struct{}
	w       *fileWriter

	lengths []uint32
	built   []byte // a term's merged postings, in the form recordWriter reads
	rec     []byte
	posBuf  []byte
	it      PostingsIterator
	pl      PostingsList
}

func (m *merger) closed() bool {
	select {
	case <-m.closeCh:
		return true
	default:
		return false
	}
}

func (m *merger) write() error {
	// The identifiers.
	w := m.w
	w.begin()
	ends := make([]byte, 0, 4*m.docs)
	var at uint64
	for i, s := range m.segs {
		for d := range s.docs {
			if m.nums[i][d] == dropped {
				continue
			}
			id, _ := s.id(d)
			w.write(id)
			at += uint64(len(id))
			if at > 1<<32-1 {
				return fmt.Errorf("segment: identifiers too long")
			}
			ends = binary.LittleEndian.AppendUint32(ends, uint32(at))
		}
	}
	w.write(ends)
	w.end(sectionIDs, 0)

	var names []string
	seen := map[string]bool{}
	for _, s := range m.segs {
		for _, n := range s.names {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		names = []string{idField}
	}
	m.lengths = make([]uint32, m.docs)
	for fi, name := range fieldOrder(names) {
		if m.closed() {
			return api.ErrClosed
		}
		if err := m.field(fi, name); err != nil {
			return err
		}
	}
	return w.finish()
}

// source is a segment's field, in a merge.
type source struct {
	seg  int
	f    *field
	it   *vellum.FSTIterator
	term []byte
	v    uint64
	done bool
}

func (m *merger) field(fi int, name string) error {
	w := m.w
	positions := true
	var srcs []*source
	clear(m.lengths)
	for i, s := range m.segs {
		j, ok := s.byName[name]
		if !ok {
			continue
		}
		f := s.fields[j]
		positions = positions && f.positions
		for d := range s.docs {
			if n := m.nums[i][d]; n != dropped {
				m.lengths[n] = f.norms.length(uint32(d))
			}
		}
		if f.fst == nil {
			continue
		}
		it, err := fstIterator(f.fst)
		if errors.Is(err, vellum.ErrIteratorDone) {
			continue
		}
		if err != nil {
			return err
		}
		src := &source{seg: i, f: f, it: it}
		if src.term, src.v, err = fstCurrent(it); err != nil {
			return err
		}
		srcs = append(srcs, src)
	}
	var flags byte
	if positions {
		flags |= flagPositions
	}
	w.addField(name, flags)
	w.begin()
	m.rec = appendNorms(m.rec[:0], m.lengths)
	w.write(m.rec)
	w.end(sectionNorms, fi)

	if err := w.startDict(); err != nil {
		return err
	}
	w.begin()
	rw := recordWriter{positions: positions, lengths: m.lengths}
	var off uint64
	var term []byte
	for terms := 0; ; terms++ {
		// The least term of the sources, and the sources holding it.
		term = term[:0]
		first := true
		for _, s := range srcs {
			if !s.done && (first || bytes.Compare(s.term, term) < 0) {
				term, first = append(term[:0], s.term...), false
			}
		}
		if first {
			break
		}
		if terms%1024 == 0 && m.closed() {
			return api.ErrClosed
		}
		m.built = m.built[:0]
		n, last := 0, uint64(0)
		for _, s := range srcs {
			if s.done || !bytes.Equal(s.term, term) {
				continue
			}
			var err error
			if n, last, err = m.gather(s, positions, n, last); err != nil {
				return fmt.Errorf("segment: merging field %q, term %q: %w", name, term, err)
			}
			if err := fstNext(s.it); err != nil {
				if !errors.Is(err, vellum.ErrIteratorDone) {
					return err
				}
				s.done = true
			} else if s.term, s.v, err = fstCurrent(s.it); err != nil {
				return err
			}
		}
		if n == 0 {
			continue // every document holding it is dropped
		}
		var v uint64
		var err error
		m.rec, v, err = rw.encode(m.rec[:0], off, m.built, n)
		if err != nil {
			return fmt.Errorf("segment: merging field %q, term %q: %w", name, term, err)
		}
		w.write(m.rec)
		off += uint64(len(m.rec))
		if err := w.builder.Insert(term, v); err != nil {
			return err
		}
	}
	w.end(sectionPostings, fi)
	return w.endDict(fi)
}

// gather appends the postings of source s's current term, less the dropped ones, to
// m.built; n postings are there already, the last of document last.
func (m *merger) gather(s *source, positions bool, n int, last uint64) (int, uint64, error) {
	seg := m.segs[s.seg]
	pl := &m.pl
	pl.reset(s.f, nil)
	if err := pl.read(s.v, seg.docs); err != nil {
		return n, last, err
	}
	it := pl.iterator(true, false, &m.it)
	nums := m.nums[s.seg]
	for {
		doc, freq, pos, ok, err := it.nextRaw()
		if err != nil {
			return n, last, err
		}
		if !ok {
			return n, last, nil
		}
		nd := nums[doc]
		if nd == dropped {
			continue
		}
		if n == 0 {
			m.built = binary.AppendUvarint(m.built, nd)
		} else {
			m.built = binary.AppendUvarint(m.built, nd-last)
		}
		m.built = binary.AppendUvarint(m.built, uint64(freq))
		if positions {
			m.built = append(m.built, pos...)
		}
		n, last = n+1, nd
	}
}
