package projection

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"
	"unsafe"

	"github.com/guide/guide/internal/binrec"
	"github.com/guide/guide/internal/events"
)

// The catalog stores a document record in a compact binary form: loading 100k records at
// start-up must take milliseconds, not the hundreds that JSON would. A record ends with a
// checksum of the rest (see seal), so that a damaged one is refused rather than read.
const recordVersion = 3

var errRecord = fmt.Errorf("%w: a catalog record does not match its checksum or cannot be read", ErrDamaged)

func encodeDocument(d *Document, sum Summary) []byte {
	b := make([]byte, 0, 64+len(d.Path)+len(d.Title)+len(d.Hash)+len(sum.FirstParagraph))
	b = append(b, recordVersion)
	b = binrec.AppendString(b, d.Path)
	b = binary.AppendVarint(b, d.Size)
	b = binary.AppendVarint(b, d.Mtime.UnixNano())
	b = binrec.AppendString(b, d.Hash)
	b = binrec.AppendString(b, string(d.Status))
	b = binrec.AppendString(b, d.Reason)
	b = binary.AppendUvarint(b, uint64(d.Words))
	b = binrec.AppendString(b, d.Title)
	b = binary.AppendUvarint(b, d.Seq)
	b = binrec.AppendString(b, d.Session)
	b = binary.AppendUvarint(b, uint64(len(sum.Outline)))
	for _, h := range sum.Outline {
		b = binary.AppendUvarint(b, uint64(h.Level))
		b = binrec.AppendString(b, h.Text)
	}
	b = binrec.AppendString(b, sum.FirstParagraph)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// recordBody is a record less its checksum, or errRecord when it does not match.
func recordBody(b []byte) ([]byte, error) {
	body, err := unseal(b)
	if err != nil || len(body) == 0 || body[0] != recordVersion {
		return nil, errRecord
	}
	return body, nil
}

// readStatus returns the status the record names, the common ones without keeping the record.
func readStatus(r *binrec.Reader) events.Status {
	s := events.Status(r.String())
	switch s {
	case events.StatusOK:
		return events.StatusOK
	case events.StatusBinary:
		return events.StatusBinary
	}
	return s
}

// decodeDocument reads a record, all of it checked, into the document it keeps in memory:
// its strings are slices of one copy of the record's fields before the summary, which
// stays on disk (Summary).
func decodeDocument(b []byte) (*Document, error) {
	b, err := recordBody(b)
	if err != nil {
		return nil, err
	}
	// A first pass reads the record where it lies, to check it and to find where its
	// summary starts; only what precedes it is copied.
	view := unsafe.String(unsafe.SliceData(b[1:]), len(b)-1)
	r := binrec.NewReader(view)
	readHead(r)
	head := len(view) - r.Len()
	readSummary(r, false)
	if r.Err != nil {
		return nil, errRecord
	}
	return readHead(binrec.NewReader(string(b[1 : 1+head]))), nil
}

// decodeSummary reads the summary of a record, its strings copied.
func decodeSummary(b []byte) (Summary, error) {
	b, err := recordBody(b)
	if err != nil {
		return Summary{}, err
	}
	r := binrec.NewReader(string(b[1:]))
	readHead(r)
	sum := readSummary(r, true)
	if r.Err != nil {
		return Summary{}, errRecord
	}
	return sum, nil
}

// readHead reads the fields of a record before its summary.
func readHead(r *binrec.Reader) *Document {
	d := &Document{}
	d.Path = r.String()
	d.Size = r.Varint()
	d.Mtime = time.Unix(0, r.Varint()).UTC()
	d.Hash = r.String()
	d.Status = readStatus(r)
	d.Reason = r.String()
	d.Words = int(r.Uvarint())
	d.Title = r.String()
	d.Seq = r.Uvarint()
	d.Session = r.String()
	return d
}

// readSummary reads the summary that ends a record; only reads it past unless keep.
func readSummary(r *binrec.Reader, keep bool) Summary {
	var sum Summary
	if n := r.Uvarint(); r.Err == nil && n > 0 {
		if n > uint64(r.Len()) {
			r.Fail("outline longer than the record")
			return Summary{}
		}
		if keep {
			sum.Outline = make([]Heading, n)
		}
		for i := range int(n) {
			h := Heading{Level: int(r.Uvarint()), Text: r.String()}
			if keep {
				sum.Outline[i] = h
			}
		}
	}
	sum.FirstParagraph = r.String()
	return sum
}
