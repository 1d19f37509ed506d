package segment

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"runtime/debug"
	"testing"
)

// reseal recomputes a file's checksums, so that its damage gets past them.
func reseal(b []byte) []byte {
	if len(b) < footerSize+8 {
		return b
	}
	f := b[len(b)-footerSize:]
	off := binary.LittleEndian.Uint64(f)
	l := binary.LittleEndian.Uint32(f[8:])
	if off+uint64(l) > uint64(len(b)-footerSize) {
		return b
	}
	t, err := decodeTOC(b[off:off+uint64(l)], off)
	if err != nil {
		return b
	}
	for i := range t.sections {
		s := &t.sections[i]
		s.crc = crc32.Checksum(b[s.offset:s.offset+s.length], castagnoli)
	}
	tb := t.encode()
	var out bytes.Buffer
	out.Write(b[:off])
	out.Write(tb)
	out.Write(footer{tocOffset: off, tocLength: uint32(len(tb)), tocCRC: crc32.Checksum(tb, castagnoli), version: FormatVersion}.encode())
	return out.Bytes()
}

// TestDamageBehindChecksumsIsAnError: a file damaged and then given the checksums of its
// damage (which no accident does) is still read without a panic: every decoder checks
// its bounds, and the libraries' panics are turned into errors.
func TestDamageBehindChecksumsIsAnError(t *testing.T) {
	b := segmentFile(t, 40)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 600
	if testing.Short() {
		n = 100
	}
	for i := range n {
		c := append([]byte(nil), b...)
		for range 1 + rng.IntN(3) {
			c[8+rng.IntN(len(c)-8-footerSize)] = byte(rng.IntN(256))
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("case %d: panic: %v\n%s", i, r, debug.Stack())
				}
			}()
			_ = openBytes(t, reseal(c))
		}()
	}
}

// FuzzDamageBehindChecksums is TestDamageBehindChecksumsIsAnError's fuzzer.
func FuzzDamageBehindChecksums(f *testing.F) {
	f.Add(segmentFile(f, 20))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = openBytes(t, reseal(b))
	})
}
