package index

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
)

// TestIdleIndexMergesItsSegments leaves an index in more segments than an idle index
// keeps, reopens it, and waits for it, idle, to merge them down to idleSegments or fewer;
// every document is still found, and the checkpoint survives another reopen.
func TestIdleIndexMergesItsSegments(t *testing.T) {
	dir, seq := unmergedIndex(t, "merge")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	y := &Index{Dir: dir, Logger: logger, IdleMerge: time.Hour}
	noErr(t, y.Open(), "reopen")
	before := segments(y.idx)
	noErr(t, y.Close(), "close")
	if before <= idleSegments {
		t.Fatalf("set-up: the index has %d segments, not more than %d", before, idleSegments)
	}

	z := &Index{Dir: dir, Logger: logger, IdleMerge: 10 * time.Millisecond}
	noErr(t, z.Open(), "reopen to merge")
	deadline := time.Now().Add(30 * time.Second)
	n := segments(z.idx)
	for ; n > idleSegments && time.Now().Before(deadline); n = segments(z.idx) {
		time.Sleep(10 * time.Millisecond) // polls the condition (testkit would import this package)
	}
	if n > idleSegments {
		t.Fatalf("the idle index kept %d segments, more than %d", n, idleSegments)
	}
	if st := z.State(); st.Segments != n {
		t.Fatalf("status says %d segments, the index has %d", st.Segments, n)
	}
	q, err := querylang.Parse("harbour")
	noErr(t, err, "parse")
	res, err := z.Search(context.Background(), search.Request{Query: q})
	noErr(t, err, "search")
	if res.Total != 15000 {
		t.Fatalf("after the merge, harbour finds %d documents, want 15000", res.Total)
	}
	noErr(t, z.Close(), "close")
	w := &Index{Dir: dir, Logger: logger}
	noErr(t, w.Open(), "reopen after the merge")
	defer w.Close()
	if w.Checkpoint() != seq || segments(w.idx) > idleSegments {
		t.Fatalf("after the merge and a reopen: checkpoint %d with %d segments, want %d with at most %d", w.Checkpoint(), segments(w.idx), seq, idleSegments)
	}
}

// TestCloseStopsAMerge closes an index while its idle merge may be running: Close returns,
// and the index reopens with every document.
func TestCloseStopsAMerge(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := &Index{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IdleMerge: time.Millisecond}
	noErr(t, x.Open(), "open")
	noErr(t, x.Reset(projection.State{StreamID: "merge@1", Project: "merge"}), "reset")
	seq := uint64(0)
	for i := range 30 {
		seq++
		c := []byte(fmt.Sprintf("harbour %d", i))
		noErr(t, x.Apply(events.Batch{Events: []events.Event{{Op: events.OpUpsert, Project: "merge", Path: fmt.Sprintf("d/%d.md", i),
			Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: seq}}}), "apply")
	}
	noErr(t, x.Close(), "close")
	y := &Index{Dir: dir, Logger: x.Logger}
	noErr(t, y.Open(), "reopen")
	defer y.Close()
	q, _ := querylang.Parse("harbour")
	res, err := y.Search(context.Background(), search.Request{Query: q})
	noErr(t, err, "search")
	if res.Total != 30 || y.Checkpoint() != seq {
		t.Fatalf("after a close during merges: %d documents at checkpoint %d, want 30 at %d", res.Total, y.Checkpoint(), seq)
	}
}

// TestStatusSaysWhenTheIdleIndexHasMerged: the status says merged only once the index,
// idle, has merged its segments, and no longer after the next batch: a reader waiting for
// the settled index (the bench's searches) waits for the merge itself, however many
// segments it leaves.
func TestStatusSaysWhenTheIdleIndexHasMerged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	// Idle for two seconds before it merges: the checks right after a batch come well within.
	x := &Index{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IdleMerge: 2 * time.Second}
	noErr(t, x.Open(), "open")
	defer x.Close()
	noErr(t, x.Reset(projection.State{StreamID: "merged@1", Project: "merged"}), "reset")
	seq := uint64(0)
	apply := func(docs int) {
		noErr(t, x.Apply(harbourBatch("merged", &seq, docs)), "apply")
		if st := x.State(); st.Merged {
			t.Fatalf("merged right after a batch (%d segments)", st.Segments)
		}
		x.flush()
	}
	for range 6 {
		apply(2500)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !x.State().Merged && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polls the condition (testkit would import this package)
	}
	st := x.State()
	if !st.Merged || st.Segments > idleSegments {
		t.Fatalf("after the idle merge: merged %v with %d segments, want merged with at most %d", st.Merged, st.Segments, idleSegments)
	}
	apply(1) // checks that the batch clears it
}

