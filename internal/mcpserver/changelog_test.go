package mcpserver_test

import (
	"fmt"
	"math/rand/v2"
	"path"
	"reflect"
	"slices"
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// TestChangeLogEqualsTheStream: random file operations (create, write, rename, delete,
// folder moves), and after each few of them, for random cursors, folders (of now and of
// before, and the whole project) and limits, the catalog's change log returns what the
// stream's Window returns: the same events, every field of each, the same end and the same
// completeness. The operations write some documents more times than the stream keeps
// events, so that its retention is tested too.
func TestChangeLogEqualsTheStream(t *testing.T) {
	root := t.TempDir()
	p := testkit.NewPipeline(t, nil, root, "")
	r := rand.New(rand.NewPCG(11, 5))
	c := &churn{t: t, r: r, root: root}
	ctx := testkit.Context(t)
	folders := map[string]bool{"": true}
	windows := 0
	for step := range 80 {
		for range 1 + r.IntN(4) {
			c.step()
		}
		if step%5 == 1 {
			// Other statuses than ok, with a reason: binary content, then text again.
			if files := c.files(); len(files) > 0 {
				testkit.WriteFile(t, root, files[r.IntN(len(files))], fmt.Sprintf("\x00binary %d\n", step))
			}
		}
		if step%7 == 3 {
			// The same file written again and again: more events than the stream keeps.
			if files := c.files(); len(files) > 0 {
				f := files[r.IntN(len(files))]
				for i := range 2 + r.IntN(4) {
					testkit.WriteFile(t, root, f, fmt.Sprintf("# Again %d %d\n", step, i))
					p.Reconcile()
				}
			}
		}
		p.Reconcile()
		for _, f := range c.folders() {
			folders[f] = true
			folders[path.Dir(f)] = true
		}
		lh, from, ok := p.Catalog.LogHorizon()
		if !ok || from != 0 {
			t.Fatalf("step %d: the catalog keeps no change log from the stream's start (ok %v, from %d)", step, ok, from)
		}
		sh, err := p.Stream.Horizon(ctx)
		testkit.NoErr(t, err, "horizon")
		if lh.Last != sh.Last || lh.ID != sh.ID || lh.Kept != sh.Kept {
			t.Fatalf("step %d: the log's horizon %+v, the stream's %+v", step, lh, sh)
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for f := range folders {
				if f != "." && !yield(f) {
					return
				}
			}
		})
		for range 6 {
			after := r.Uint64N(lh.Last + 1)
			folder := names[r.IntN(len(names))]
			limit := 1 + r.IntN(int(lh.Last)+1)
			what := fmt.Sprintf("step %d, after %d, folder %q, limit %d", step, after, folder, limit)
			want, wantUpTo, wantComplete, err := p.Stream.Window(ctx, lh, p.Project, folder, after, limit)
			testkit.NoErr(t, err, what+": the stream's window")
			got, upTo, complete, err := p.Catalog.LogWindow(ctx, lh, p.Project, folder, after, limit)
			testkit.NoErr(t, err, what+": the log's window")
			requireSameEvents(t, got, want, what)
			if upTo != wantUpTo || complete != wantComplete {
				t.Fatalf("%s: the log's window ends at %d (complete %v), the stream's at %d (complete %v)", what, upTo, complete, wantUpTo, wantComplete)
			}
			windows++
		}
	}
	// The stream let go of some documents' earliest events: the log did too.
	all, _, _, err := p.Catalog.LogWindow(ctx, events.Horizon{Last: p.Catalog.Checkpoint()}, p.Project, "", 0, 1<<20)
	testkit.NoErr(t, err, "the whole log")
	kept := map[uint64]bool{}
	for _, e := range all {
		kept[e.Seq] = true
	}
	dropped := 0
	for _, e := range all {
		if e.PrevSeq != 0 && !kept[e.PrevSeq] {
			dropped++
		}
	}
	if dropped == 0 {
		t.Fatal("no document changed more times than the stream keeps events: the retention was not tested")
	}
	if reps := p.Catalog.Repairs(); len(reps) > 0 {
		t.Fatalf("the catalog was repaired: %+v", reps)
	}
	t.Logf("%d windows compared, %d log entries, %d of them after an event no longer kept", windows, len(all), dropped)
}

// requireSameEvents fails when two windows' events differ, naming the first difference.
func requireSameEvents(t *testing.T, got, want []events.Event, what string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) {
			t.Fatalf("%s: the log has %d events, the stream %d; the first one only one has: %+v", what, len(got), len(want),
				append(got[min(i, len(got)):], want[min(i, len(want)):]...)[0])
		}
		g, w := got[i], want[i]
		if len(w.Content) == 0 {
			w.Content = nil // headers only
		}
		if !reflect.DeepEqual(g, w) || !g.Time.Equal(w.Time) {
			t.Fatalf("%s: event %d:\nlog    %+v (prev %+v)\nstream %+v (prev %+v)", what, i, g, g.Prev, w, w.Prev)
		}
	}
}
