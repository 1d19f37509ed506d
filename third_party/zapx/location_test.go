package zap

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	seg "github.com/blevesearch/scorch_segment_api/v2"
)

// TestLocationSizes: a location without offsets or array positions takes two bytes while
// its field number and its distance from the previous one are small; the others keep
// everything upstream's encoding kept.
func TestLocationSizes(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		field, pos, prev, s, e uint64
		ap                     []uint64
		want                   int
	}{
		{"first word", 3, 1, 0, 0, 0, nil, 2},
		{"a later word", 3, 900, 850, 0, 0, nil, 2},
		{"a word far on", 3, 5000, 10, 0, 0, nil, 3},
		{"a composite's earlier field", 60, 2, 400, 0, 0, nil, 3},
		{"offsets", 3, 12, 0, 70, 75, nil, 5},
		{"array positions", 3, 12, 0, 0, 0, []uint64{1, 300}, 8},
	} {
		got := uvarintsLen(appendLocation(nil, tc.field, tc.pos, tc.prev, tc.s, tc.e, tc.ap))
		if got != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.name, got, tc.want)
		}
	}
}

// TestLocationsReadAsWritten builds segments of documents whose locations have every
// shape — positions only, offsets, array positions, positions far apart and going back
// (a composite field holds its fields' locations one field after another) — and reads
// every postings list back, from the segment built and from merges by copying postings
// and by re-encoding them (a deleted document forces the latter).
func TestLocationsReadAsWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	words := []string{"a", "b", "c", "d"}
	doc := func(id string, extra bool) *stubDocument {
		fields := []*stubField{newStubFieldSplitString("_id", nil, id, true, false, false)}
		names := []string{"plain", "offsets", "array"}
		if extra { // fields other than the other segments': merged by re-encoding
			names = append([]string{"extra"}, names...)
		}
		for f, name := range names {
			freqs := index.TokenFrequencies{}
			pos := 0
			for range 1 + rng.IntN(12) {
				pos += 1 + rng.IntN(3)
				if rng.IntN(10) == 0 {
					pos += rng.IntN(40000)
				}
				w := words[rng.IntN(len(words))]
				loc := &index.TokenLocation{Position: pos}
				switch names[f] {
				case "offsets":
					loc.Start = rng.IntN(100000)
					loc.End = loc.Start + rng.IntN(20)
				case "array":
					if rng.IntN(2) == 0 {
						loc.ArrayPositions = []uint64{uint64(rng.IntN(3)), uint64(rng.IntN(500))}
					}
				}
				tf := freqs[w]
				if tf == nil {
					tf = &index.TokenFreq{Term: []byte(w)}
					freqs[w] = tf
				}
				tf.Locations = append(tf.Locations, loc)
				tf.SetFrequency(len(tf.Locations))
			}
			fields = append(fields, &stubField{name: name, encodedType: 't',
				options: index.IndexField | index.IncludeTermVectors, analyzedLen: pos, analyzedFreqs: freqs})
		}
		return newStubDocument(id, fields, "_all")
	}
	var want [3]map[string][]string // segment → field/term → each document's locations
	var docs [3][]index.Document
	for s := range 3 {
		want[s] = map[string][]string{}
		for d := range 300 {
			sd := doc(fmt.Sprintf("s%dd%03d", s, d), s == 2)
			docs[s] = append(docs[s], sd)
			for _, f := range append(slices.Clone(sd.fields[1:]), sd.composite...) {
				for term, tf := range f.analyzedFreqs {
					var b strings.Builder
					fmt.Fprintf(&b, "%d:", d)
					for _, l := range tf.Locations {
						field := l.Field
						if field == "" {
							field = f.name
						}
						fmt.Fprintf(&b, " %s@%d[%d-%d]%v", field, l.Position, l.Start, l.End, l.ArrayPositions)
					}
					want[s][f.name+"/"+term] = append(want[s][f.name+"/"+term], b.String())
				}
			}
		}
	}
	read := func(t *testing.T, sb *SegmentBase, name string, num func(uint64) (int, uint64)) map[int]map[string][]string {
		got := map[int]map[string][]string{0: {}, 1: {}, 2: {}}
		for _, field := range []string{"plain", "offsets", "array", "extra", "_all"} {
			dict, err := sb.Dictionary(field)
			if err != nil {
				t.Fatal(err)
			}
			for _, term := range words {
				pl, err := dict.PostingsList([]byte(term), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				it := pl.Iterator(true, true, true, nil)
				for p, err := it.Next(); p != nil || err != nil; p, err = it.Next() {
					if err != nil {
						t.Fatalf("%s %s/%s: %v", name, field, term, err)
					}
					s, d := num(p.Number())
					var b strings.Builder
					fmt.Fprintf(&b, "%d:", d)
					for _, l := range p.Locations() {
						var ap []uint64
						if len(l.ArrayPositions()) > 0 {
							ap = l.ArrayPositions()
						}
						fmt.Fprintf(&b, " %s@%d[%d-%d]%v", l.Field(), l.Pos(), l.Start(), l.End(), ap)
					}
					got[s][field+"/"+term] = append(got[s][field+"/"+term], b.String())
				}
			}
		}
		return got
	}
	compare := func(t *testing.T, name string, got, want map[string][]string) {
		t.Helper()
		for k, w := range want {
			if g := got[k]; !slices.Equal(g, w) {
				t.Fatalf("%s %s: read\n%v\nwritten\n%v", name, k, g, w)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d postings lists read, %d written", name, len(got), len(want))
		}
	}

	dir := t.TempDir()
	var segs []seg.Segment
	for s := range 3 {
		for _, mode := range []uint32{16, DefaultChunkMode} {
			built, _, err := zapPlugin.newWithChunkMode(docs[s], mode, nil)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("segment %d, chunk mode %d", s, mode)
			got := read(t, built.(*SegmentBase), name, func(n uint64) (int, uint64) { return s, n })
			compare(t, name, got[s], want[s])
		}
		built, _, err := zapPlugin.New(docs[s])
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("%d.zap", s))
		if err := PersistSegmentBase(built.(*SegmentBase), path); err != nil {
			t.Fatal(err)
		}
		opened, err := zapPlugin.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer opened.Close()
		segs = append(segs, opened)
	}
	// The same fields: postings copied. Another field in the second: re-encoded.
	for _, pair := range [][2]int{{0, 1}, {0, 2}} {
		for _, drop := range []bool{false, true} {
			drops := []*roaring.Bitmap{nil, nil}
			if drop {
				drops[1] = roaring.BitmapOf(299)
			}
			path := filepath.Join(dir, fmt.Sprintf("merged-%v-%v.zap", pair, drop))
			newNums, _, err := zapPlugin.Merge([]seg.Segment{segs[pair[0]], segs[pair[1]]}, drops, path, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			merged, err := zapPlugin.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer merged.Close()
			old := map[uint64][2]uint64{}
			for i, nums := range newNums {
				for d, n := range nums {
					old[n] = [2]uint64{uint64(pair[i]), uint64(d)}
				}
			}
			name := fmt.Sprintf("segments %v merged, deleted %v", pair, drop)
			got := read(t, &merged.(*Segment).SegmentBase, name, func(n uint64) (int, uint64) { return int(old[n][0]), old[n][1] })
			compare(t, name+", first", got[pair[0]], want[pair[0]])
			w := want[pair[1]]
			if drop {
				w = map[string][]string{}
				for k, v := range want[pair[1]] {
					v = slices.DeleteFunc(slices.Clone(v), func(s string) bool { return strings.HasPrefix(s, "299:") })
					if len(v) > 0 {
						w[k] = v
					}
				}
			}
			compare(t, name+", second", got[pair[1]], w)
		}
	}
}
