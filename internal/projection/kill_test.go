package projection

import (
	"bufio"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
)

// killHistory is a stream of upserts and deletes over a few paths, with contents shared
// between paths and replaced often, so that the body file gains dead bytes and compacts.
func killHistory() []events.Batch {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := make([]string, 40)
	for i := range pool {
		var b strings.Builder
		fmt.Fprintf(&b, "# Body %d\n\n", i)
		for range 50 + rng.IntN(200) {
			fmt.Fprintf(&b, "word%d ", rng.IntN(5000))
		}
		pool[i] = b.String()
	}
	var out []events.Batch
	seq := uint64(0)
	for range 60 {
		var b events.Batch
		for range 1 + rng.IntN(25) {
			seq++
			p := fmt.Sprintf("d%d/%02d.md", rng.IntN(3), rng.IntN(30))
			if rng.IntN(8) == 0 {
				b.Events = append(b.Events, events.Event{Op: events.OpDelete, Project: "p", Path: p, Seq: seq})
				continue
			}
			content := []byte(pool[rng.IntN(len(pool))])
			if rng.IntN(3) > 0 { // an edit: a body of its own; else one shared with other paths
				content = fmt.Appendf(content, "\nedit %d\n", seq)
			}
			b.Events = append(b.Events, events.Event{Op: events.OpUpsert, Project: "p", Path: p, Size: int64(len(content)),
				Mtime: time.Unix(int64(seq), 0).UTC(), Hash: events.HashContent(content), Status: events.StatusOK,
				Content: content, Seq: seq})
		}
		out = append(out, b)
	}
	return out
}

// expectedAt is every path's content once the events up to seq are applied.
func expectedAt(h []events.Batch, seq uint64) map[string]string {
	m := map[string]string{}
	for _, b := range h {
		for _, e := range b.Events {
			if e.Seq > seq {
				return m
			}
			if e.Op == events.OpDelete {
				delete(m, e.Path)
			} else {
				m[e.Path] = string(e.Content)
			}
		}
	}
	return m
}

