package index

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bindex "github.com/blevesearch/bleve_index_api"
	api "github.com/blevesearch/scorch_segment_api/v2"

	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/segment"
)

// The kill -9 test's child: this test binary again, run by TestKill9DuringBuildOrMerge
// with killChildEnv set to "STAGE DIR". It indexes killBatches batches into DIR with a
// segment format that stops at STAGE — halfway through writing a segment's file (persist),
// or a merge's (merge-partial), or once a merge's file is whole but before scorch has
// taken it (merge-written) — says so on its standard output and waits to be killed.
const (
	killChildEnv   = "GUIDE_INDEX_KILL_CHILD"
	killStalled    = "STALLED"
	killBatches    = 8
	killBatchDocs  = 300
	killPersistsOK = 3 // persist: the segments written whole before the one stopped halfway
)

// stallingPlugin is guide's segment format, stopping at a stage.
type stallingPlugin struct {
	segment.Plugin
	stage    string
	persists int
}

// stall says the process stopped where the test kills it, and waits for the kill.
func stall() {
	os.Stdout.WriteString(killStalled + "\n")
	select {}
}

// halfFile writes the first half of from's bytes to path, as a crash while writing it
// leaves it.
func halfFile(from, path string) {
	b, _ := os.ReadFile(from)
	_ = os.WriteFile(path, b[:len(b)/2], 0o600)
}

func (p *stallingPlugin) NewUsing(results []bindex.Document, cfg map[string]any) (api.Segment, uint64, error) {
	s, n, err := p.Plugin.NewUsing(results, cfg)
	if err != nil || p.stage != "persist" {
		return s, n, err
	}
	return &stallingSegment{s.(api.UnpersistedSegment), p}, n, nil
}

func (p *stallingPlugin) New(results []bindex.Document) (api.Segment, uint64, error) {
	return p.NewUsing(results, nil)
}

func (p *stallingPlugin) MergeUsing(segs []api.Segment, drops []*roaring.Bitmap, path string, closeCh chan struct{}, s api.StatsReporter, cfg map[string]any) ([][]uint64, uint64, error) {
	// The segments merged may be persist's wrappers of guide's: merge their insides.
	inner := make([]api.Segment, len(segs))
	for i, sg := range segs {
		if w, ok := sg.(*stallingSegment); ok {
			sg = w.UnpersistedSegment
		}
		inner[i] = sg
	}
	if !strings.HasPrefix(p.stage, "merge") {
		return p.Plugin.MergeUsing(inner, drops, path, closeCh, s, cfg)
	}
	tmp := path + ".whole"
	if _, _, err := p.Plugin.MergeUsing(inner, drops, tmp, closeCh, s, cfg); err != nil {
		return nil, 0, err
	}
	if p.stage == "merge-partial" {
		halfFile(tmp, path)
	} else {
		_ = os.Rename(tmp, path)
	}
	stall()
	return nil, 0, nil
}

func (p *stallingPlugin) Merge(segs []api.Segment, drops []*roaring.Bitmap, path string, closeCh chan struct{}, s api.StatsReporter) ([][]uint64, uint64, error) {
	return p.MergeUsing(segs, drops, path, closeCh, s, nil)
}

// stallingSegment is a segment built in memory whose persisting stops halfway, after
// killPersistsOK whole ones.
type stallingSegment struct {
	api.UnpersistedSegment
	p *stallingPlugin
}

func (s *stallingSegment) Persist(path string) error {
	if s.p.persists++; s.p.persists <= killPersistsOK {
		return s.UnpersistedSegment.Persist(path)
	}
	tmp := path + ".whole"
	if err := s.UnpersistedSegment.Persist(tmp); err != nil {
		return err
	}
	halfFile(tmp, path)
	stall()
	return nil
}

