package binrec_test

import (
	"encoding/binary"
	"testing"

	"github.com/guide/guide/internal/binrec"
)

// FuzzVarint: the reader's varints read what encoding/binary's do, and reject what they
// reject.
func FuzzVarint(f *testing.F) {
	for _, v := range []uint64{0, 1, 127, 128, 1 << 35, 1<<64 - 1} {
		f.Add(binary.AppendUvarint(nil, v))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, n := binary.Uvarint(b)
		r := binrec.NewReader(string(b))
		got := r.Uvarint()
		if (n <= 0) != (r.Err != nil) {
			t.Fatalf("%x: binary.Uvarint read %d bytes, the reader's error is %v", b, n, r.Err)
		}
		if n > 0 && (got != want || r.Len() != len(b)-n) {
			t.Fatalf("%x: read %d leaving %d bytes, want %d leaving %d", b, got, r.Len(), want, len(b)-n)
		}
		wantS, m := binary.Varint(b)
		r = binrec.NewReader(string(b))
		if gotS := r.Varint(); m > 0 && gotS != wantS {
			t.Fatalf("%x: varint %d, want %d", b, gotS, wantS)
		}
	})
}

// TestStringRoundTrip: strings come back as written, and a length past the end fails.
func TestStringRoundTrip(t *testing.T) {
	b := binrec.AppendString(binrec.AppendString(nil, "a/b.md"), "")
	r := binrec.NewReader(string(b))
	if a, e := r.String(), r.String(); a != "a/b.md" || e != "" || r.Err != nil || r.Len() != 0 {
		t.Fatalf("read %q, %q, err %v, %d left", a, e, r.Err, r.Len())
	}
	r = binrec.NewReader(string(b[:3]))
	if s := r.String(); s != "" || r.Err == nil {
		t.Fatalf("a cut string read %q, err %v", s, r.Err)
	}
}
