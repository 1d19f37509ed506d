package segment

import (
	"encoding/binary"
	"errors"
)

var errShort = errors.New("truncated")

// decoder reads what a segment wrote, checking every bound: the first read past the end
// or of a malformed number sets err, and every read after it returns zeros.
type decoder struct {
	b   []byte
	off int
	err error
}

func (r *decoder) fail() {
	if r.err == nil {
		r.err = errShort
	}
	r.off = len(r.b)
}

func (r *decoder) uvarint() uint64 {
	if r.off < len(r.b) && r.b[r.off] < 0x80 {
		v := r.b[r.off]
		r.off++
		return uint64(v)
	}
	v, n := binary.Uvarint(r.b[min(r.off, len(r.b)):])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

func (r *decoder) byte() byte {
	if r.off >= len(r.b) {
		r.fail()
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *decoder) uint32() uint32 {
	if len(r.b)-r.off < 4 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *decoder) bytes(n uint64) []byte {
	if n > uint64(len(r.b)-r.off) {
		r.fail()
		return nil
	}
	v := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return v
}

// uvarintAt decodes the number at b[i:], and returns it and the offset after it; ok is
// false when b holds no whole number there.
func uvarintAt(b []byte, i int) (v uint64, next int, ok bool) {
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), i + 1, true
	}
	if i >= len(b) {
		return 0, i, false
	}
	v, n := binary.Uvarint(b[i:])
	if n <= 0 {
		return 0, i, false
	}
	return v, i + n, true
}

// skipUvarints returns the offset after the n numbers at b[i:].
func skipUvarints(b []byte, i, n int) (int, bool) {
	for n > 0 {
		if i >= len(b) {
			return i, false
		}
		if b[i] < 0x80 {
			n--
		}
		i++
	}
	return i, true
}
