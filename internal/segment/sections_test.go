package segment

import (
	"errors"
	"fmt"
	"testing"
)

// TestNormsReadAsWritten: a field's lengths read back as written, each in the fewest
// bytes the longest needs, or once when every document with the field has the same.
func TestNormsReadAsWritten(t *testing.T) {
	for _, c := range []struct {
		lengths []uint32
		width   int
	}{
		{[]uint32{1, 1, 0, 1}, 0},
		{[]uint32{0, 0, 0}, 0},
		{[]uint32{3, 255, 0, 7}, 1},
		{[]uint32{3, 256, 0, 7}, 2},
		{[]uint32{70000, 1}, 3},
		{[]uint32{1 << 24, 5}, 4},
		{[]uint32{1<<32 - 1, 0}, 0},
	} {
		b := appendNorms(nil, c.lengths)
		n, err := normsOf(b, uint64(len(c.lengths)))
		if err != nil {
			t.Fatalf("%v: %v", c.lengths, err)
		}
		if n.width != c.width {
			t.Errorf("%v: width %d, want %d", c.lengths, n.width, c.width)
		}
		for d, l := range c.lengths {
			if l != 0 && n.length(uint32(d)) != l {
				t.Errorf("%v: document %d of length %d", c.lengths, d, n.length(uint32(d)))
			}
		}
		if _, err := normsOf(b, uint64(len(c.lengths)+1)); n.width > 0 && !errors.Is(err, ErrDamaged) {
			t.Errorf("%v read for one more document: %v", c.lengths, err)
		}
	}
}

// normsOf reads a norms section as load does: its head, then its lengths by document.
func normsOf(b []byte, docs uint64) (norms, error) {
	n, err := decodeNorms(b[:min(len(b), maxNormsHead)], uint64(len(b)), docs)
	if err == nil && n.width > 0 {
		n.b = b[1:]
	}
	return n, err
}

// TestTableOfContentsReadAsWritten: the table of contents reads back as written, and
// one whose sections do not tile the file is refused.
func TestTableOfContentsReadAsWritten(t *testing.T) {
	tc := toc{docs: 3, names: []string{"_id", "body"}, flags: []byte{0, flagPositions}}
	at := uint64(len(magic))
	for i := range 7 {
		kind, field := sectionIDs, 0
		if i > 0 {
			kind, field = []byte{sectionNorms, sectionPostings, sectionDict}[(i-1)%3], (i-1)/3
		}
		tc.sections = append(tc.sections, span{kind: kind, field: field, offset: at, length: uint64(10 + i), crc: uint32(i)})
		at += uint64(10 + i)
	}
	got, err := decodeTOC(tc.encode(), at)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(*got) != fmt.Sprint(tc) {
		t.Fatalf("read %v, wrote %v", *got, tc)
	}
	if _, err := decodeTOC(tc.encode(), at+1); !errors.Is(err, ErrDamaged) {
		t.Fatalf("a gap before the table: %v", err)
	}
	tc.sections[2].offset++
	if _, err := decodeTOC(tc.encode(), at); !errors.Is(err, ErrDamaged) {
		t.Fatalf("sections overlapping: %v", err)
	}
}

// TestInlineValues: a posting of one occurrence is its dictionary value, with its
// position in a field of positions, unless the position is too far to fit.
func TestInlineValues(t *testing.T) {
	for _, c := range []struct {
		doc       uint32
		positions bool
		pos       uint64
		ok        bool
	}{
		{0, false, 0, true}, {1<<32 - 1, false, 0, true}, {7, true, 0, true}, {7, true, 1, true},
		{7, true, 1<<31 - 2, true}, {7, true, 1<<31 - 1, false},
	} {
		v, ok := inlineValue(c.doc, c.positions, c.pos)
		if ok != c.ok {
			t.Fatalf("%+v: inlined %v", c, ok)
		}
		if !ok {
			continue
		}
		doc, pos1 := inlined(v)
		if v&inlineFlag == 0 || doc != c.doc || c.positions && pos1 != c.pos+1 || !c.positions && pos1 != 0 {
			t.Fatalf("%+v: read %d, %d", c, doc, pos1)
		}
	}
}
