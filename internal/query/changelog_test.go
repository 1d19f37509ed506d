package query_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// changeLog is a change log over an in-memory history: it holds every event above from
// up to last (the sequence its catalog applied), and counts the windows it answers.
type changeLog struct {
	h          *history
	from, last uint64
	id         string
	kept       int64
	broken     bool
	windows    int
	wrong      []string // windows asked for that the log does not answer for
}

func (l *changeLog) LogHorizon() (events.Horizon, uint64, bool) {
	return events.Horizon{Last: l.last, Kept: l.kept, ID: l.id}, l.from, true
}

func (l *changeLog) LogWindow(ctx context.Context, h events.Horizon, project, folder string, after uint64, limit int) ([]events.Event, uint64, bool, error) {
	if l.broken {
		return nil, 0, false, errors.New("damaged")
	}
	if after < l.from || h.Last > l.last || after > h.Last {
		l.wrong = append(l.wrong, fmt.Sprintf("(%d, %d]", after, h.Last))
		return nil, 0, false, errors.New("asked for a window the log does not answer for")
	}
	l.windows++
	return l.h.Window(ctx, h, project, folder, after, limit)
}

// TestChangesReadsTheLog: with a change log, changes reads the events after the cursor
// from it whenever it answers for them, and its answer goes up to what the log holds, its
// cursor exact; from the stream when the cursor is before the log's start or past what
// it holds, when the log follows another stream or keeps another number of events of each
// document, and when it fails. The answers are the same either way.
func TestChangesReadsTheLog(t *testing.T) {
	ctx := context.Background()
	h, cursor := sampleHistory(true)
	atCursor, _, _ := parseSeq(t, cursor)
	whole, qerr := query.Changes(ctx, h, query.ChangesArgs{Cursor: cursor, Diff: true}, query.Limits{})
	if qerr != nil {
		t.Fatal(qerr)
	}
	for _, tc := range []struct {
		name    string
		log     changeLog
		args    query.ChangesArgs
		fromLog bool
		cursor  string // the answer's; "" for the stream's end
	}{
		{"LogHoldsTheWindow", changeLog{from: 0, last: h.last}, query.ChangesArgs{Cursor: cursor, Diff: true}, true, ""},
		{"LogStartsAtTheCursor", changeLog{from: atCursor, last: h.last}, query.ChangesArgs{Cursor: cursor, Diff: true}, true, ""},
		{"LogStartsAfterTheCursor", changeLog{from: atCursor + 1, last: h.last}, query.ChangesArgs{Cursor: cursor, Diff: true}, false, ""},
		{"LogAheadOfTheStreamAsRead", changeLog{from: 0, last: h.last + 5}, query.ChangesArgs{Cursor: cursor, Diff: true}, true, ""},
		{"StreamAheadOfTheLog", changeLog{from: 0, last: h.last - 2}, query.ChangesArgs{Cursor: cursor}, true, query.Cursor(h.last-2, "GUIDE@1")},
		{"CursorPastTheLog", changeLog{from: 0, last: atCursor - 1}, query.ChangesArgs{Cursor: cursor, Diff: true}, false, ""},
		{"SinceNowIsTheLogsEnd", changeLog{from: 0, last: h.last - 2}, query.ChangesArgs{Since: "now"}, true, query.Cursor(h.last-2, "GUIDE@1")},
		{"LogOfAnotherStream", changeLog{from: 0, last: h.last, id: "GUIDE@0"}, query.ChangesArgs{Cursor: cursor, Diff: true}, false, ""},
		{"LogKeepsAnotherNumber", changeLog{from: 0, last: h.last, kept: 4}, query.ChangesArgs{Cursor: cursor, Diff: true}, false, ""},
		{"LogFails", changeLog{from: 0, last: h.last, broken: true}, query.ChangesArgs{Cursor: cursor, Diff: true}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.log
			l.h = h
			if l.id == "" {
				l.id = "GUIDE@1"
			}
			if l.kept == 0 {
				l.kept = int64(h.kept)
			}
			v, qerr := query.Changes(ctx, query.WithLog(h, &l), tc.args, query.Limits{})
			if qerr != nil {
				t.Fatal(qerr)
			}
			if len(l.wrong) > 0 {
				t.Fatalf("the log was asked for windows it does not hold: %v", l.wrong)
			}
			testkit.Equal(t, l.windows > 0, tc.fromLog, "read from the log")
			want := tc.cursor
			if want == "" {
				want = query.Cursor(h.last, "GUIDE@1")
			}
			testkit.Equal(t, v.Cursor, want, "cursor")
			if tc.args.Cursor == cursor && tc.cursor == "" {
				testkit.Equal(t, *v, *whole, "the answer")
			}
		})
	}
}

// parseSeq reads the sequence of a cursor.
func parseSeq(t *testing.T, c string) (uint64, string, bool) {
	t.Helper()
	var seq uint64
	var tag string
	for i := range len(c) {
		if c[i] == '.' {
			tag = c[i+1:]
			break
		}
		seq = seq*10 + uint64(c[i]-'0')
	}
	return seq, tag, tag != ""
}
