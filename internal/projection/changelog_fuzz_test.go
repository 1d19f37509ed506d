package projection

import (
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
)

// FuzzLogBlock: a block of the change log, its checksum right whatever its bytes (as a
// bug, not the disk, would write it), is read or refused, never a panic; what is read is
// written again the same.
func FuzzLogBlock(f *testing.F) {
	evs := []events.Event{
		{Seq: 7, Op: events.OpUpsert, Path: "docs/a.md", Time: time.Unix(1700000000, 5), Mtime: time.Unix(1690000000, 9).UTC(),
			Size: 12, Hash: events.HashContent([]byte("a")), Status: events.StatusOK, Inode: 42},
		{Seq: 9, Op: events.OpDelete, Path: "docs/b.md", Time: time.Unix(1700000001, 0), PrevSeq: 3,
			Prev: &events.Prev{Op: events.OpUpsert, Size: 3, Hash: "h", Status: events.StatusOK, Inode: 1}},
		{Seq: 12, Op: events.OpUpsert, Path: "über/ß.md", Status: events.StatusBinary, Reason: "binary content"},
	}
	blk := newLogBlock(&evs[0])
	for i := range evs[1:] {
		if !blk.add(&evs[1+i], true) {
			f.Fatalf("entry %d did not fit", 1+i)
		}
	}
	f.Add(uint64(7), blk.b)
	f.Add(uint64(1), []byte{logBlockVersion, 0, 0, 0, 0, 1, 'a', 5, 'd', 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, first uint64, body []byte) {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], first)
		evs, err := decodeLogBlock(k[:], seal(body))
		if err != nil {
			return
		}
		if evs[0].Seq != first {
			t.Fatalf("a block under %d begins at %d", first, evs[0].Seq)
		}
		again := newLogBlock(&evs[0])
		for i := 1; i < len(evs); i++ {
			if evs[i].Seq <= evs[i-1].Seq {
				t.Fatalf("entries out of order: %d after %d", evs[i].Seq, evs[i-1].Seq)
			}
			again.add(&evs[i], false)
		}
		back, err := decodeLogBlock(k[:], seal(again.b))
		if err != nil {
			t.Fatalf("a block read, written again, cannot be read: %v", err)
		}
		for i := range back {
			if !back[i].Time.Equal(evs[i].Time) || !back[i].Mtime.Equal(evs[i].Mtime) {
				t.Fatalf("entry %d: times %v %v, were %v %v", i, back[i].Time, back[i].Mtime, evs[i].Time, evs[i].Mtime)
			}
			back[i].Time, back[i].Mtime = evs[i].Time, evs[i].Mtime
		}
		if !reflect.DeepEqual(back, evs) {
			t.Fatalf("read again:\n%+v\nwas\n%+v", back, evs)
		}
	})
}
