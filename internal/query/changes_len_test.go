package query_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/query"
)

// TestChangeLengthIsItsJSON: the length changes counts for an entry, to cut an answer at
// its bound, is the length of the entry's JSON, for any text in its fields: escaped bytes,
// HTML's, invalid UTF-8, line separators, and every field present or absent.
func TestChangeLengthIsItsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"", "a", "docs/read me.md", "é", "日本", "\"", "\\", "<", ">", "&", "\n", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"\xff", "\xe2\x80", "\u2028", "\u2029", "\ufffd", "💡", "%", "/"}
	text := func() string {
		s := ""
		for range r.IntN(6) {
			s += pieces[r.IntN(len(pieces))]
		}
		return s
	}
	size := func() *int64 {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			v := -r.Int64()
			return &v
		}
		v := r.Int64N(1 << uint(r.IntN(62)+1))
		return &v
	}
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("", -7*3600)}
	for i := range 20000 {
		c := query.Change{Kind: text(), Path: text(), From: text(), SizeBefore: size(), SizeAfter: size(),
			Status: events.Status(text()), BeforeUnknown: r.IntN(2) == 0, Diff: text(), DiffNote: text(),
			Time: time.Unix(r.Int64N(1<<35), r.Int64N(1e9)*int64(r.IntN(2))).In(zones[r.IntN(len(zones))])}
		if i%1000 == 0 {
			c.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) // json.Marshal fails on it
		}
		b, _ := json.Marshal(c)
		if got := query.ChangeJSONLen(c); got != len(b) {
			t.Fatalf("length %d, JSON %d: %s", got, len(b), b)
		}
	}
}
