package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A segment file, as this package writes it:
//
//	magic "GUIDESEG"
//	sections, one after the other, with no gap:
//	  ids                 the documents' identifiers (ids.go)
//	  for each field, in the order of the fields:
//	    norms             each document's length in the field (norms.go)
//	    postings          each term's postings (postings.go, record.go)
//	    dictionary        the terms, a vellum FST to their postings (dict.go)
//	table of contents     the number of documents, the fields, and each section's kind,
//	                      field, offset, length and checksum (this file)
//	footer                where the table is, its checksum, the format's version, and a
//	                      checksum of the footer itself, then the magic again
//
// Every byte but the magics is under a checksum (CRC-32C), checked when the segment is
// opened: a file that is truncated, scribbled on or of another version is refused with an
// error, never served.

// FormatVersion is the version of the file format, written in every file's footer. A
// file of another version is refused when opened (an index holding one is rebuilt).
const FormatVersion = 2

var magic = [8]byte{'G', 'U', 'I', 'D', 'E', 'S', 'E', 'G'}

const footerSize = 8 + 4 + 4 + 4 + 4 + 8

// The kinds of section.
const (
	sectionIDs      byte = 1
	sectionNorms    byte = 2
	sectionPostings byte = 3
	sectionDict     byte = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrDamaged is the error of a segment file that fails a check: truncated, altered, or
// not a segment of this format at all.
var ErrDamaged = errors.New("segment damaged")

func damaged(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDamaged, fmt.Sprintf(format, args...))
}

// span is a section's place in the file and its checksum.
type span struct {
	kind   byte
	field  int // the field's number; 0 for the ids
	offset uint64
	length uint64
	crc    uint32
}

// fieldFlags describe a field.
const (
	flagPositions byte = 1 << iota // each posting keeps its occurrences' positions
)

// toc is the table of contents.
type toc struct {
	docs     uint64
	names    []string
	flags    []byte
	sections []span
}

func (t *toc) encode() []byte {
	var b []byte
	b = binary.AppendUvarint(b, t.docs)
	b = binary.AppendUvarint(b, uint64(len(t.names)))
	for i, n := range t.names {
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
		b = append(b, t.flags[i])
	}
	b = binary.AppendUvarint(b, uint64(len(t.sections)))
	for _, s := range t.sections {
		b = append(b, s.kind)
		b = binary.AppendUvarint(b, uint64(s.field))
		b = binary.AppendUvarint(b, s.offset)
		b = binary.AppendUvarint(b, s.length)
		b = binary.LittleEndian.AppendUint32(b, s.crc)
	}
	return b
}

// decodeTOC reads a table of contents, checking that its sections tile the file from
// the magic to the table, each where a valid file would have it.
func decodeTOC(b []byte, tocOffset uint64) (*toc, error) {
	r := decoder{b: b}
	t := &toc{docs: r.uvarint()}
	if t.docs > maxDocs {
		return nil, damaged("%d documents", t.docs)
	}
	n := r.uvarint()
	if n > uint64(len(b)) {
		return nil, damaged("%d fields", n)
	}
	seen := map[string]bool{}
	for range n {
		name := string(r.bytes(r.uvarint()))
		flags := r.byte()
		if r.err != nil {
			break
		}
		if seen[name] {
			return nil, damaged("field %q twice", name)
		}
		seen[name] = true
		t.names = append(t.names, name)
		t.flags = append(t.flags, flags)
	}
	ns := r.uvarint()
	if ns != 1+3*uint64(len(t.names)) {
		return nil, damaged("%d sections for %d fields", ns, len(t.names))
	}
	at := uint64(len(magic))
	for i := range ns {
		s := span{kind: r.byte(), field: int(r.uvarint()), offset: r.uvarint(), length: r.uvarint(), crc: r.uint32()}
		if r.err != nil {
			break
		}
		want, field := sectionIDs, 0
		if i > 0 {
			want, field = []byte{sectionNorms, sectionPostings, sectionDict}[(i-1)%3], int((i-1)/3)
		}
		if s.kind != want || s.field != field || s.offset != at || s.length > tocOffset-at {
			return nil, damaged("section %d out of place", i)
		}
		at += s.length
		t.sections = append(t.sections, s)
	}
	if r.err != nil {
		return nil, damaged("table of contents: %v", r.err)
	}
	if r.off != len(b) || at != tocOffset {
		return nil, damaged("table of contents does not cover the file")
	}
	return t, nil
}

// footer is the file's last footerSize bytes.
type footer struct {
	tocOffset uint64
	tocLength uint32
	tocCRC    uint32
	version   uint32
}

func (f footer) encode() []byte {
	b := make([]byte, 0, footerSize)
	b = binary.LittleEndian.AppendUint64(b, f.tocOffset)
	b = binary.LittleEndian.AppendUint32(b, f.tocLength)
	b = binary.LittleEndian.AppendUint32(b, f.tocCRC)
	b = binary.LittleEndian.AppendUint32(b, f.version)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return append(b, magic[:]...)
}

func decodeFooter(b []byte, size uint64) (footer, error) {
	if len(b) != footerSize || [8]byte(b[footerSize-8:]) != magic {
		return footer{}, damaged("no footer")
	}
	if crc32.Checksum(b[:20], castagnoli) != binary.LittleEndian.Uint32(b[20:]) {
		return footer{}, damaged("footer checksum")
	}
	f := footer{
		tocOffset: binary.LittleEndian.Uint64(b),
		tocLength: binary.LittleEndian.Uint32(b[8:]),
		tocCRC:    binary.LittleEndian.Uint32(b[12:]),
		version:   binary.LittleEndian.Uint32(b[16:]),
	}
	if f.version != FormatVersion {
		return f, fmt.Errorf("%w: format version %d, this build reads %d", ErrVersion, f.version, FormatVersion)
	}
	if f.tocOffset < uint64(len(magic)) || f.tocOffset+uint64(f.tocLength)+footerSize != size {
		return f, damaged("table of contents out of place")
	}
	return f, nil
}

// ErrVersion is the error of a segment file of another format version.
var ErrVersion = errors.New("segment of another format version")

// maxDocs bounds the documents of a segment: document numbers are 32 bits.
const maxDocs = 1<<32 - 1
