// Package binrec reads and writes the compact binary records guide keeps on disk — the
// catalog's document records and the indexer's state file: unsigned and signed varints
// (as encoding/binary writes them) and length-prefixed strings.
package binrec

import (
	"encoding/binary"
	"errors"
)

// AppendString appends s with its length before it.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Reader decodes the fields of one record from a string: the strings it returns are
// slices of it, so that loading many records allocates once a record rather than once a
// field. After the first failure every read returns a zero value and Err says what failed.
type Reader struct {
	s   string
	Err error
}

// NewReader reads the fields of s.
func NewReader(s string) *Reader { return &Reader{s: s} }

// Len is how many bytes are left to read.
func (r *Reader) Len() int { return len(r.s) }

// Fail records msg as the reader's error, unless one is already recorded, and reads
// nothing more.
func (r *Reader) Fail(msg string) {
	if r.Err == nil {
		r.Err = errors.New(msg)
	}
	r.s = ""
}

// Uvarint reads an unsigned varint, rejecting what binary.Uvarint rejects.
func (r *Reader) Uvarint() uint64 {
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
	r.Fail("truncated")
	return 0
}

// Varint reads a signed varint.
func (r *Reader) Varint() int64 {
	u := r.Uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// String reads a length-prefixed string.
func (r *Reader) String() string {
	n := r.Uvarint()
	if n > uint64(len(r.s)) {
		r.Fail("truncated")
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

// Fixed reads the next n bytes.
func (r *Reader) Fixed(n int) string {
	if n < 0 || n > len(r.s) {
		r.Fail("truncated")
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}
