package search_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
)

// TestCountingAFolderWordAllocatesNothing counts the documents of a word that names a
// folder — in a merged segment its postings are runs, the folder's documents numbered
// together — beside documents whose text holds it here and there. Roaring's unions built
// and converted a container at every step where runs met an array (at a million
// documents, most of a search for a folder's name); the count is now taken in a set of
// bits that, once grown to the segment, allocates nothing.
func TestCountingAFolderWordAllocatesNothing(t *testing.T) {
	x := emptyIndex(t, "count", time.Hour)
	var b events.Batch
	seq := uint64(0)
	want := uint64(0)
	for i := range 3000 {
		seq++
		folder := []string{"notes", "runbooks", "drafts"}[i/1000]
		body := "quiet harbour"
		if i%7 == 0 {
			body += " runbooks"
		}
		if folder == "runbooks" || i%7 == 0 {
			want++
		}
		b.Events = append(b.Events, upsert("count", fmt.Sprintf("%s/%04d.md", folder, i), "# "+body+"\n\n"+strings.Repeat(body+" ", 3)+"\n", seq))
	}
	noErr(t, x.Apply(b), "apply")
	x.Flush()
	if n := x.State().Segments; n != 1 {
		t.Fatalf("set-up: %d segments, want 1", n)
	}
	_, searcher := wordSearchers(t, x)
	s := searcher("runbooks")
	noErr(t, s.Open(0), "open")
	if got := s.Count(0); got != want {
		t.Fatalf("counted %d documents, want %d", got, want)
	}
	if allocs := testing.AllocsPerRun(20, func() { s.Count(0) }); allocs > 0 {
		t.Errorf("counting allocated %.0f times, want none", allocs)
	}
}