// killChild is the child's work (see killChildEnv).
func killChild(t *testing.T, stage, dir string) {
	segment.Register()
	scorch.RegisterSegmentPlugin(&stallingPlugin{stage: stage}, false) // in place of guide's own
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	x := &Index{Dir: dir, Logger: logger, IdleMerge: 20 * time.Millisecond}
	plan := mergeplan.DefaultMergePlanOptions
	plan.MaxSegmentsPerTier, plan.FloorSegmentSize, plan.FloorSegmentFileSize = 1, 1, 1
	x.idlePlan = &plan
	noErr(t, x.Open(), "open")
	noErr(t, x.Reset(projection.State{StreamID: "kill@1", Project: "kill"}), "reset")
	seq := uint64(0)
	for range killBatches {
		noErr(t, x.Apply(harbourBatch("kill", &seq, killBatchDocs)), "apply")
		x.flush() // each batch its own segment on disk (persisted alone), merged when idle
	}
	time.Sleep(time.Minute) // the merge (or the persister) stalls; the parent kills this process first
	t.Fatal("the child was not killed at its stage")
}

// TestKill9DuringBuildOrMerge kills a process (SIGKILL: no clean-up) while its index
// writes a segment's file, or merges segments — the merged file half written, or whole
// but not yet taken — and opens the index again: it holds exactly the documents of its
// checkpoint, the events after the checkpoint replayed bring it to the stream's end, and
// a clean reopen keeps them.
func TestKill9DuringBuildOrMerge(t *testing.T) {
	if v := os.Getenv(killChildEnv); v != "" {
		stage, dir, _ := strings.Cut(v, " ")
		killChild(t, stage, dir)
		return
	}
	if testing.Short() {
		t.Skip("-short: kill -9 runs child processes")
	}
	for _, stage := range []string{"persist", "merge-partial", "merge-written"} {
		t.Run(stage, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			cmd := exec.Command(os.Args[0], "-test.run", "^TestKill9DuringBuildOrMerge$", "-test.count=1")
			cmd.Env = append(os.Environ(), killChildEnv+"="+stage+" "+dir)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			noErr(t, err, "child's output")
			noErr(t, cmd.Start(), "start the child")
			stalled := make(chan bool, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if sc.Text() == killStalled {
						stalled <- true
						return
					}
				}
				stalled <- false
			}()
			var ok bool
			select {
			case ok = <-stalled:
			case <-time.After(2 * time.Minute):
			}
			_ = cmd.Process.Kill() // kill -9
			_ = cmd.Wait()
			if !ok {
				t.Fatalf("the child never reached %s", stage)
			}

			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			x := &Index{Dir: dir, Logger: logger}
			noErr(t, x.Open(), "reopen after the kill")
			c := x.Checkpoint()
			if sid, _ := x.Identity(); sid == "" {
				noErr(t, x.Reset(projection.State{StreamID: "kill@1", Project: "kill"}), "reset")
			}
			if got := harbours(t, x); got != c {
				t.Fatalf("after the kill: %d documents at checkpoint %d", got, c)
			}
			t.Logf("%s: killed with %d of %d events on disk", stage, c, killBatches*killBatchDocs)
			// The runner replays from the checkpoint: the events it has are skipped.
			seq := uint64(0)
			for range killBatches {
				noErr(t, x.Apply(harbourBatch("kill", &seq, killBatchDocs)), "replay")
			}
			want := uint64(killBatches * killBatchDocs)
			if got := harbours(t, x); got != want || x.Checkpoint() != want {
				t.Fatalf("after the replay: %d documents at checkpoint %d, want %d", got, x.Checkpoint(), want)
			}
			noErr(t, x.Close(), "close")
			y := &Index{Dir: dir, Logger: logger}
			noErr(t, y.Open(), "reopen")
			defer y.Close()
			if got := harbours(t, y); got != want || y.Checkpoint() != want {
				t.Fatalf("after a clean reopen: %d documents at checkpoint %d, want %d", got, y.Checkpoint(), want)
			}
		})
	}
}

// harbours is how many documents hold "harbour" (harbourBatch's word).
func harbours(t *testing.T, x *Index) uint64 {
	t.Helper()
	q, err := querylang.Parse("harbour")
	noErr(t, err, "parse")
	res, err := x.Search(context.Background(), search.Request{Query: q})
	noErr(t, err, "search")
	return res.Total
}
