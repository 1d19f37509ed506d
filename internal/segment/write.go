package segment

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/blevesearch/vellum"
)

// fileWriter writes a segment file: the magic, then sections in turn, each under its
// checksum, then the table of contents and the footer.
type fileWriter struct {
	w     io.Writer
	n     uint64 // bytes written
	crc   uint32 // of the section begun
	start uint64 // where it begins
	toc   toc
	err   error

	*dictBuilder // a field's dictionary, built before it is written
}

func newFileWriter(w io.Writer, docs uint64) *fileWriter {
	f := &fileWriter{w: w, toc: toc{docs: docs}}
	if d, ok := dictBuilders.Get().(*dictBuilder); ok {
		f.dictBuilder = d
	} else {
		f.dictBuilder = &dictBuilder{}
	}
	f.write(magic[:])
	return f
}

// dictBuilder builds a field's dictionary: a vellum builder keeps the nodes it has made
// for the next dictionary, and the builders are kept for the next segment.
//
// A dictionary shares no suffixes: its builder's registry of the nodes it has compiled,
// which finds a suffix already written, has one cell, which finds a node only when it
// repeats the one before. With vellum's default registry, looking suffixes up was a third
// of the time of building a segment from a batch and half of a merge's, and three quarters
// of their allocations (cache misses into 20,000 cells, and the nodes they hold, which the
// builder cannot reuse); the postings outweigh the dictionaries, so a first index of 100k
// documents is 1.1% larger for it (TestDictionariesShareNoSuffixes, BenchmarkNew,
// BenchmarkMerge; docs/design.md, "The search index").
type dictBuilder struct {
	dict    bytes.Buffer
	builder *vellum.Builder
}

// dictOptions builds a dictionary that shares no suffixes (dictBuilder).
var dictOptions = &vellum.BuilderOpts{Encoder: 1, RegistryTableSize: 1, RegistryMRUSize: 1}

var dictBuilders sync.Pool

// release hands the writer's dictionary builder over to the next.
func (f *fileWriter) release() {
	if f.dictBuilder != nil && f.dict.Cap() <= 64<<20 {
		f.dict.Reset()
		dictBuilders.Put(f.dictBuilder)
	}
	f.dictBuilder = nil
}

func (f *fileWriter) write(p []byte) {
	if f.err != nil {
		return
	}
	_, f.err = f.w.Write(p)
	f.n += uint64(len(p))
	f.crc = crc32.Update(f.crc, castagnoli, p)
}

func (f *fileWriter) begin() {
	f.start, f.crc = f.n, 0
}

func (f *fileWriter) end(kind byte, field int) {
	f.toc.sections = append(f.toc.sections, span{kind: kind, field: field, offset: f.start, length: f.n - f.start, crc: f.crc})
}

// addField names the next field and says how it is kept.
func (f *fileWriter) addField(name string, flags byte) {
	f.toc.names = append(f.toc.names, name)
	f.toc.flags = append(f.toc.flags, flags)
}

// startDict begins a field's dictionary; its terms are inserted in order, then endDict
// writes it as the field's section.
func (f *fileWriter) startDict() error {
	f.dict.Reset()
	if f.builder == nil {
		b, err := vellum.New(&f.dict, dictOptions)
		if err != nil {
			return err
		}
		f.builder = b
		return nil
	}
	return f.builder.Reset(&f.dict)
}

func (f *fileWriter) endDict(field int) error {
	if err := f.builder.Close(); err != nil {
		return err
	}
	f.begin()
	f.write(f.dict.Bytes())
	f.end(sectionDict, field)
	return f.err
}

// writeIDs writes the ids section: the identifiers, one after the other, then where each
// ends (uint32, little-endian).
func (f *fileWriter) writeIDs(ids []byte, ends []uint32) {
	f.begin()
	f.write(ids)
	b := make([]byte, 0, 4*len(ends))
	for _, e := range ends {
		b = binary.LittleEndian.AppendUint32(b, e)
	}
	f.write(b)
	f.end(sectionIDs, 0)
}

// finish writes the table of contents and the footer.
func (f *fileWriter) finish() error {
	t := f.toc.encode()
	at := f.n
	f.write(t)
	f.write(footer{tocOffset: at, tocLength: uint32(len(t)), tocCRC: crc32.Checksum(t, castagnoli), version: FormatVersion}.encode())
	return f.err
}

// fieldOrder returns the fields' names in the order a segment keeps them: _id first,
// then by name (as zap orders them, so that Fields reports the same).
func fieldOrder(names []string) []string {
	out := slices.Clone(names)
	slices.SortFunc(out, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == idField:
			return -1
		case b == idField:
			return 1
		case a < b:
			return -1
		}
		return 1
	})
	return out
}

const idField = "_id"
