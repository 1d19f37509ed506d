package query_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// history is a stream's history in memory, keeping the last kept events of each document
// as the stream does: the query's side of changes, without a server.
type history struct {
	kept int
	// headers: events say what their document was before (the Guide-Prev-* headers), as
	// the indexer writes them; else changes reads the previous event.
	headers bool
	evs     []events.Event // in sequence order, evicted ones removed
	last    uint64
	t0      time.Time
}

func (h *history) add(e events.Event) uint64 {
	h.last++
	e.Seq, e.Time = h.last, h.t0.Add(time.Duration(h.last)*time.Minute)
	for i := len(h.evs) - 1; i >= 0; i-- {
		if p := h.evs[i]; p.Path == e.Path {
			e.PrevSeq = p.Seq
			if h.headers {
				e.Prev = &events.Prev{Op: p.Op, Size: p.Size, Hash: p.Hash, Status: p.Status}
			}
			break
		}
	}
	if e.Op == events.OpUpsert {
		e.Size, e.Hash = int64(len(e.Content)), events.HashContent(e.Content)
		if e.Status == "" {
			e.Status = events.StatusOK
		}
	}
	h.evs = append(h.evs, e)
	n := 0
	for i := len(h.evs) - 1; i >= 0; i-- {
		if h.evs[i].Path == e.Path {
			n++
			if n > h.kept {
				h.evs = append(h.evs[:i], h.evs[i+1:]...)
			}
		}
	}
	return h.last
}

func (h *history) put(p, content string) uint64 {
	return h.add(events.Event{Op: events.OpUpsert, Path: p, Content: []byte(content)})
}

func (h *history) del(p string) uint64 { return h.add(events.Event{Op: events.OpDelete, Path: p}) }

func (h *history) Horizon(context.Context) (events.Horizon, error) {
	return events.Horizon{Last: h.last, Kept: int64(h.kept), ID: "GUIDE@1"}, nil
}

func (h *history) Window(_ context.Context, hz events.Horizon, _, folder string, after uint64, limit int) ([]events.Event, uint64, bool, error) {
	var out []events.Event
	upTo := after
	for _, e := range h.evs {
		if e.Seq <= after || e.Seq > hz.Last || folder != "" && !strings.HasPrefix(e.Path, folder+"/") {
			continue
		}
		if len(out) == limit {
			return out, upTo, false, nil
		}
		e.Content = nil // headers only
		out, upTo = append(out, e), e.Seq
	}
	return out, hz.Last, true, nil
}

func (h *history) At(_ context.Context, _ string, seqs []uint64) (map[uint64]events.Event, error) {
	out := map[uint64]events.Event{}
	for _, seq := range seqs {
		for _, e := range h.evs {
			if e.Seq == seq {
				out[seq] = e
			}
		}
	}
	return out, nil
}

