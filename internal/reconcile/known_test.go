package reconcile

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
)

func TestKnownDocKeepsWhatTheStateSays(t *testing.T) {
	sha := events.HashContent([]byte("a"))
	for name, st := range map[string]events.DocState{
		"sha256":      {Path: "a.md", Op: events.OpUpsert, Size: 1, Mtime: time.Date(2026, 11, 26, 1, 2, 3, 456789, time.UTC), Inode: 9, Hash: sha, Status: events.StatusOK, Seq: 7},
		"upper hex":   {Path: "b.md", Op: events.OpUpsert, Hash: strings.ToUpper(sha), Status: events.StatusOK, Seq: 8},
		"not a sha":   {Path: "c.bin", Op: events.OpUpsert, Size: 1 << 40, Mtime: time.Unix(-5, 0).UTC(), Hash: "size:1099511627776", Status: events.StatusTooLarge},
		"short hex":   {Path: "d", Op: events.OpUpsert, Hash: "abc"},
		"deleted":     {Path: "gone.md", Op: events.OpDelete, Seq: 3},
		"zero time":   {Path: "z", Op: events.OpUpsert},
		"odd status":  {Path: "s", Op: events.OpUpsert, Status: "from_a_newer_indexer"},
		"no hash yet": {Path: "h", Op: events.OpUpsert, Status: events.StatusBinary},
	} {
		k := newKnown(st)
		if got := k.state(st.Path); !reflect.DeepEqual(got, st) {
			t.Errorf("%s: state\n %+v\nwant\n %+v", name, got, st)
		}
		if !k.hashIs(st.Hash) || k.hashIs(st.Hash+"0") || (len(st.Hash) > 0 && k.hashIs(st.Hash[1:]+"0")) {
			t.Errorf("%s: hashIs does not tell %q from others", name, st.Hash)
		}
		if (k.exists) != (st.Op == events.OpUpsert) {
			t.Errorf("%s: exists %v for op %s", name, k.exists, st.Op)
		}
	}
	if (knownDoc{}).exists {
		t.Error("a document not known exists")
	}
}

// TestKnownDocHoldsNoHashString: what the indexer keeps of a readable document allocates
// nothing of its own (its hash is held as bytes).
func TestKnownDocHoldsNoHashString(t *testing.T) {
	st := events.DocState{Path: "a.md", Op: events.OpUpsert, Size: 1, Mtime: time.Now(), Hash: events.HashContent([]byte("a")),
		Status: events.StatusOK, Seq: 7}
	var k knownDoc
	if n := testing.AllocsPerRun(100, func() { k = newKnown(st) }); n != 0 {
		t.Errorf("newKnown allocates %v times", n)
	}
	if !k.hex {
		t.Error("a SHA-256 hash is not held as bytes")
	}
}
