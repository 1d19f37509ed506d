package reconcile

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"testing"
	"time"

	"github.com/guide/guide/internal/binrec"
	"github.com/guide/guide/internal/events"
)

func sampleState() knownState {
	return knownState{Stream: "GUIDE@1764000000000000000", Project: "docs-3f9a2c1b", Seq: 1234, Docs: knownOf(map[string]events.DocState{
		"a.md":        {Path: "a.md", Op: events.OpUpsert, Size: 12, Mtime: time.Date(2026, 11, 26, 1, 2, 3, 456789, time.UTC), Inode: 77, Hash: events.HashContent([]byte("a")), Status: events.StatusOK, Seq: 1200},
		"gone/b.md":   {Path: "gone/b.md", Op: events.OpDelete, Seq: 1201},
		"élan/ü.bin":  {Path: "élan/ü.bin", Op: events.OpUpsert, Size: 1 << 40, Mtime: time.Unix(-5, 0).UTC(), Hash: "size:1099511627776", Status: events.StatusTooLarge, Seq: 1234},
		"zero-time":   {Path: "zero-time", Op: events.OpUpsert},
		"with space ": {Path: "with space ", Op: events.OpUpsert, Status: events.StatusBinary, Seq: 3},
	})}
}

func knownOf(docs map[string]events.DocState) map[string]knownDoc {
	out := make(map[string]knownDoc, len(docs))
	for p, d := range docs {
		out[p] = newKnown(d)
	}
	return out
}

func TestStateRoundTrip(t *testing.T) {
	for name, st := range map[string]knownState{"Sample": sampleState(), "Empty": {Stream: "S@1", Project: "p", Docs: map[string]knownDoc{}}} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeState(encodeState(st))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, st) {
				t.Errorf("decoded\n %+v\nwant\n %+v", got, st)
			}
		})
	}
}

// sealed returns body with the magic, version and a valid checksum: bytes that pass the
// checksum and must be refused for what they say.
func sealed(version byte, body []byte) []byte {
	b := append([]byte(stateMagic), version)
	b = append(b, body...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

func TestDecodeStateRefuses(t *testing.T) {
	good := encodeState(sampleState())
	header := func(n uint64) []byte {
		b := binrec.AppendString(binrec.AppendString(nil, "S@1"), "p")
		return binary.AppendUvarint(binary.AppendUvarint(b, 9), n)
	}
	recordOf := func(path, op string, nsec uint64) []byte {
		b := binrec.AppendString(nil, path)
		b = binrec.AppendString(b, op)
		b = binary.AppendVarint(binary.AppendVarint(b, 1), 2)
		b = binary.AppendUvarint(b, nsec)
		b = binary.AppendUvarint(b, 3)
		b = binrec.AppendString(binrec.AppendString(b, "h"), "ok")
		return binary.AppendUvarint(b, 4)
	}
	record := func(path string, nsec uint64) []byte { return recordOf(path, "upsert", nsec) }
	cases := []struct {
		name string
		b    []byte
	}{
		{"Empty", nil},
		{"NotAStateFile", []byte("hello, this is not a state file at all")},
		{"Truncated", good[:len(good)-9]},
		{"ChecksumMismatch", append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^1)},
		{"FlippedByte", func() []byte { b := append([]byte{}, good...); b[len(b)/2] ^= 1; return b }()},
		{"OtherVersion", sealed(stateVersion+1, header(0))},
		{"CountBeyondTheBytes", sealed(stateVersion, header(1<<40))},
		{"CountAboveTheRecords", sealed(stateVersion, append(header(2), record("a", 0)...))},
		{"DocumentTwice", sealed(stateVersion, append(append(header(2), record("a", 0)...), record("a", 0)...))},
		{"UnknownOp", sealed(stateVersion, append(header(1), recordOf("a", "rename", 0)...))},
		{"NanosecondsOutOfRange", sealed(stateVersion, append(header(1), record("a", uint64(time.Second))...))},
		{"BytesAfterTheLastDocument", sealed(stateVersion, append(append(header(1), record("a", 0)...), 0))},
		{"StringLongerThanTheFile", sealed(stateVersion, binary.AppendUvarint(nil, 1<<20))},
	}
	if _, err := decodeState(sealed(stateVersion, append(header(1), record("a", 0)...))); err != nil {
		t.Fatalf("the cases' well-formed base is refused: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := decodeState(c.b)
			if !errors.Is(err, errStateCorrupt) {
				t.Errorf("err = %v, want corrupt", err)
			}
			if st.Docs != nil {
				t.Errorf("a refused file gave documents: %v", st.Docs)
			}
		})
	}
}

// FuzzDecodeState: whatever the bytes, decoding refuses them or gives a state that
// encodes and decodes to itself.
func FuzzDecodeState(f *testing.F) {
	f.Add(encodeState(sampleState()))
	f.Add(encodeState(knownState{Docs: map[string]knownDoc{}}))
	f.Add([]byte(stateMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeState(b)
		if err != nil {
			if !errors.Is(err, errStateCorrupt) {
				t.Fatalf("err = %v, want corrupt", err)
			}
			return
		}
		again, err := decodeState(encodeState(st))
		if err != nil {
			t.Fatalf("a decoded state does not decode once encoded: %v", err)
		}
		if !reflect.DeepEqual(again, st) {
			t.Fatalf("round trip changed the state:\n %+v\n %+v", again, st)
		}
	})
}

// TestAdvance: the known state moves past a publication's acks only when they are the
// very next events of the stream, each once.
func TestAdvance(t *testing.T) {
	acks := func(seqs ...uint64) []events.Ack {
		var out []events.Ack
		for _, s := range seqs {
			out = append(out, events.Ack{Seq: s})
		}
		return out
	}
	dup := acks(11, 12)
	dup[1].Duplicate = true
	cases := []struct {
		name string
		seq  uint64
		acks []events.Ack
		want uint64
	}{
		{"NoAcks", 10, nil, 10},
		{"NextEvents", 10, acks(11, 12, 13), 13},
		{"NextEventsOutOfOrder", 10, acks(13, 11, 12), 13},
		{"AnotherWriterBefore", 10, acks(12, 13), 10},
		{"AnotherWriterBetween", 10, acks(11, 13), 10},
		{"Duplicate", 10, dup, 10},
		{"SameSequenceTwice", 10, acks(11, 11, 12), 10},
		{"SameSequenceTwiceOneMissing", 10, acks(11, 11, 13), 10},
		{"FromTheStart", 0, acks(1, 2), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r ackRun
			for _, a := range c.acks {
				r.add(a)
			}
			if got := r.advance(c.seq); got != c.want {
				t.Errorf("advance(%d, %v) = %d, want %d", c.seq, c.acks, got, c.want)
			}
		})
	}
}