func (h *history) SeqAt(_ context.Context, hz events.Horizon, t time.Time) (uint64, error) {
	for _, e := range h.evs {
		if !e.Time.Before(t) {
			return e.Seq - 1, nil
		}
	}
	return hz.Last, nil
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// sampleHistory has one change of every kind after the cursor it returns.
func sampleHistory(headers bool) (*history, string) {
	h := &history{kept: 3, t0: t0, headers: headers}
	h.put("notes/plan.md", "# Plan\n\none\ntwo\nthree\nfour\nfive\nsix\nseven\n")
	h.put("drafts/chapter.md", "# Chapter\n\nIt was a dark night.\n")
	h.put("old.md", "# Old\n")
	h.put("often.md", "# Often 0\n")
	h.add(events.Event{Op: events.OpUpsert, Path: "image.png", Content: []byte("\x89PNG\x00"), Status: events.StatusBinary})
	cursor := query.Cursor(h.last, "GUIDE@1")
	h.put("notes/plan.md", "# Plan\n\none\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\n")
	h.del("drafts/chapter.md")
	h.put("book/chapter-1.md", "# Chapter\n\nIt was a dark night.\n")
	h.del("old.md")
	h.put("new.md", "# New\n")
	h.add(events.Event{Op: events.OpUpsert, Path: "image.png", Content: []byte("\x89PNG\x00\x01"), Status: events.StatusBinary})
	for i := range 4 { // one more than the stream keeps: the first after the cursor is gone
		h.put("often.md", fmt.Sprintf("# Often %d\n", i+1))
	}
	h.put("came-and-went.md", "# Brief\n")
	h.del("came-and-went.md")
	return h, cursor
}

// TestChangesGolden pins the answer as clients read it: one entry of every kind, a diff,
// a move, a document whose history is no longer kept, and the note that says so.
// The answer is the same whether the events say what their documents were before or
// changes reads the previous events.
func TestChangesGolden(t *testing.T) {
	for _, headers := range []bool{true, false} {
		t.Run(fmt.Sprintf("Headers%v", headers), func(t *testing.T) {
			h, cursor := sampleHistory(headers)
			v, qerr := query.Changes(context.Background(), h, query.ChangesArgs{Project: "p", Cursor: cursor, Diff: true}, query.Limits{})
			if qerr != nil {
				t.Fatal(qerr)
			}
			b, err := query.EncodeJSONIndent(v, "  ")
			testkit.NoErr(t, err, "encode")
			testkit.Golden(t, filepath.Join("testdata", "golden", "changes.json"), append(b, '\n'))
		})
	}
}

func TestChanges(t *testing.T) {
	ctx := context.Background()
	h, cursor := sampleHistory(false)
	kinds := func(v *query.ChangesView) []string {
		var out []string
		for _, c := range v.Changes {
			out = append(out, c.Kind+" "+c.Path)
		}
		return out
	}
	t.Run("PagesContinueWhereTheLimitStopped", func(t *testing.T) {
		var all []string
		c := cursor
		pages := 0
		for {
			v, qerr := query.Changes(ctx, h, query.ChangesArgs{Cursor: c, Limit: 2}, query.Limits{})
			if qerr != nil {
				t.Fatal(qerr)
			}
			pages++
			if len(v.Changes) > 2 || !v.Complete && !strings.Contains(v.Message, v.Cursor) {
				t.Fatalf("page %d: %d entries, message %q", pages, len(v.Changes), v.Message)
			}
			all = append(all, kinds(v)...)
			c = v.Cursor
			if v.Complete {
				break
			}
		}
		// The move's halves fall on two pages: there, it is a delete and an add.
		testkit.Equal(t, all, []string{"modified notes/plan.md", "deleted drafts/chapter.md", "added book/chapter-1.md",
			"deleted old.md", "added new.md", "modified image.png", "changed often.md"}, "pages, one after the other")
		if pages < 3 {
			t.Fatalf("%d pages", pages)
		}
	})
	t.Run("ResponseBoundCutsTheAnswer", func(t *testing.T) {
		big := &history{kept: 3, t0: t0}
		var lines []string
		for i := range 400 {
			lines = append(lines, fmt.Sprintf("line %d of a long document", i))
		}
		for i := range 6 {
			big.put(fmt.Sprintf("d%d.md", i), strings.Join(lines, "\n"))
		}
		from := query.Cursor(big.last, "GUIDE@1")
		for i := range 6 {
			big.put(fmt.Sprintf("d%d.md", i), strings.ToUpper(strings.Join(lines, "\n")))
		}
		lim := query.Limits{MaxChars: 20_000}
		v, qerr := query.Changes(ctx, big, query.ChangesArgs{Cursor: from, Diff: true}, lim)
		if qerr != nil {
			t.Fatal(qerr)
		}
		b, _ := query.EncodeJSON(v)
		if len(b) > lim.MaxChars || v.Complete || len(v.Changes) == 0 || !strings.Contains(v.Changes[0].DiffNote, "view(") {
			t.Fatalf("%d characters, complete %v, %d entries, note %q", len(b), v.Complete, len(v.Changes), v.Changes[0].DiffNote)
		}
		n := len(v.Changes)
		for !v.Complete {
			v, _ = query.Changes(ctx, big, query.ChangesArgs{Cursor: v.Cursor, Diff: true}, lim)
			n += len(v.Changes)
		}
		testkit.Equal(t, n, 6, "entries over all pages")
	})
	t.Run("SinceATime", func(t *testing.T) {
		now := t0.Add(time.Duration(h.last+1) * time.Minute)
		v, qerr := query.Changes(ctx, h, query.ChangesArgs{Since: "3m", Now: now}, query.Limits{})
		if qerr != nil {
			t.Fatal(qerr)
		}
		// The last three events: often.md's last write (its version before is kept),
		// came-and-went's two (nothing left).
		testkit.Equal(t, kinds(v), []string{"modified often.md"}, "changes of the last 3 minutes")
		v, _ = query.Changes(ctx, h, query.ChangesArgs{Since: "now", Now: now}, query.Limits{})
		testkit.Equal(t, len(v.Changes), 0, "changes since now")
		testkit.Equal(t, v.Cursor, query.Cursor(h.last, "GUIDE@1"), "cursor of now")
	})
	t.Run("Folder", func(t *testing.T) {
		v, _ := query.Changes(ctx, h, query.ChangesArgs{Cursor: cursor, Folder: "notes"}, query.Limits{})
		testkit.Equal(t, kinds(v), []string{"modified notes/plan.md"}, "below notes")
	})
	t.Run("CursorOfAnotherStream", func(t *testing.T) {
		v, qerr := query.Changes(ctx, h, query.ChangesArgs{Cursor: query.Cursor(3, "GUIDE@0")}, query.Limits{})
		if qerr != nil {
			t.Fatal(qerr)
		}
		if v.BeforeUnknown != len(v.Changes) || !strings.Contains(v.Message, "earlier stream") {
			t.Fatalf("%d of %d before_unknown, message %q", v.BeforeUnknown, len(v.Changes), v.Message)
		}
	})
	for _, tc := range []struct {
		name string
		args query.ChangesArgs
		want string
	}{
		{"ErrCursorAndSince", query.ChangesArgs{Cursor: cursor, Since: "1h"}, "not both"},
		{"ErrBadCursor", query.ChangesArgs{Cursor: "12"}, "is not one changes gave"},
		{"ErrBadSince", query.ChangesArgs{Since: "yesterday"}, "neither a time"},
		{"ErrLimit", query.ChangesArgs{Limit: query.MaxChangesLimit + 1}, "out of range"},
		{"ErrFolderOutsideRoot", query.ChangesArgs{Folder: "../x"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, qerr := query.Changes(ctx, h, tc.args, query.Limits{})
			if qerr == nil || !strings.Contains(qerr.Message, tc.want) {
				t.Fatalf("got %v, want an error saying %q", qerr, tc.want)
			}
		})
	}
}
