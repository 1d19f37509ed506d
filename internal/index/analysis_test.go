package index

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/schema"
)

// TestLocationsKeepPositionsOnly: the fields with term vectors keep each occurrence's
// position, what phrases and proximity read, and no byte offsets, which nothing reads
// (a hit's matches are found again in its text) and which took two varints a location.
func TestLocationsKeepPositionsOnly(t *testing.T) {
	x := emptyIndex(t, "loc", 0)
	c := []byte("# ParseHeader notes\n\nAlpha beta, gamma alpha. 中华人民 alpha\n")
	noErr(t, x.Apply(events.Batch{Events: []events.Event{{Op: events.OpUpsert, Project: "loc", Path: "alphaBeta.md",
		Status: events.StatusOK, Content: c, Size: int64(len(c)), Hash: events.HashContent(c), Seq: 1}}}), "apply")

	adv, err := x.idx.Advanced()
	noErr(t, err, "advanced")
	r, err := adv.Reader()
	noErr(t, err, "reader")
	defer r.Close()
	for _, tc := range []struct {
		field, term string
		want        []uint64 // positions
	}{
		{schema.Content, "alpha", []uint64{3, 6, 8}}, // after "ParseHeader notes", the CJK run a word
		{schema.Content, "gamma", []uint64{5}},
		{schema.Title, "header", []uint64{1}}, // a camel-case part, at its word's position
		{schema.Name, "alphabeta", []uint64{1}},
		{schema.ContentCJK, "华人", []uint64{2}},
	} {
		tfr, err := r.TermFieldReader(context.Background(), []byte(tc.term), tc.field, true, true, true)
		noErr(t, err, "term field reader")
		tfd, err := tfr.Next(nil)
		noErr(t, err, "next")
		if tfd == nil {
			t.Fatalf("%s:%s: no posting", tc.field, tc.term)
		}
		var pos []uint64
		for _, v := range tfd.Vectors {
			pos = append(pos, v.Pos)
			if v.Start != 0 || v.End != 0 {
				t.Errorf("%s:%s at %d keeps offsets %d–%d", tc.field, tc.term, v.Pos, v.Start, v.End)
			}
		}
		slices.Sort(pos)
		if fmt.Sprint(pos) != fmt.Sprint(tc.want) {
			t.Errorf("%s:%s: positions %v, want %v", tc.field, tc.term, pos, tc.want)
		}
		_ = tfr.Close()
	}
}
