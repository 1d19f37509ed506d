package projection

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"testing"
)

func TestContentPacking(t *testing.T) {
	random := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(random)
	text := bytes.Repeat([]byte("the dragon sleeps under the mountain; "), 100)
	for _, tc := range []struct {
		name    string
		body    []byte
		smaller bool // stored in fewer bytes than the body
	}{
		{"empty", []byte{}, false},
		{"text", text, true},
		{"incompressible", random, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := packContent(tc.body)
			if got := len(v) < len(tc.body); got != tc.smaller {
				t.Errorf("stored in %d bytes for a body of %d", len(v), len(tc.body))
			}
			if len(v) > 1+len(tc.body) {
				t.Errorf("stored in %d bytes, more than the body's %d and a byte", len(v), len(tc.body))
			}
			got, err := unpackContent(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.body) {
				t.Errorf("unpacked %q, want %q", got, tc.body)
			}
		})
	}
	for _, v := range [][]byte{nil, {9, 1, 2}, {contentS2, 0xff, 0xff}} {
		if _, err := unpackContent(v); err == nil {
			t.Errorf("unpackContent(%v) read a value it should reject", v)
		}
	}
}

// FuzzRecordVarint: the record reader's varints read what encoding/binary's do, and reject
// what they reject.
func FuzzRecordVarint(f *testing.F) {
	for _, v := range []uint64{0, 1, 127, 128, 1 << 35, 1<<64 - 1} {
		f.Add(binary.AppendUvarint(nil, v))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, n := binary.Uvarint(b)
		r := &reader{s: string(b)}
		got := r.uvarint()
		if (n <= 0) != (r.err != nil) {
			t.Fatalf("%x: binary.Uvarint read %d bytes, the reader's error is %v", b, n, r.err)
		}
		if n > 0 && (got != want || len(r.s) != len(b)-n) {
			t.Fatalf("%x: read %d leaving %d bytes, want %d leaving %d", b, got, len(r.s), want, len(b)-n)
		}
		wantS, m := binary.Varint(b)
		r = &reader{s: string(b)}
		if gotS := r.varint(); m > 0 && gotS != wantS {
			t.Fatalf("%x: varint %d, want %d", b, gotS, wantS)
		}
	})
}
