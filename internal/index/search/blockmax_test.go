package search_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
)

// TestTopSkipsOnlyWhatCannotEnter holds the pruned collection of the best n documents
// (termsSearcher.top) to reading every document: the same documents, scores and count,
// for words common and rare, over segments with deletions, for small and large n.
func TestTopSkipsOnlyWhatCannotEnter(t *testing.T) {
	x := emptyIndex(t, "top", time.Hour)
	r := rand.New(rand.NewPCG(3, 4))
	filler := []string{"stone", "river", "lamp", "quiet", "northern", "window", "ledger"}
	text := func(n int) string {
		var ws []string
		for range n {
			ws = append(ws, filler[r.IntN(len(filler))])
		}
		return strings.Join(ws, " ")
	}
	seq := uint64(0)
	for batch := range 6 {
		var b events.Batch
		for i := range 500 {
			seq++
			p := fmt.Sprintf("d%d/%04d.md", batch%2, r.IntN(2600))
			if r.IntN(10) == 0 {
				b.Events = append(b.Events, events.Event{Op: events.OpDelete, Project: "top", Path: p, Seq: seq})
				continue
			}
			title := text(2)
			if r.IntN(20) == 0 {
				title += " harbour"
			}
			body := text(r.IntN(200))
			for range r.IntN(4) {
				body += " harbour " + text(r.IntN(30))
			}
			if r.IntN(3) == 0 {
				body += " harbours"
			}
			if i == batch*7 { // a word of one document in each segment
				body += fmt.Sprintf(" unique%d lonely", batch)
			}
			b.Events = append(b.Events, upsert("top", p, fmt.Sprintf("# %s\n\n%s\n", title, body), seq))
		}
		// A word held by one document's path alone: a posting of one document.
		seq++
		b.Events = append(b.Events, upsert("top", fmt.Sprintf("e/solitary%d/note.md", batch), text(5), seq))
		noErr(t, x.Apply(b), "apply")
		x.Flush()
	}
	if n := x.State().Segments; n < 2 {
		t.Fatalf("set-up: %d segment", n)
	}
	_, searcher := wordSearchers(t, x)
	for _, w := range []string{"harbour", "harbours", "stone", "lonely", "unique3", "quiet", "solitary2"} {
		all, err := searcher(w).All()
		noErr(t, err, "every document")
		for _, n := range []int{1, 5, 37, 200} {
			got, total, err := searcher(w).Top(n)
			noErr(t, err, "top")
			want := all[:min(n, len(all))]
			if total != uint64(len(all)) || !slices.Equal(got, want) {
				t.Fatalf("%s, n %d: top found %d of %d documents:\n got %v\nwant %v", w, n, total, len(all), got, want)
			}
		}
	}
}

// TestTopPassesChunksByImpacts: a word of every document found in their text alone, so
// that MaxScore has no term to leave out, is read a chunk at a time, and the chunks
// whose impacts cannot beat the best kept are passed over; the best are still those a
// reading of every posting finds.
func TestTopPassesChunksByImpacts(t *testing.T) {
	x := emptyIndex(t, "impacts", time.Hour)
	r := rand.New(rand.NewPCG(9, 10))
	var b events.Batch
	for i := range 3000 {
		var body strings.Builder
		fmt.Fprintf(&body, "# note %d\n\nan opening line\n\n", i)
		for range 1 + r.IntN(6) {
			body.WriteString("murmur ")
		}
		for range r.IntN(300) {
			body.WriteString("filler ")
		}
		b.Events = append(b.Events, upsert("impacts", fmt.Sprintf("n/%04d.md", i), body.String(), uint64(i+1)))
	}
	noErr(t, x.Apply(b), "apply")
	x.Flush()
	e, searcher := wordSearchers(t, x)
	all, err := searcher("murmur").All()
	noErr(t, err, "every document")
	for _, n := range []int{1, 20, 37} {
		before := e.ChunksPassed()
		got, total, err := searcher("murmur").Top(n)
		noErr(t, err, "top")
		if want := all[:n]; total != uint64(len(all)) || !slices.Equal(got, want) {
			t.Fatalf("n %d: top found %d of %d documents:\n got %v\nwant %v", n, total, len(all), got, want)
		}
		if e.ChunksPassed() == before {
			t.Errorf("n %d: no chunk passed over by its impacts", n)
		}
	}
}
