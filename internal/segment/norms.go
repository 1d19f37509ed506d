package segment

import (
	"encoding/binary"
	"math"
)

// A field's norms section holds each document's length in the field (its number of
// tokens, what BM25 normalises by), once per document rather than once per posting as
// zap keeps it: a document has a few hundred terms in its content and one length. It is
// one byte saying how the lengths are kept, then
//
//	0: one length for every document (a keyword field, the ids): uvarint length
//	1–4: each document's length in that many bytes, little-endian, by document number
//
// A document without the field has length 0 where lengths are kept by document, or the
// common length: no posting refers to it.

// norms reads a field's lengths.
type norms struct {
	width    int // bytes per document; 0: every document has length constant
	constant uint32
	b        []byte
}

func (n *norms) length(doc uint32) uint32 {
	switch n.width {
	case 0:
		return n.constant
	case 1:
		return uint32(n.b[doc])
	case 2:
		return uint32(binary.LittleEndian.Uint16(n.b[2*doc:]))
	case 3:
		i := 3 * int(doc)
		return uint32(n.b[i]) | uint32(n.b[i+1])<<8 | uint32(n.b[i+2])<<16
	}
	return binary.LittleEndian.Uint32(n.b[4*doc:])
}

// decodeNorms reads how a field's norms section of size bytes keeps the lengths of docs
// documents from its head (its first maxNormsHead bytes, or all of it); the caller points
// the lengths kept by document at the section after its first byte.
func decodeNorms(head []byte, size, docs uint64) (norms, error) {
	if size == 0 || len(head) == 0 {
		return norms{}, damaged("empty norms")
	}
	n := norms{width: int(head[0])}
	switch {
	case n.width == 0:
		v, next, ok := uvarintAt(head, 1)
		if !ok || uint64(next) != size || v > math.MaxUint32 {
			return n, damaged("norms")
		}
		n.constant = uint32(v)
	case n.width > 4 || size-1 != docs*uint64(n.width):
		return n, damaged("norms of width %d for %d documents in %d bytes", n.width, docs, size-1)
	}
	return n, nil
}

// maxNormsHead is the most of a norms section decodeNorms reads: its kind, and the
// constant's uvarint.
const maxNormsHead = 1 + binary.MaxVarintLen64

// appendNorms encodes the lengths of a field by document. A length of 0 is a document
// without the field's terms, which no posting refers to: any length will do for it.
func appendNorms(dst []byte, lengths []uint32) []byte {
	var most uint32
	first, same := true, true
	var common uint32
	for _, l := range lengths {
		most = max(most, l)
		if l == 0 {
			continue
		}
		if first {
			common, first = l, false
		} else if l != common {
			same = false
		}
	}
	if same {
		dst = append(dst, 0)
		return binary.AppendUvarint(dst, uint64(common))
	}
	w := 4
	switch {
	case most < 1<<8:
		w = 1
	case most < 1<<16:
		w = 2
	case most < 1<<24:
		w = 3
	}
	dst = append(dst, byte(w))
	for _, l := range lengths {
		switch w {
		case 1:
			dst = append(dst, byte(l))
		case 2:
			dst = binary.LittleEndian.AppendUint16(dst, uint16(l))
		case 3:
			dst = append(dst, byte(l), byte(l>>8), byte(l>>16))
		default:
			dst = binary.LittleEndian.AppendUint32(dst, l)
		}
	}
	return dst
}

// normOf is the norm Bleve's scorers read for a field of length n: one over its square
// root, to the precision zap keeps.
func normOf(n uint32) float64 {
	return float64(float32(1.0 / math.Sqrt(float64(n))))
}
