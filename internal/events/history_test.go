package events_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// TestWindowReadsTheFoldersEventsUpToTheHorizon: Window returns, in order and without
// content, the events of the project's documents below the folder that lie between the
// cursor and the horizon: not another project's, not a session's, not one stored after the
// horizon was read; a limit ends the window just before the first event left out, and the
// next window goes on from there.
func TestWindowReadsTheFoldersEventsUpToTheHorizon(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	ctx := testkit.Context(t)
	pub := s.Publisher()
	put := func(project, session, path string) {
		c := []byte("text of " + path)
		testkit.NoErr(t, pub.Publish(ctx, &events.Event{Op: events.OpUpsert, Project: project, Session: session, Path: path,
			Size: int64(len(c)), Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}), "publish")
		_, err := pub.Flush(ctx)
		testkit.NoErr(t, err, "flush")
	}
	put("p", "", "a/1.md")        // 1
	put("p", "", "a/2.md")        // 2
	put("p", "", "a/3.md")        // 3
	put("p", "", "b/1.md")        // 4
	put("q", "", "a/9.md")        // 5: another project
	put("p", "tok", "a/notes.md") // 6: a session's document
	put("p", "", "a/4.md")        // 7
	h, err := s.Horizon(ctx)
	testkit.NoErr(t, err, "horizon")
	testkit.Equal(t, h.Last, uint64(7), "last sequence")
	put("p", "", "a/5.md") // 8: after the horizon

	type window struct {
		Paths    string
		UpTo     uint64
		Complete bool
	}
	read := func(folder string, after uint64, limit int) window {
		t.Helper()
		evs, upTo, complete, err := s.Window(ctx, h, "p", folder, after, limit)
		testkit.NoErr(t, err, "window")
		w := window{UpTo: upTo, Complete: complete}
		for _, e := range evs {
			if e.Content != nil || e.Time.IsZero() || e.Project != "p" {
				t.Errorf("event %d: content %q, time %v, project %q", e.Seq, e.Content, e.Time, e.Project)
			}
			w.Paths += fmt.Sprintf("%d:%s ", e.Seq, e.Path)
		}
		return w
	}
	for _, c := range []struct {
		folder string
		after  uint64
		limit  int
		want   window
	}{
		{"", 0, 100, window{"1:a/1.md 2:a/2.md 3:a/3.md 4:b/1.md 7:a/4.md ", 7, true}},
		{"a", 0, 100, window{"1:a/1.md 2:a/2.md 3:a/3.md 7:a/4.md ", 7, true}},
		{"b", 4, 100, window{"", 7, true}},
		{"", 0, 2, window{"1:a/1.md 2:a/2.md ", 2, false}},
		{"", 2, 2, window{"3:a/3.md 4:b/1.md ", 6, false}}, // 5 and 6 are not of the window
		{"a", 3, 1, window{"7:a/4.md ", 7, true}},
		{"", 4, 1, window{"7:a/4.md ", 7, true}},
		{"a", 0, 3, window{"1:a/1.md 2:a/2.md 3:a/3.md ", 6, false}},
		{"", 7, 10, window{"", 7, true}},
		{"", 9, 10, window{"", 9, true}},
	} {
		testkit.Equal(t, read(c.folder, c.after, c.limit), c.want, fmt.Sprintf("window of %q after %d, limit %d", c.folder, c.after, c.limit))
	}
}
