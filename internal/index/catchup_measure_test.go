package index

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/guide/guide/internal/events"
)

// TestMeasureCatchUp indexes the tree GUIDE_CATCHUP_TREE names as a first index does —
// batches of at most 1000 events or 2 MB of content, each prepared while the one before is
// applied — and logs what scorch built, merged and wrote. It measures; it asserts nothing.
func TestMeasureCatchUp(t *testing.T) {
	dir := os.Getenv("GUIDE_CATCHUP_TREE")
	if dir == "" {
		t.Skip("GUIDE_CATCHUP_TREE names no tree")
	}
	var evs []events.Event
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || !utf8.Valid(b) || len(b) > 1<<20 {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		evs = append(evs, events.Event{Op: events.OpUpsert, Path: filepath.ToSlash(rel), Status: events.StatusOK,
			Content: b, Size: int64(len(b)), Hash: events.HashContent(b), Mtime: time.Now()})
		return nil
	})
	x := emptyIndex(t, "measure", 2*time.Second)
	var batches []events.Batch
	var b events.Batch
	bytes := 0
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
		b.Events = append(b.Events, evs[i])
		bytes += len(evs[i].Content)
		if len(b.Events) == 1000 || bytes >= 2<<20 {
			batches, b, bytes = append(batches, b), events.Batch{}, 0
		}
	}
	if len(b.Events) > 0 {
		batches = append(batches, b)
	}
	for i := range batches {
		batches[i].Pending = uint64(len(evs)) - batches[i].Last()
	}
	stopMem := make(chan struct{})
	memDone := make(chan [2]int64)
	go func() { // the highest anonymous and file-backed resident memory
		var most [2]int64
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			a, f := rss()
			most[0], most[1] = max(most[0], a), max(most[1], f)
			select {
			case <-stopMem:
				memDone <- most
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	applies := make(chan func() error)
	applied := make(chan error, 1)
	go func() {
		var err error
		for apply := range applies {
			if err == nil {
				err = apply()
			}
		}
		applied <- err
	}()
	for _, b := range batches {
		applies <- x.Prepare(b)
	}
	close(applies)
	noErr(t, <-applied, "apply")
	caught := time.Since(start)
	logStats(t, x, "caught up", len(evs), len(batches), caught)
	for !x.State().Merged {
		time.Sleep(100 * time.Millisecond)
	}
	logStats(t, x, "merged", len(evs), len(batches), time.Since(start))
	close(stopMem)
	most := <-memDone
	t.Logf("highest RssAnon %d MB, RssFile %d MB", most[0]>>10, most[1]>>10)
}

// rss is the process's anonymous and file-backed resident memory, in kB.
func rss() (anon, file int64) {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		var v int64
		if _, err := fmt.Sscanf(l, "RssAnon: %d kB", &v); err == nil {
			anon = v
		}
		if _, err := fmt.Sscanf(l, "RssFile: %d kB", &v); err == nil {
			file = v
		}
	}
	return anon, file
}

func logStats(t *testing.T, x *Index, when string, docs, batches int, took time.Duration) {
	adv, _ := x.idx.Advanced()
	m := adv.(*scorch.Scorch).StatsMap()
	a, f := rss()
	t.Logf("%s: %d docs, %d batches, %s; segments %d; RssAnon %d MB, RssFile %d MB", when, docs, batches, took.Round(time.Millisecond), segments(x.idx), a>>10, f>>10)
	for _, k := range []string{"TotBatches", "TotIntroducedSegmentsBatch", "TotPersistedSegments", "TotMemMergeDone", "TotMemMergeSegments",
		"TotFileMergePlanTasks", "TotFileMergeSegments", "TotFileMergeWrittenBytes", "TotFileMergeForceOpsCompleted", "CurOnDiskBytes", "CurOnDiskFiles", "TotFileMergeZapTime", "TotMemMergeZapTime"} {
		t.Logf("  %s = %v", k, m[k])
	}
}
