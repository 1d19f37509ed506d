package projection_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

const logKillEnv = "GUIDE_CHANGELOG_KILL_CHILD"

// TestChangeLogAfterKill follows a real stream in a child process that is killed
// (SIGKILL) inside the transaction of its nth batch, its records, bodies and log entries
// written and not committed; the catalog opened again has a log that stands where its
// checkpoint does, equal to the stream's history up to it, and once it has caught up,
// equal to the stream's history for every cursor and folder.
func TestChangeLogAfterKill(t *testing.T) {
	if spec := os.Getenv(logKillEnv); spec != "" {
		logKillChild(t, spec)
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	b := testkit.NATSListening(t)
	s := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	publishChurn(t, ctx, s, 500)
	sh, err := s.Horizon(ctx)
	testkit.NoErr(t, err, "horizon")
	for _, nth := range []int{1, 4, 17} {
		t.Run(fmt.Sprintf("Batch%d", nth), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestChangeLogAfterKill$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", logKillEnv, dir, b.ClientURL(), nth))
			out, err := cmd.StdoutPipe()
			testkit.NoErr(t, err, "pipe")
			cmd.Stderr = os.Stderr
			testkit.NoErr(t, cmd.Start(), "start the child")
			reached := false
			for sc := bufio.NewScanner(out); sc.Scan(); {
				if sc.Text() == "reached" {
					reached = true
					break
				}
			}
			testkit.NoErr(t, cmd.Process.Kill(), "kill the child")
			_ = cmd.Wait()
			if !reached {
				t.Fatalf("the child never reached its batch %d", nth)
			}

			c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
			testkit.NoErr(t, c.Open(), "reopen")
			defer c.Close()
			lh, from, ok := c.LogHorizon()
			if !ok || from != 0 || lh.Last != c.Checkpoint() || lh.Last == 0 && nth > 1 {
				t.Fatalf("after the kill: log %+v from %d (ok %v), checkpoint %d", lh, from, ok, c.Checkpoint())
			}
			t.Logf("killed in batch %d: the catalog stands at %d of %d", nth, lh.Last, sh.Last)
			lh.ID, lh.Kept = sh.ID, sh.Kept // as LogHorizon says once the runner has told it
			requireLogIsStream(t, c, s, lh, "after the kill")

			r := &projection.Runner{Stream: s, Project: "p", Projections: []projection.Projection{c}, Logger: testkit.Logger()}
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = r.Run(rctx) }()
			defer func() { cancel(); <-done }()
			testkit.Eventually(t, 30*time.Second, func() (bool, string) {
				return c.Checkpoint() >= sh.Last, fmt.Sprintf("catalog at %d, stream at %d", c.Checkpoint(), sh.Last)
			})
			lh, from, ok = c.LogHorizon()
			if !ok || from != 0 || lh.ID != sh.ID || lh.Kept != sh.Kept {
				t.Fatalf("caught up: log %+v from %d (ok %v), stream %+v", lh, from, ok, sh)
			}
			requireLogIsStream(t, c, s, lh, "caught up")
		})
	}
}

// publishChurn publishes n upserts and deletes of documents in four folders, some written
// many more times than the stream keeps events, each saying what it was before.
func publishChurn(t *testing.T, ctx context.Context, s *events.Stream, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(8, 8))
	prev := map[string]*events.Event{}
	for i := range n {
		path := fmt.Sprintf("f%d/d%02d.md", r.IntN(4), r.IntN(25))
		if r.IntN(3) == 0 {
			path = "f0/often.md"
		}
		e := &events.Event{Op: events.OpUpsert, Project: "p", Path: path}
		if r.IntN(6) == 0 {
			e.Op = events.OpDelete
		} else {
			c := fmt.Appendf(nil, "# %s\n\nversion %d\n", path, i)
			e.Size, e.Mtime, e.Hash, e.Status, e.Content, e.Inode = int64(len(c)), time.Unix(int64(i), 0).UTC(), events.HashContent(c), events.StatusOK, c, uint64(i%7)
		}
		if p := prev[path]; p != nil {
			e.PrevSeq = p.Seq
			e.Prev = &events.Prev{Op: p.Op, Size: p.Size, Hash: p.Hash, Status: p.Status, Inode: p.Inode}
		}
		seq, err := s.PublishSync(ctx, e)
		testkit.NoErr(t, err, "publish")
		e.Seq, e.Content = seq, nil
		prev[path] = e
	}
}

// requireLogIsStream compares the catalog's log with the stream's Window up to h.Last,
// for every cursor and folder.
func requireLogIsStream(t *testing.T, c *projection.Catalog, s *events.Stream, h events.Horizon, what string) {
	t.Helper()
	ctx := testkit.Context(t)
	for after := uint64(0); after <= h.Last; after += 1 + after/40 {
		for _, folder := range []string{"", "f0", "f3"} {
			want, wantUpTo, wantComplete, err := s.Window(ctx, h, "p", folder, after, 1<<20)
			testkit.NoErr(t, err, what+": the stream's window")
			got, upTo, complete, err := c.LogWindow(ctx, h, "p", folder, after, 1<<20)
			testkit.NoErr(t, err, what+": the log's window")
			for i := range want {
				if len(want[i].Content) == 0 {
					want[i].Content = nil
				}
			}
			if len(got) == 0 && len(want) == 0 {
				got, want = nil, nil
			}
			if !reflect.DeepEqual(got, want) || upTo != wantUpTo || complete != wantComplete {
				t.Fatalf("%s: after %d, folder %q, up to %d: the log has %d events up to %d, the stream %d up to %d\n got %+v\nwant %+v",
					what, after, folder, h.Last, len(got), upTo, len(want), wantUpTo, got, want)
			}
		}
	}
}

// logKillChild follows the stream into the catalog, in batches of a few events, and
// stops, waiting to be killed, in the transaction of the nth batch.
func logKillChild(t *testing.T, spec string) {
	parts := strings.Split(spec, "|")
	nth, _ := strconv.Atoi(parts[2])
	nc, err := nats.Connect(parts[1])
	testkit.NoErr(t, err, "connect")
	s := &events.Stream{Conn: nc}
	testkit.NoErr(t, s.Bind(context.Background()), "bind")
	quiet := slog.New(slog.DiscardHandler)
	c := &projection.Catalog{Dir: parts[0], Logger: quiet}
	seen := 0
	c.SetAfterBodyStep(func(step string) {
		if step != "bodies written" {
			return
		}
		if seen++; seen == nth {
			fmt.Println("reached")
			select {} // killed here
		}
	})
	testkit.NoErr(t, c.Open(), "open")
	r := &projection.Runner{Stream: s, Project: "p", Projections: []projection.Projection{c}, MaxBatch: 7, Logger: quiet}
	_ = r.Run(context.Background())
	select {}
}
