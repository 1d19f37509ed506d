package segment

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"

	api "github.com/blevesearch/scorch_segment_api/v2"
)

// segmentFile returns the bytes of a segment file of n random documents.
func segmentFile(t testing.TB, n int) []byte {
	t.Helper()
	s, err := build(analyzedDocs(t, 11, n))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "seg")
	if err := s.persist(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openBytes writes b to a file and opens it; a segment opened is read through.
func openBytes(t testing.TB, b []byte) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seg")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	return readAll(s)
}

// readAll reads every term's postings of every field, and every identifier.
func readAll(s *Segment) error {
	for d := range s.Count() {
		if _, err := s.DocID(d); err != nil {
			return err
		}
	}
	for _, f := range s.Fields() {
		d, err := s.dictionary(f)
		if err != nil {
			return err
		}
		it := d.AutomatonIterator(nil, nil, nil)
		for {
			e, err := it.Next()
			if err != nil {
				return err
			}
			if e == nil {
				break
			}
			pl, err := d.postingsList([]byte(e.Term), nil, nil)
			if err != nil {
				return err
			}
			pi := pl.iterator(true, true, nil)
			for {
				p, err := pi.next()
				if err != nil {
					return err
				}
				if p == nil {
					break
				}
				_, _, _ = pi.Impacts(p.doc, nil)
			}
		}
	}
	return nil
}

// TestOpenRefusesDamage: a segment file cut short anywhere, or with any byte changed, is
// refused when opened, with ErrDamaged.
func TestOpenRefusesDamage(t *testing.T) {
	b := segmentFile(t, 60)
	if err := openBytes(t, b); err != nil {
		t.Fatalf("intact: %v", err)
	}
	step := max(1, len(b)/400)
	for n := 0; n < len(b); n += step {
		if err := openBytes(t, b[:n]); !errors.Is(err, ErrDamaged) {
			t.Fatalf("cut to %d of %d bytes: %v", n, len(b), err)
		}
	}
	for i := 0; i < len(b); i += step {
		c := append([]byte(nil), b...)
		c[i] ^= 0x5a
		if err := openBytes(t, c); !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrVersion) {
			t.Fatalf("byte %d of %d changed: %v", i, len(b), err)
		}
	}
}

// TestOpenRefusesOtherVersions: a file of another format version is refused with
// ErrVersion, and a file of zap's with ErrDamaged.
func TestOpenRefusesOtherVersions(t *testing.T) {
	b := segmentFile(t, 10)
	f := b[len(b)-footerSize:]
	binary.LittleEndian.PutUint32(f[16:], FormatVersion+1)
	binary.LittleEndian.PutUint32(f[20:], crc32.Checksum(f[:20], castagnoli))
	if err := openBytes(t, b); !errors.Is(err, ErrVersion) {
		t.Fatalf("version %d: %v", FormatVersion+1, err)
	}

	_, z := buildBoth(t, analyzedDocs(t, 12, 10))
	path := filepath.Join(t.TempDir(), "zap")
	if err := z.(api.UnpersistedSegment).Persist(path); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Plugin{}).Open(path); !errors.Is(err, ErrDamaged) {
		t.Fatalf("zap's file: %v", err)
	}
}

// FuzzOpen: whatever the bytes, Open returns an error or a segment that reads through,
// and never panics.
func FuzzOpen(f *testing.F) {
	b := segmentFile(f, 20)
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(b[len(b)/3:])
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = openBytes(t, b)
	})
}

// TestDocNumbers: the numbers of the documents of the identifiers asked for, those before
// the segment's first identifier and after its last included.
func TestDocNumbers(t *testing.T) {
	var docs []index.Document
	for _, id := range []string{"m/2", "c/1", "x/9", "m/1"} {
		d := document.NewDocument(id)
		d.AddIDField()
		d.VisitFields(func(f index.Field) { f.Analyze() })
		docs = append(docs, d)
	}
	s, err := build(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ids  []string
		want []uint32
	}{
		{[]string{"a", "c/1", "m/1", "x/9", "z"}, []uint32{1, 2, 3}},
		{[]string{"c/0", "m/3", "x/90"}, nil},
		{[]string{"m/2"}, []uint32{0}},
		{nil, nil},
	} {
		bm, err := s.DocNumbers(c.ids)
		if err != nil {
			t.Fatal(err)
		}
		if got := bm.ToArray(); !slices.Equal(got, c.want) {
			t.Errorf("DocNumbers(%q) = %v, want %v", c.ids, got, c.want)
		}
	}
}

// mappedResident is how much of the mapping of the file at path is resident in this
// process (the Rss of its lines in /proc/self/smaps), in kilobytes; ok false where the
// system does not say.
func mappedResident(t *testing.T, path string) (kb int, ok bool) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		fields := strings.Fields(l)
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && len(fields[1]) == 4: // a mapping's first line
			in = len(fields) >= 6 && fields[5] == path
		case in && len(fields) == 3 && fields[0] == "Rss:":
			n, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatalf("smaps: %q", l)
			}
			kb += n
		}
	}
	return kb, true
}

// TestOpenReadsNothingThroughTheMapping: opening a segment file, and asking it for the
// documents of identifiers outside its range (what scorch asks of every segment for every
// batch of a first index), maps none of its pages in; a search does. The kernel maps a
// large folio of the page cache whole, so a byte read through the mapping made a small
// segment resident whole.
func TestOpenReadsNothingThroughTheMapping(t *testing.T) {
	s, err := build(analyzedDocs(t, 11, 300))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "seg")
	if err := s.persist(path); err != nil {
		t.Fatal(err)
	}
	o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	kb, ok := mappedResident(t, path)
	if !ok {
		t.Skip("no /proc/self/smaps here")
	}
	if kb != 0 {
		t.Fatalf("%d kB of the segment resident once opened, want none", kb)
	}
	bm, err := o.DocNumbers([]string{"\x00before", "\xffafter"})
	if err != nil || !bm.IsEmpty() {
		t.Fatalf("DocNumbers outside the range: %v, %v", bm, err)
	}
	if kb, _ := mappedResident(t, path); kb != 0 {
		t.Fatalf("%d kB of the segment resident after DocNumbers outside its range, want none", kb)
	}
	if err := readAll(o); err != nil {
		t.Fatal(err)
	}
	if kb, _ := mappedResident(t, path); kb == 0 {
		t.Fatal("nothing resident after reading every term: the measure sees nothing")
	}
}
