package text

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

func doc(i int) []byte {
	return fmt.Appendf(nil, "# Title %d\n\nA lead of %d.\n\n## Part\n\nMore.", i, i)
}

// TestMarkdownHandoff: what the catalog puts, the index takes by sequence and hash, as
// ParseMarkdown would give it; what it passed is dropped; anything else it parses itself.
func TestMarkdownHandoff(t *testing.T) {
	h := NewMarkdownHandoff(3)
	for seq := uint64(1); seq <= 5; seq++ {
		h.Put(seq, fmt.Sprint("hash", seq), doc(int(seq)))
	}
	// Holding 3: 1 and 2 went first.
	for _, c := range []struct {
		seq    uint64
		hash   string
		handed bool
	}{
		{1, "hash1", false}, // dropped at the third put past capacity
		{3, "hash3", true},  // held
		{4, "other", false}, // another content at 4: parsed, and 4 dropped
		{5, "hash5", true},  // held
		{5, "hash5", false}, // taken once
		{9, "hash9", false}, // never put
	} {
		before, _, _ := h.Stats()
		md := h.Take(c.seq, c.hash, doc(int(c.seq)))
		after, _, _ := h.Stats()
		if !reflect.DeepEqual(md, ParseMarkdown(doc(int(c.seq)))) {
			t.Fatalf("take %d: %+v, not the parse of its document", c.seq, md)
		}
		if handed := after > before; handed != c.handed {
			t.Errorf("take %d %s: handed %v, want %v", c.seq, c.hash, handed, c.handed)
		}
	}
	// Put at or before what was taken is not held: the index has passed it.
	h.Put(8, "hash8", doc(8))
	h.Put(10, "hash10", doc(10))
	h.Put(10, "hash10", doc(10)) // a batch applied again
	if _, _, held := h.Stats(); held != 1 {
		t.Fatalf("after puts at 8 (passed), 10 and 10 again: %d held, want 1", held)
	}
	if handed, parsed, _ := h.Stats(); handed != 2 || parsed != 4 {
		t.Fatalf("stats: %d handed, %d parsed; want 2 and 4", handed, parsed)
	}
	var none *MarkdownHandoff
	if md := none.Take(1, "x", doc(1)); !reflect.DeepEqual(md, ParseMarkdown(doc(1))) {
		t.Fatal("a nil handoff does not parse")
	}
	none.Put(1, "x", doc(1))
}

// TestMarkdownHandoffConcurrent puts from one goroutine and takes from another, the
// taker sometimes ahead: every Markdown taken is its document's (run it with -race).
func TestMarkdownHandoffConcurrent(t *testing.T) {
	h := NewMarkdownHandoff(64)
	const n = 2000
	var wg sync.WaitGroup
	wg.Go(func() {
		for seq := 1; seq <= n; seq++ {
			h.Put(uint64(seq), fmt.Sprint(seq), doc(seq))
		}
	})
	wg.Go(func() {
		for seq := 1; seq <= n; seq += 1 + seq%3 {
			if md := h.Take(uint64(seq), fmt.Sprint(seq), doc(seq)); md.Title != fmt.Sprintf("Title %d", seq) {
				t.Errorf("take %d: title %q", seq, md.Title)
				return
			}
		}
	})
	wg.Wait()
	if _, _, held := h.Stats(); held > 64 {
		t.Fatalf("%d held, more than 64", held)
	}
}
