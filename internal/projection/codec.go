package projection

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strings"
	"time"
	"unsafe"

	"github.com/guide/guide/internal/binrec"
	"github.com/guide/guide/internal/events"
)

// The catalog stores a document record in a compact binary form: loading 100k records at
// start-up must take milliseconds, not the hundreds that JSON would. A record ends with a
// checksum of its key and the rest (see seal), so that a damaged record, or one under
// another key, is refused rather than read. Its path and session are its key's (recordKey),
// not repeated in it; its content hash is stored as bytes (appendHash).
const recordVersion = 4

var errRecord = fmt.Errorf("%w: a catalog record does not match its checksum or cannot be read", ErrDamaged)

func encodeDocument(key []byte, d *Document, sum Summary) []byte {
	b := make([]byte, 0, 64+len(d.Title)+len(sum.FirstParagraph))
	b = append(b, recordVersion)
	b = binary.AppendVarint(b, d.Size)
	b = binary.AppendVarint(b, d.Mtime.UnixNano())
	b = appendHash(b, d.Hash)
	b = binrec.AppendString(b, string(d.Status))
	b = binrec.AppendString(b, d.Reason)
	b = binary.AppendUvarint(b, uint64(d.Words))
	b = binrec.AppendString(b, d.Title)
	b = binary.AppendUvarint(b, d.Seq)
	b = binary.AppendUvarint(b, uint64(len(sum.Outline)))
	for _, h := range sum.Outline {
		b = binary.AppendUvarint(b, uint64(h.Level))
		b = binrec.AppendString(b, h.Text)
	}
	b = binrec.AppendString(b, sum.FirstParagraph)
	return binary.BigEndian.AppendUint32(b, recordSum(key, b))
}

// recordSum is the checksum of a record: of its key, then its body.
func recordSum(key, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, body)
}

// Content hashes are 64 lowercase hex digits (events.HashContent): stored as their 32
// bytes, after a tag; any other text, as itself.
const (
	hashText  = 0
	hashBytes = 1
)

// appendHash appends the content hash h to b.
func appendHash(b []byte, h string) []byte {
	var raw [sha256.Size]byte
	if len(h) == 2*sha256.Size && strings.ToLower(h) == h {
		if _, err := hex.Decode(raw[:], []byte(h)); err == nil {
			b = append(b, hashBytes)
			return append(b, raw[:]...)
		}
	}
	b = append(b, hashText)
	return binrec.AppendString(b, h)
}

// readHash reads a content hash appendHash wrote.
func readHash(r *binrec.Reader) string {
	switch r.Uvarint() {
	case hashText:
		return r.String()
	case hashBytes:
		raw := r.Fixed(sha256.Size)
		if r.Err != nil {
			return ""
		}
		return hex.EncodeToString([]byte(raw))
	}
	r.Fail("content hash of an unknown form")
	return ""
}

// recordBody is the record v of key less its checksum, or errRecord when it does not match.
func recordBody(key, v []byte) ([]byte, error) {
	if len(v) < 5 {
		return nil, errRecord
	}
	body := v[:len(v)-4]
	if binary.BigEndian.Uint32(v[len(body):]) != recordSum(key, body) || body[0] != recordVersion {
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

// decodeDocument reads the record v of key, all of it checked, into the document it keeps
// in memory: its strings are slices of one copy of the record's fields before the summary,
// which stays on disk (Summary), and its path and session, of one copy of the key.
func decodeDocument(key, v []byte) (*Document, error) {
	b, err := recordBody(key, v)
	if err != nil {
		return nil, err
	}
	k, err := events.ParseDocKey(string(key))
	if err != nil {
		return nil, errRecord
	}
	// A first pass reads the record where it lies, to check it and to find where its
	// summary starts; only what precedes it is copied.
	view := unsafe.String(unsafe.SliceData(b[1:]), len(b)-1)
	r := binrec.NewReader(view)
	readHead(r)
	head := len(view) - r.Len()
	readSummary(r, false)
	if r.Err != nil || r.Len() != 0 {
		return nil, errRecord
	}
	d := readHead(binrec.NewReader(string(b[1 : 1+head])))
	d.Path, d.Session = k.Path, k.Session
	return d, nil
}

// decodeSummary reads the summary of the record v of key, its strings copied.
func decodeSummary(key, v []byte) (Summary, error) {
	b, err := recordBody(key, v)
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

// readHead reads the fields of a record before its summary; its path and session are
// its key's.
func readHead(r *binrec.Reader) *Document {
	d := &Document{}
	d.Size = r.Varint()
	d.Mtime = time.Unix(0, r.Varint()).UTC()
	d.Hash = readHash(r)
	d.Status = readStatus(r)
	d.Reason = r.String()
	d.Words = int(r.Uvarint())
	d.Title = r.String()
	d.Seq = r.Uvarint()
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
