package events_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/text"
)

// slimDoc is the content of document i: a title, words, a heading now and then.
func slimDoc(i int) []byte {
	c := fmt.Appendf(nil, "# Title %d\n\nSome words of document %d, and more words after them.\n", i, i)
	if i%3 == 0 {
		c = append(c, "\n## A \"quoted\" heading\n\nA paragraph.\n"...)
	}
	return c
}

// followAll follows project until n events are delivered, and returns them by sequence.
func followAll(t testing.TB, s *events.Stream, n int) map[uint64]events.Event {
	t.Helper()
	done := errors.New("every event delivered")
	got := map[uint64]events.Event{}
	err := s.Follow(testkit.Context(t), "p", 0, events.Budget{Events: 100, Bytes: 2000}, func(b events.Batch) error {
		for _, e := range b.Events {
			got[e.Seq] = e
		}
		if len(got) >= n {
			return done
		}
		return nil
	})
	if !errors.Is(err, done) {
		t.Fatalf("Follow = %v after %d events", err, len(got))
	}
	return got
}

// TestFollowReadsOtherPartitionsHeadersOnly: on a stream of four partitions the publisher
// writes each readable document's word count and title in headers; a follower that needs
// the content of partition 1 alone (a replica of it) gets its documents whole and the
// others' slim — no content, the words and title from the headers, as the content gives
// them — and gets whole every event that carries its facts in its body: scan and
// configuration events, and documents of an older publisher, which wrote no such headers.
func TestFollowReadsOtherPartitionsHeadersOnly(t *testing.T) {
	b := testkit.NATS(t)
	s := &events.Stream{Conn: b.Conn, Partitions: 4}
	ctx := testkit.Context(t)
	testkit.NoErr(t, s.Open(ctx), "stream")
	const n = 40
	pub := s.Publisher()
	for i := range n {
		c := slimDoc(i)
		e := &events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("d%02d.md", i), Size: int64(len(c)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}
		testkit.NoErr(t, pub.Publish(ctx, e), "publish")
	}
	_, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")
	// An older publisher's events: no Guide-Words header, and (the first eight) no
	// partition in the subject.
	for i := n; i < n+16; i++ {
		c := slimDoc(i)
		e := &events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("d%02d.md", i), Size: int64(len(c)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}
		m, err := e.Msg()
		if i >= n+8 {
			m, err = s.Msg(e)
		}
		testkit.NoErr(t, err, "msg")
		_, err = s.JS.PublishMsg(ctx, m)
		testkit.NoErr(t, err, "publish an older publisher's event")
	}
	cfg := []byte(`{"a":1}`)
	_, err = s.PublishSync(ctx, &events.Event{Op: events.OpConfig, Project: "p", Source: "guide.yaml", Config: cfg})
	testkit.NoErr(t, err, "publish config")
	_, err = s.PublishSync(ctx, &events.Event{Op: events.OpScanEnd, Project: "p", Scan: &events.Scan{ID: "s1", Documents: 48}})
	testkit.NoErr(t, err, "publish scan end")

	set := events.PartitionSet{Count: 4, Own: []int{1}}
	s.Folds = set
	got := followAll(t, s, n+18)
	slim, whole := 0, 0
	for _, e := range got {
		switch e.Op {
		case events.OpConfig:
			testkit.Equal(t, string(e.Config), string(cfg), "config body")
			continue
		case events.OpScanEnd:
			testkit.Equal(t, e.Scan.Documents, 48, "scan end's count")
			continue
		}
		i, _ := strconv.Atoi(e.Path[1:3])
		c := slimDoc(i)
		old := i >= n
		if !old {
			if !e.Described || e.Words != text.ReaderWords(c) || e.Title != text.ParseMarkdown(c).Title {
				t.Errorf("%s: described %v, words %d, title %q; want %d, %q", e.Path, e.Described, e.Words, e.Title,
					text.ReaderWords(c), text.ParseMarkdown(c).Title)
			}
		}
		if set.Holds(events.DocKey{Path: e.Path}) || old {
			whole++
			if e.Slim || string(e.Content) != string(c) {
				t.Errorf("%s (partition %d, older publisher %v): slim %v, content %q; want it whole", e.Path,
					set.Of(events.DocKey{Path: e.Path}), old, e.Slim, e.Content)
			}
			continue
		}
		slim++
		if !e.Slim || e.Content != nil {
			t.Errorf("%s (partition %d): slim %v, %d bytes of content; want slim", e.Path, set.Of(events.DocKey{Path: e.Path}), e.Slim, len(e.Content))
		}
	}
	if slim == 0 || whole == 0 {
		t.Fatalf("%d slim and %d whole events: the corpus does not exercise both", slim, whole)
	}
}