// applyFrom applies the batches the catalog has not applied yet.
func applyFrom(t testing.TB, c *Catalog, h []events.Batch) {
	for _, b := range h {
		if err := c.Apply(b); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
}

// requireHolds fails unless the catalog holds exactly the history up to its checkpoint,
// every body readable, and a body file of the length its records account for.
// readBodies reads the body of every document of a snapshot, each checked against its hash.
func readBodies(s *Snapshot) (map[string]string, error) {
	out := map[string]string{}
	for p, d := range s.c.docs {
		b, err := s.Content(d)
		if err != nil {
			return nil, err
		}
		if events.HashContent(b) != d.Hash {
			return nil, fmt.Errorf("%s: the body read does not match its hash", p)
		}
		out[p] = string(b)
	}
	return out, nil
}

func requireHolds(t *testing.T, c *Catalog, h []events.Batch, what string) {
	t.Helper()
	want := expectedAt(h, c.Checkpoint())
	var got map[string]string
	err := c.Read(func(s *Snapshot) (err error) {
		got, err = readBodies(s)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d documents at seq %d, want %d", what, len(got), c.Checkpoint(), len(want))
	}
	for p, w := range want {
		if got[p] != w {
			t.Fatalf("%s: %s at seq %d holds another body than the history's", what, p, c.Checkpoint())
		}
	}
	body := bodyNow(c)
	files, _ := filepath.Glob(filepath.Join(c.Dir, "bodies.*"))
	if len(files) != 1 || filepath.Base(files[0]) != bodyFileName(body.gen) {
		t.Fatalf("%s: body files %v, want only %s", what, files, bodyFileName(body.gen))
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Size() != body.end {
		t.Fatalf("%s: body file of %v bytes (%v), the records account for %d", what, fi.Size(), err, body.end)
	}
}

// bodyNow is the body file's state, once the garbage collection an open starts is done.
func bodyNow(c *Catalog) bodyState {
	c.applying.Lock()
	defer c.applying.Unlock()
	return c.body
}

const killChildEnv = "GUIDE_CATALOG_KILL_CHILD"

// TestCatalogKilledWhileWritingBodies kills a process applying batches (SIGKILL) at each
// step of writing bodies — appended and not yet committed, a compaction's new file written
// and not committed, committed and the old file not yet removed — and reopens the catalog:
// it holds the history up to its checkpoint, every body readable, and catches up from there.
func TestCatalogKilledWhileWritingBodies(t *testing.T) {
	h := killHistory()
	if spec := os.Getenv(killChildEnv); spec != "" {
		killChild(t, h, spec)
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, step := range []string{"bodies written", "compaction written", "compaction committed"} {
		for _, nth := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/%d", strings.ReplaceAll(step, " ", "_"), nth), func(t *testing.T) {
				dir := t.TempDir()
				cmd := exec.Command(os.Args[0], "-test.run=^TestCatalogKilledWhileWritingBodies$")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", killChildEnv, dir, step, nth))
				out, err := cmd.StdoutPipe()
				noErr(t, err, "pipe")
				cmd.Stderr = os.Stderr
				noErr(t, cmd.Start(), "start the child")
				reached := false
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if sc.Text() == "reached "+step {
						reached = true
						break
					}
					if sc.Text() == "applied everything" {
						break
					}
				}
				noErr(t, cmd.Process.Kill(), "kill the child")
				_ = cmd.Wait()
				if !reached {
					t.Fatalf("the child never reached %q %d times", step, nth)
				}
				c := &Catalog{Dir: dir, Logger: slog.New(slog.DiscardHandler)}
				noErr(t, c.Open(), "reopen")
				if _, err := os.Stat(filepath.Join(dir, "catalog.db.broken")); err == nil {
					t.Fatal("the catalog was found unreadable and rebuilt, not recovered")
				}
				if c.Checkpoint() == 0 && !(step == "bodies written" && nth == 1) {
					t.Fatal("the catalog lost the batches applied before the kill")
				}
				requireHolds(t, c, h, "after the kill")
				applyFrom(t, c, h)
				requireHolds(t, c, h, "caught up")
				noErr(t, c.Close(), "close")
				c = &Catalog{Dir: dir, Logger: slog.New(slog.DiscardHandler)}
				noErr(t, c.Open(), "reopen")
				defer c.Close()
				requireHolds(t, c, h, "reopened")
			})
		}
	}
}

// killChild applies the history and stops, waiting to be killed, at the nth time it
// reaches the step the spec names.
func killChild(t *testing.T, h []events.Batch, spec string) {
	parts := strings.Split(spec, "|")
	nth, _ := strconv.Atoi(parts[2])
	seen := 0
	c := &Catalog{Dir: parts[0], Logger: slog.New(slog.DiscardHandler), compactMinDead: 1,
		afterBodyStep: func(step string) {
			if step != parts[1] {
				return
			}
			if seen++; seen == nth {
				fmt.Printf("reached %s\n", step)
				select {} // killed here
			}
		}}
	noErr(t, c.Open(), "open")
	applyFrom(t, c, h)
	fmt.Println("applied everything")
	select {}
}

// TestCatalogReadsWhileCompacting: readers see every body of their snapshot while batches
// are applied, the body file compacts underneath them and the mapped pages are released.
func TestCatalogReadsWhileCompacting(t *testing.T) {
	h := killHistory()
	c := &Catalog{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), compactMinDead: 1}
	noErr(t, c.Open(), "open")
	defer c.Close()
	done := make(chan struct{})
	failed := make(chan error, 1)
	go func() {
		defer close(failed)
		for {
			select {
			case <-done:
				return
			default:
			}
			err := c.Read(func(s *Snapshot) error {
				_, err := readBodies(s)
				return err
			})
			if err != nil {
				failed <- err
				return
			}
			c.Release() // the mapped pages handed back while the writer grows the file
		}
	}()
	gens := bodyNow(c).gen
	applyFrom(t, c, h)
	close(done)
	noErr(t, <-failed, "read while compacting")
	if n := bodyNow(c).gen - gens; n < 2 {
		t.Fatalf("the body file compacted %d times, want a few", n)
	}
	requireHolds(t, c, h, "caught up")
}