// TestIdleIndexLeavesSegmentsItsPlanKeeps leaves an index in more segments than an idle
// index keeps, each in a tier of its own under the plan: the idle index does not merge,
// and says so as merged; before, it asked scorch for a merge that rewrote nothing, and
// logged one.
func TestIdleIndexLeavesSegmentsItsPlanKeeps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	logs := &recordedLogs{}
	// Tiers growing by a fifth from 2,500 documents (above scorch's floor size, so that
	// its own merging leaves them be): one segment in each of four fits the plan.
	plan := idleMergePlan
	plan.TierGrowth = 1.2
	x := &Index{Dir: dir, Logger: slog.New(logs), IdleMerge: 10 * time.Millisecond, idlePlan: &plan}
	noErr(t, x.Open(), "open")
	defer x.Close()
	noErr(t, x.Reset(projection.State{StreamID: "tiers@1", Project: "tiers"}), "reset")
	seq := uint64(0)
	for _, docs := range []int{4320, 3600, 3000, 2500} {
		noErr(t, x.Apply(harbourBatch("tiers", &seq, docs)), "apply")
		x.flush() // each batch its own segment on disk
	}
	deadline := time.Now().Add(30 * time.Second)
	for !x.State().Merged && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polls the condition (testkit would import this package)
	}
	st := x.State()
	if !st.Merged || st.Segments != 4 {
		t.Fatalf("the idle index: merged %v with %d segments, want merged with its 4", st.Merged, st.Segments)
	}
	if n := logs.count("merged the index's segments"); n != 0 {
		t.Fatalf("the idle index merged %d times segments its plan keeps", n)
	}
}

// unmergedIndex writes an index of project in six segments on disk, more than an idle
// index keeps, and closes it; it returns the index's folder and its checkpoint.
func unmergedIndex(t *testing.T, project string) (dir string, seq uint64) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "index")
	x := &Index{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IdleMerge: time.Hour}
	noErr(t, x.Open(), "open")
	noErr(t, x.Reset(projection.State{StreamID: project + "@1", Project: project}), "reset")
	for range 6 { // each above scorch's floor size: it leaves a few be
		noErr(t, x.Apply(harbourBatch(project, &seq, 2500)), "apply")
		x.flush() // each batch its own segment on disk
	}
	noErr(t, x.Close(), "close")
	return dir, seq
}

// harbourBatch is a batch of docs new documents of project, each holding "harbour", at the
// sequences after *seq.
func harbourBatch(project string, seq *uint64, docs int) events.Batch {
	var b events.Batch
	for range docs {
		*seq++
		c := []byte(fmt.Sprintf("# Doc %d\n\nharbour", *seq))
		b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: project, Path: fmt.Sprintf("d/%d.md", *seq),
			Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: *seq})
	}
	return b
}

// recordedLogs is a slog handler that keeps the messages logged.
type recordedLogs struct {
	mu   sync.Mutex
	msgs []string
}

func (l *recordedLogs) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordedLogs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *recordedLogs) WithGroup(string) slog.Handler            { return l }
func (l *recordedLogs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}

func (l *recordedLogs) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// TestIdleMergeLeavesNoMergedAwaySegments holds a reader of the index across its idle
// merge, as a search running at that moment does, then lets it go: the segments merged
// away leave the disk although nothing more is written. Scorch deletes a segment's file
// only when it cleans up after persisting, and only once no reader holds a snapshot that
// names it; an idle index persists nothing more, so a reader held across its merge kept
// the index on disk twice over until the next change.
func TestIdleMergeLeavesNoMergedAwaySegments(t *testing.T) {
	dir, _ := unmergedIndex(t, "linger")
	y := &Index{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IdleMerge: 200 * time.Millisecond}
	noErr(t, y.Open(), "reopen to merge")
	defer y.Close()
	adv, err := y.idx.Advanced()
	noErr(t, err, "advanced")
	held, err := adv.Reader() // a search in flight when the merge begins
	noErr(t, err, "reader")
	deadline := time.Now().Add(30 * time.Second)
	for !y.State().Merged && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polls the condition (testkit would import this package)
	}
	if !y.State().Merged {
		t.Fatal("the idle index did not merge")
	}
	noErr(t, held.Close(), "release the reader")
	var stray []string
	for deadline = time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if stray = strayFiles(dir, y.idx); len(stray) == 0 {
			break
		}
	}
	if len(stray) > 0 {
		t.Fatalf("the idle index keeps %d segment files no snapshot names: %v", len(stray), stray)
	}
}