// TestOnePartitionEventsUnchanged: a stream of one partition (the default) carries events
// as it always did: no header describing the record.
func TestOnePartitionEventsUnchanged(t *testing.T) {
	b := testkit.NATS(t)
	s := testkit.Stream(t, b)
	testkit.PublishDocs(t, s, "p", "d%d.md", "# T %d\n\nwords\n", 3)
	for seq := uint64(1); seq <= 3; seq++ {
		m, err := s.JS.Conn().Request("$JS.API.DIRECT.GET."+events.DefaultStream, fmt.Appendf(nil, `{"seq":%d}`, seq), 5*time.Second)
		testkit.NoErr(t, err, "direct get")
		for _, h := range []string{events.HdrWords, events.HdrTitle, events.HdrTitleQuoted} {
			if v := m.Header.Get(h); v != "" {
				t.Errorf("event %d has %s: %q on a stream of one partition", seq, h, v)
			}
		}
	}
}

// BenchmarkFollowPartition times following a stream of four partitions to its end, whole
// and as a replica of partition 0 (others headers-only): GUIDE_BENCH_FOLLOW_DOCS
// documents of about 3.5 KB (default 5000).
func BenchmarkFollowPartition(b *testing.B) {
	n := 5000
	if v, err := strconv.Atoi(os.Getenv("GUIDE_BENCH_FOLLOW_DOCS")); err == nil {
		n = v
	}
	br := testkit.NATS(b)
	s := &events.Stream{Conn: br.Conn, Partitions: 4}
	ctx := testkit.Context(b)
	testkit.NoErr(b, s.Open(ctx), "stream")
	pub := s.Publisher()
	for i := range n {
		c := slimDoc(i)
		for len(c) < 3500 {
			c = append(c, "More words of the body, and then some more words again.\n"...)
		}
		e := &events.Event{Op: events.OpUpsert, Project: "p", Path: fmt.Sprintf("dir%d/d%05d.md", i%50, i), Size: int64(len(c)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(c), Status: events.StatusOK, Content: c}
		testkit.NoErr(b, pub.Publish(ctx, e), "publish")
	}
	_, err := pub.Flush(ctx)
	testkit.NoErr(b, err, "flush")
	for _, part := range []string{"whole", "partition0"} {
		b.Run(part, func(b *testing.B) {
			switch part {
			case "whole":
				s.Folds = events.PartitionSet{}
			case "partition0":
				s.Folds = events.PartitionSet{Count: 4, Own: []int{0}}
			}
			for b.Loop() {
				done := errors.New("done")
				seen := 0
				err := s.Follow(ctx, "p", 0, events.Budget{Events: 1000, Bytes: 2 << 20}, func(bt events.Batch) error {
					seen += len(bt.Events)
					if seen >= n {
						return done
					}
					return nil
				})
				if !errors.Is(err, done) {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPartitionedSubjects: on a stream of P > 1 partitions a document's subject carries
// its partition after the family's token; it parses back to the same document, the
// folder and session filters match it, and a partition's filter matches its documents
// alone. On a stream of one partition subjects are as they always were.
func TestPartitionedSubjects(t *testing.T) {
	one := events.NewSubjects("p")
	four := one
	four.Partitions = 4
	for _, path := range []string{"a.md", "dir/sub/b c.md", "x/y/z/w.md"} {
		plain, err := one.Document(path)
		testkit.NoErr(t, err, "subject")
		sub, err := four.Document(path)
		testkit.NoErr(t, err, "subject")
		k := events.PartitionOf(events.DocKey{Path: path}, 4)
		want := strings.Replace(plain, ".doc.", fmt.Sprintf(".doc.~%d.", k), 1)
		testkit.Equal(t, sub, want, "subject of "+path)
		for _, subj := range []events.Subjects{one, four} {
			got, err := subj.ParseDocument(sub)
			testkit.NoErr(t, err, "parse")
			testkit.Equal(t, got, path, "parsed "+sub)
		}
		folder, err := four.Folder(path[:max(strings.LastIndexByte(path, '/'), 0)])
		testkit.NoErr(t, err, "folder")
		if !subjectMatches(folder, sub) {
			t.Errorf("folder filter %s does not match %s", folder, sub)
		}
		for j := range 4 {
			if m := slices.ContainsFunc(four.PartitionFilters([]int{j}), func(f string) bool { return subjectMatches(f, sub) }); m != (j == k) {
				t.Errorf("partition %d's filters match %s: %v", j, sub, m)
			}
		}
	}
	sub, err := four.SessionDocument("tok", "notes.md")
	testkit.NoErr(t, err, "session subject")
	tok, name, err := one.ParseSessionDocument(sub)
	testkit.NoErr(t, err, "parse session subject")
	testkit.Equal(t, tok+"/"+name, "tok/notes.md", "session document")
	if !subjectMatches(four.Session("tok"), sub) {
		t.Errorf("session filter %s does not match %s", four.Session("tok"), sub)
	}
}

// subjectMatches reports whether the NATS filter f matches subject s.
func subjectMatches(f, s string) bool {
	ft, st := strings.Split(f, "."), strings.Split(s, ".")
	for i, tok := range ft {
		if tok == ">" {
			return len(st) > i
		}
		if i >= len(st) || tok != "*" && tok != st[i] {
			return false
		}
	}
	return len(ft) == len(st)
}
