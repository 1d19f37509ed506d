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
	whole := make([]bool, len(segs))
	var docs uint64
	for i, s := range segs {
		nums[i] = make([]uint64, s.docs)
		var drop *roaring.Bitmap
		if i < len(drops) {
			drop = drops[i]
		}
		whole[i] = drop == nil || drop.IsEmpty()
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
	m := merger{segs: segs, nums: nums, whole: whole, docs: docs, closeCh: closeCh, w: newFileWriter(bw, docs)}
	defer m.w.release()
	err = m.write()
	if err == nil {
		err = bw.Flush()
	}
	if err := finishFile(f, path, err); err != nil {
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
	whole   []bool // whether the segment's documents are all kept
	docs    uint64
	closeCh chan struct{}
	w       *fileWriter

	lengths []uint32
	rec     []byte
	renum   [chunkPostings]uint32
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
		fst, err := f.terms()
		if err != nil {
			return err
		}
		if fst == nil {
			continue
		}
		it, err := fstIterator(fst)
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
		rw.start()
		for _, s := range srcs {
			if s.done || !bytes.Equal(s.term, term) {
				continue
			}
			if err := m.gather(s, &rw); err != nil {
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
		if len(rw.all) == 0 {
			continue // every document holding it is dropped
		}
		var v uint64
		var err error
		m.rec, v, err = rw.finish(m.rec[:0], off)
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

// gather gives rw the postings of source s's current term, less the dropped ones. The
// full chunks of a long list of a segment whose documents are all kept are copied as
// they are, their documents renumbered; the other postings are given one by one.
func (m *merger) gather(s *source, rw *recordWriter) error {
	seg := m.segs[s.seg]
	pl := &m.pl
	pl.reset(s.f, nil)
	if err := pl.read(s.v, seg.docs); err != nil {
		return err
	}
	nums := m.nums[s.seg]
	if pl.form == formLong && m.whole[s.seg] && s.f.positions == rw.positions {
		return m.copyLong(pl, nums, rw)
	}
	it := pl.iterator(true, false, &m.it)
	for {
		doc, freq, pos, ok, err := it.nextRaw()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		nd := nums[doc]
		if nd == dropped {
			continue
		}
		if !rw.positions {
			pos = nil
		}
		rw.add(uint32(nd), freq, pos)
	}
}

// copyLong gives rw the postings of the long list pl, none of them dropped: its full
// chunks as they are, the others posting by posting.
func (m *merger) copyLong(pl *PostingsList, nums []uint64, rw *recordWriter) error {
	it := pl.iterator(false, false, &m.it)
	es := pl.f.tableEntry()
	freqStart, posStart := 0, 0
	for c := range it.nChunks {
		if err := it.load(c); err != nil {
			return err
		}
		e := pl.table[c*es:]
		freqEnd, posEnd := int(binary.LittleEndian.Uint32(e[4:])), 0
		if pl.f.positions {
			posEnd = int(binary.LittleEndian.Uint32(e[8:]))
		}
		if freqStart > freqEnd || freqEnd > len(pl.freqs) || posStart > posEnd || posEnd > len(pl.pos) {
			return damaged("chunk %d of a long list", c)
		}
		if it.m == chunkPostings {
			for j := range it.m {
				m.renum[j] = uint32(nums[it.docs[j]])
			}
			rw.copyChunk(m.renum[:it.m], pl.freqs[freqStart:freqEnd], pl.pos[posStart:posEnd])
		} else {
			fb := pl.freqs[:freqEnd]
			i, ok := skipImpacts(fb, freqStart)
			if !ok {
				return damaged("chunk %d impacts", c)
			}
			at := posStart
			for j := range it.m {
				var f uint64
				if f, i, ok = uvarintAt(fb, i); !ok || f == 0 || f > 1<<31 {
					return damaged("chunk %d frequencies", c)
				}
				var pos []byte
				if rw.positions {
					end, ok := skipUvarints(pl.pos[:posEnd], at, int(f))
					if !ok {
						return damaged("positions")
					}
					pos, at = pl.pos[at:end], end
				}
				rw.add(uint32(nums[it.docs[j]]), uint32(f), pos)
			}
		}
		freqStart, posStart = freqEnd, posEnd
	}
	return nil
}
