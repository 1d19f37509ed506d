package zap

import (
	"encoding/binary"
)

// guide: impacts. A chunk of a postings list's frequencies and norms (in chunk mode
// ImpactChunkMode) begins with the pairs of frequency and norm that no other posting of
// the chunk dominates — no other has a frequency as high or higher with a norm as low or
// lower — so that a searcher can bound what any posting of the chunk scores, for a score
// that grows with the frequency and falls with the norm (BM25's and TF-IDF's do), without
// reading the chunk's postings: the most a chunk can score is the most one of its pairs
// does. Search engines call this block-max, and Lucene these pairs competitive impacts.
// Chunks hold about impactChunkPostings postings, so that a chunk passed over is a small
// part of a list.

// ImpactChunkMode cuts postings lists into chunks of about impactChunkPostings postings,
// each headed by its impacts.
const ImpactChunkMode uint32 = 1027

const impactChunkPostings = 32

// maxImpacts bounds the pairs a chunk keeps: beyond it, the two of lowest frequency give
// way to one with the higher frequency and the lower norm of the two, which dominates
// both, so that the pairs still bound every posting.
const maxImpacts = 16

// Impact is a posting's frequency and norm, as the chunk it heads stores them.
type Impact struct {
	Freq, Norm uint64
}

// impactsOf reports whether the frequency and norm chunks of a segment of chunkMode begin
// with their impacts.
func impactsOf(chunkMode uint32) bool { return chunkMode == ImpactChunkMode }

// addImpact adds a posting's frequency and norm to front, the pairs of its chunk so far,
// ordered by frequency (and so by norm, both rising), and returns it. It allocates only
// to grow front.
func addImpact(front []Impact, freq, norm uint64) []Impact {
	// The first pair of a frequency as high or higher: of those, the one of lowest norm.
	i := 0
	for i < len(front) && front[i].Freq < freq {
		i++
	}
	if i < len(front) && front[i].Norm <= norm {
		return front // dominated
	}
	// The pairs before i with a norm as high or higher are dominated by this one, and a
	// pair of the same frequency (its norm is higher) too: front[j:k] gives way to it.
	j := i
	for j > 0 && front[j-1].Norm >= norm {
		j--
	}
	k := i
	if k < len(front) && front[k].Freq == freq {
		k++
	}
	switch k - j {
	case 0:
		front = append(front, Impact{})
		copy(front[j+1:], front[j:])
	case 1:
	default:
		front = append(front[:j+1], front[k:]...)
	}
	front[j] = Impact{freq, norm}
	if len(front) > maxImpacts {
		front[1].Norm = front[0].Norm
		front = append(front[:0], front[1:]...)
	}
	return front
}

// appendImpacts encodes front: how many pairs, then each pair's frequency and norm.
func appendImpacts(dst []byte, front []Impact) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(front)))
	for _, p := range front {
		dst = binary.AppendUvarint(dst, p.Freq)
		dst = binary.AppendUvarint(dst, p.Norm)
	}
	return dst
}

// readImpacts decodes the impacts heading buf into dst, and returns them and their length
// in bytes.
func readImpacts(buf []byte, dst []Impact) ([]Impact, int) {
	dst = dst[:0]
	n, read := binary.Uvarint(buf)
	if read <= 0 {
		return dst, 0
	}
	at := read
	for range n {
		f, r1 := binary.Uvarint(buf[at:])
		if r1 <= 0 {
			return dst[:0], 0
		}
		nm, r2 := binary.Uvarint(buf[at+r1:])
		if r2 <= 0 {
			return dst[:0], 0
		}
		at += r1 + r2
		dst = append(dst, Impact{f, nm})
	}
	return dst, at
}

// Impacts returns into dst the impacts of the chunk of the list holding document number
// docNum, and the first document number after that chunk; ok is false when the list's
// segment stores no impacts (or the iterator reads no frequencies), and then neither
// says anything. A list of one posting stored in its dictionary is one chunk of one pair.
func (i *PostingsIterator) Impacts(docNum uint64, dst []Impact) (out []Impact, end uint64, ok bool) {
	if i.normBits1Hit != 0 {
		return append(dst[:0], Impact{1, i.normBits1Hit}), DocNum1HitFinished, true
	}
	p := i.postings
	if p == nil || !p.impacts || !i.includeFreqNorm || p.chunkSize == 0 {
		return dst[:0], 0, false
	}
	d := i.freqNormReader
	chunk := docNum / p.chunkSize
	if d == nil || chunk >= uint64(len(d.chunkOffsets)) || d.fr != nil && d.fr.processor != nil {
		return dst[:0], 0, false
	}
	s, e := readChunkBoundary(int(chunk), d.chunkOffsets)
	if s == e {
		// An empty chunk: no posting of the list lies in it.
		return dst[:0], (chunk + 1) * p.chunkSize, true
	}
	out, _ = readImpacts(d.data[d.dataStartOffset+s:d.dataStartOffset+e], dst)
	return out, (chunk + 1) * p.chunkSize, true
}
