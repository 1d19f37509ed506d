package segment

import "encoding/binary"

// Impacts. Postings lists are cut into chunks of chunkPostings postings, and each chunk
// of a long list begins with the pairs of frequency and length (norm) that no other
// posting of the chunk dominates: none has a frequency as high or higher with a length
// as short or shorter. A score that rises with the frequency and falls with the length
// (BM25's, TF-IDF's) is then bounded, over the whole chunk, by the most one of its pairs
// scores, so that a searcher keeping the best documents passes over every chunk whose
// bound cannot beat the worst it keeps, without reading its postings ("block-max", the
// pairs "competitive impacts" in Lucene's words).

// chunkPostings is how many postings a chunk holds (the last of a list, fewer).
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

// frontier returns into dst the pairs of ps that no other dominates, by rising frequency
// (and so rising length), at most maxImpacts of them; ps is reordered.
func frontier(ps []Impact, dst []Impact) []Impact {
	// By falling frequency, and of equal frequencies the shortest first: a pair is on
	// the frontier when it is shorter than every pair before it.
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && (ps[j].Freq > ps[j-1].Freq || ps[j].Freq == ps[j-1].Freq && ps[j].Norm < ps[j-1].Norm); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	dst = dst[:0]
	for i, p := range ps {
		if i == 0 || p.Norm < dst[len(dst)-1].Norm {
			dst = append(dst, p)
		}
	}
	for i, j := 0, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	for len(dst) > maxImpacts {
		dst[1].Norm = dst[0].Norm
		dst = append(dst[:0], dst[1:]...)
	}
	return dst
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
