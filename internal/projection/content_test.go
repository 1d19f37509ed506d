package projection

import (
	"bytes"
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
			v := appendContent(nil, tc.body)
			if got := len(v) < len(tc.body); got != tc.smaller {
				t.Errorf("stored in %d bytes for a body of %d", len(v), len(tc.body))
			}
			if len(v) > 1+len(tc.body) {
				t.Errorf("stored in %d bytes, more than the body's %d and a byte", len(v), len(tc.body))
			}
			got, err := unpackContent(v, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.body) {
				t.Errorf("unpacked %q, want %q", got, tc.body)
			}
			// Appended after other bodies (a batch's buffer), the same bytes follow them.
			prefix := appendContent(nil, text)
			if all := appendContent(bytes.Clone(prefix), tc.body); !bytes.Equal(all, append(prefix, v...)) {
				t.Errorf("appended after %d bytes: %d bytes, want the %d of the body alone after them", len(prefix), len(all)-len(prefix), len(v))
			}
		})
	}
	for _, v := range [][]byte{nil, {9, 1, 2}, {contentS2, 0xff, 0xff}} {
		if _, err := unpackContent(v, nil); err == nil {
			t.Errorf("unpackContent(%v) read a value it should reject", v)
		}
	}
}
