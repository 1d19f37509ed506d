package projection

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/guide/guide/internal/binrec"
	"github.com/guide/guide/internal/events"
)

// The catalog stores a document record in a compact binary form: loading 100k records at
// start-up must take milliseconds, not the hundreds that JSON would.
const recordVersion = 2

var errRecord = errors.New("corrupt catalog record")

func encodeDocument(d *Document) []byte {
	b := make([]byte, 0, 64+len(d.Path)+len(d.Title)+len(d.Hash))
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
	b = binary.AppendUvarint(b, uint64(len(d.Outline)))
	for _, h := range d.Outline {
		b = binary.AppendUvarint(b, uint64(h.Level))
		b = binrec.AppendString(b, h.Text)
	}
	b = binrec.AppendString(b, d.FirstParagraph)
	return b
}

// status returns the status the record names, the common ones without keeping the record.
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

func decodeDocument(b []byte) (*Document, error) {
	if len(b) == 0 || b[0] != recordVersion {
		return nil, errRecord
	}
	r := binrec.NewReader(string(b[1:]))
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
	if n := r.Uvarint(); r.Err == nil && n > 0 {
		if n > uint64(r.Len()) {
			return nil, errRecord
		}
		d.Outline = make([]Heading, n)
		for i := range d.Outline {
			d.Outline[i] = Heading{Level: int(r.Uvarint()), Text: r.String()}
		}
	}
	d.FirstParagraph = r.String()
	if r.Err != nil {
		return nil, errRecord
	}
	return d, nil
}
