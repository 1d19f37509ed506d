package projection_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

// TestSummaryIsReadFromTheRecord: a document's outline and first paragraph are what its
// latest version says, read from its record after a batch and after a reopen.
func TestSummaryIsReadFromTheRecord(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	f := new(fold).put("a.md", "# A\n\nOld lead.\n\n## Old part").put("c.md", "no headings here").
		put("a.md", "---\ntitle: T\n---\n# A again\n\nNew lead,\nin two lines.\n\n## Part one\n### Part two").scan()
	testkit.NoErr(t, c.Apply(f.batch()), "apply")
	want := map[string]projection.Summary{
		"a.md": {Outline: []projection.Heading{{Level: 1, Text: "A again"}, {Level: 2, Text: "Part one"}, {Level: 3, Text: "Part two"}},
			FirstParagraph: "New lead, in two lines."},
		"c.md": {FirstParagraph: "no headings here"},
	}
	testkit.Equal(t, snapshot(t, c).Summaries, want, "summaries after the batch")
	testkit.NoErr(t, c.Close(), "close")
	c = open(t, dir)
	defer c.Close()
	testkit.Equal(t, snapshot(t, c).Summaries, want, "summaries after a reopen")
}

// TestLoadedRecordsLeaveTheirSummariesOnDisk: a catalog opened on many documents with long
// summaries holds far less than their summaries in memory.
func TestLoadedRecordsLeaveTheirSummariesOnDisk(t *testing.T) {
	const n = 5000
	dir := t.TempDir()
	lead := strings.Repeat("A lead paragraph that goes on. ", 16) // 496 bytes
	// The batch is built and written in a function of its own: garbage once it returns.
	func() {
		c := open(t, dir)
		f := new(fold)
		for i := range n {
			var b strings.Builder
			fmt.Fprintf(&b, "# Document %d\n\n%s\n", i, lead)
			for h := range 20 {
				fmt.Fprintf(&b, "\n## A heading of the outline, number %d\n\ntext\n", h)
			}
			f.put(fmt.Sprintf("d/%d/doc%d.md", i%50, i), b.String())
		}
		testkit.NoErr(t, c.Apply(f.scan().batch()), "apply")
		testkit.NoErr(t, c.Close(), "close")
	}()

	before := heapInUse()
	c := open(t, dir)
	defer c.Close()
	perDoc := (heapInUse() - before) / n
	t.Logf("%d bytes a document", perDoc)
	// A summary here is ~1,300 bytes (20 headings, a 496-byte paragraph); the rest of a
	// record in memory (path, hash, title, the maps and folder entries) is a few hundred.
	if perDoc > 800 {
		t.Errorf("the open catalog holds %d bytes a document; its summaries are in memory", perDoc)
	}
	_ = c.Read(func(s *projection.Snapshot) error {
		d, _ := s.Document("d/7/doc7.md")
		sum, err := s.Summary(d)
		testkit.NoErr(t, err, "summary")
		testkit.Equal(t, [2]any{len(sum.Outline), sum.FirstParagraph}, [2]any{21, strings.TrimSpace(lead)}, "summary read back")
		return nil
	})
}

// heapInUse is the live heap: after two collections, since what a finalizer (an open file's)
// keeps is freed only by the second.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
