package segment

import (
	"encoding/binary"
	"slices"
)

// Impacts. Postings lists are cut into chunks of chunkPostings postings, and each chunk
// of a long list begins with the pairs of frequency and length (norm) that no other
// posting of the chunk dominates: none has a frequency as high or higher with a length
// as short or shorter. A score that rises with the frequency and falls with the length
// (BM25's, TF-IDF's) is then bounded, over the whole chunk, by the most one of its pairs
// scores, so that a searcher keeping the best documents passes over every chunk whose
// bound cannot beat the worst it keeps, without reading its postings ("block-max", the
// pairs "competitive impacts" in Lucene's words).

// chunkPostings is how many postings a chunk holds at most: a list's last chunk holds
// fewer, and so may one a merge ended before a chunk it copied (record.go).
const chunkPostings = 32

// maxImpacts bounds the pairs a chunk keeps: beyond it, the two of lowest frequency give
// way to one with the higher frequency and the shorter length of the two, which
// dominates both, so that the pairs still bound every posting.
const maxImpacts = 16

// Impact is a frequency and a field length (the norm zap's postings report as
// NormUint64), a posting's or one that bounds some.
type Impact struct {
	Freq, Norm uint64
}

// addImpact adds the pair p to front, the frontier of the pairs added before it by
// rising frequency (and so rising length), and returns it: p is left out when a pair of
// front dominates it, and the pairs it dominates give way to it. A chunk's impacts are its
// postings' pairs added one by one, the frontier cut to maxImpacts pairs by capImpacts.
func addImpact(front []Impact, p Impact) []Impact {
	// Pairs of a lower frequency come first: the first of a frequency as high or
	// higher is the shortest of them, and dominates p if it is as short.
	hi := 0
	for hi < len(front) && front[hi].Freq < p.Freq {
		hi++
	}
	if hi < len(front) && front[hi].Norm <= p.Norm {
		return front
	}
	// p dominates the pairs before hi as long or longer (the last ones), and a pair of
	// its frequency (longer, or it would have dominated p).
	lo := hi
	for lo > 0 && front[lo-1].Norm >= p.Norm {
		lo--
	}
	if hi < len(front) && front[hi].Freq == p.Freq {
		hi++
	}
	switch {
	case lo == hi:
		front = slices.Insert(front, lo, p)
	default:
		front[lo] = p
		front = slices.Delete(front, lo+1, hi)
	}
	return front
}

// capImpacts cuts a frontier to maxImpacts pairs: the two of lowest frequency give way
// to one of the higher frequency and the shorter length, which dominates both.
func capImpacts(front []Impact) []Impact {
	for len(front) > maxImpacts {
		front[1].Norm = front[0].Norm
		front = slices.Delete(front, 0, 1)
	}
	return front
}

// appendImpacts encodes pairs of rising frequency and length: how many, then each
// pair's frequency and length as its rise from the pair before.
func appendImpacts(dst []byte, ps []Impact) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
	var f, n uint64
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, p.Freq-f)
		dst = binary.AppendUvarint(dst, p.Norm-n)
		f, n = p.Freq, p.Norm
	}
	return dst
}

// readImpacts decodes the pairs at b[i:] into dst, and returns them and the offset after
// them.
func readImpacts(b []byte, i int, dst []Impact) ([]Impact, int, bool) {
	dst = dst[:0]
	k, i, ok := uvarintAt(b, i)
	if !ok || k > maxImpacts {
		return dst, i, false
	}
	var f, n uint64
	for range k {
		var df, dn uint64
		if df, i, ok = uvarintAt(b, i); !ok {
			return dst, i, false
		}
		if dn, i, ok = uvarintAt(b, i); !ok {
			return dst, i, false
		}
		f, n = f+df, n+dn
		dst = append(dst, Impact{f, n})
	}
	return dst, i, true
}

// skipImpacts returns the offset after the pairs at b[i:].
func skipImpacts(b []byte, i int) (int, bool) {
	k, i, ok := uvarintAt(b, i)
	if !ok || k > maxImpacts {
		return i, false
	}
	return skipUvarints(b, i, 2*int(k))
}
