package projection

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/guide/guide/internal/events"
)

// The catalog stores a document record in a compact binary form: loading 100k records at
// start-up must take milliseconds, not the hundreds that JSON would.
const recordVersion = 2

var errRecord = errors.New("corrupt catalog record")

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func encodeDocument(d *Document) []byte {
	b := make([]byte, 0, 64+len(d.Path)+len(d.Title)+len(d.Hash))
	b = append(b, recordVersion)
	b = appendString(b, d.Path)
	b = binary.AppendVarint(b, d.Size)
	b = binary.AppendVarint(b, d.Mtime.UnixNano())
	b = appendString(b, d.Hash)
	b = appendString(b, string(d.Status))
	b = appendString(b, d.Reason)
	b = binary.AppendUvarint(b, uint64(d.Words))
	b = appendString(b, d.Title)
	b = binary.AppendUvarint(b, d.Seq)
	b = appendString(b, d.Session)
	b = binary.AppendUvarint(b, uint64(len(d.Outline)))
	for _, h := range d.Outline {
		b = binary.AppendUvarint(b, uint64(h.Level))
		b = appendString(b, h.Text)
	}
	b = appendString(b, d.FirstParagraph)
	return b
}

// reader decodes a record from one string: a record's strings are slices of it, so that
// loading 100k records at open allocates once a record rather than once a field.
type reader struct {
	s   string
	err error
}

func (r *reader) uvarint() uint64 {
	var v uint64
	for i := 0; i < len(r.s) && i < binary.MaxVarintLen64; i++ {
		c := r.s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflows 64 bits
			}
			r.s = r.s[i+1:]
			return v | uint64(c)<<(7*i)
		}
		v |= uint64(c&0x7f) << (7 * i)
	}
	r.err = errRecord
	return 0
}

func (r *reader) varint() int64 {
	u := r.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *reader) string() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.s)) {
		r.err = errRecord
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

// status returns the status the record names, the common ones without keeping the record.
func (r *reader) status() events.Status {
	s := events.Status(r.string())
	switch s {
	case events.StatusOK:
		return events.StatusOK
	case events.StatusBinary:
		return events.StatusBinary
	}
	return s
}

func decodeDocument(b []byte) (*Document, error) {
	if len(b) == 0 || b[0] != recordVersion {
		return nil, errRecord
	}
	r := &reader{s: string(b[1:])}
	d := &Document{}
	d.Path = r.string()
	d.Size = r.varint()
	d.Mtime = time.Unix(0, r.varint()).UTC()
	d.Hash = r.string()
	d.Status = r.status()
	d.Reason = r.string()
	d.Words = int(r.uvarint())
	d.Title = r.string()
	d.Seq = r.uvarint()
	d.Session = r.string()
	if n := r.uvarint(); r.err == nil && n > 0 {
		if n > uint64(len(r.s)) {
			return nil, errRecord
		}
		d.Outline = make([]Heading, n)
		for i := range d.Outline {
			d.Outline[i] = Heading{Level: int(r.uvarint()), Text: r.string()}
		}
	}
	d.FirstParagraph = r.string()
	if r.err != nil {
		return nil, r.err
	}
	return d, nil
}
