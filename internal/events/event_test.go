package events_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

func upsert(path, content string, prev uint64) *events.Event {
	return &events.Event{Op: events.OpUpsert, Project: "p", Path: path, Size: int64(len(content)),
		Mtime: time.Unix(1700000000, 42).UTC(), Hash: events.HashContent([]byte(content)),
		Status: events.StatusOK, Content: []byte(content), PrevSeq: prev}
}

func TestEventRoundTrip(t *testing.T) {
	for _, e := range []*events.Event{
		upsert("a/b c.md", "hello", 0),
		upsert("line\nbreak.md", "x", 7),
		{Op: events.OpDelete, Project: "p", Path: "gone.md", PrevSeq: 3},
		{Op: events.OpUpsert, Project: "p", Path: "big.bin", Size: 1 << 30, Mtime: time.Unix(5, 0).UTC(),
			Hash: "size:1073741824", Status: events.StatusTooLarge, Reason: "over the limit"},
		{Op: events.OpScanEnd, Project: "p", Scan: &events.Scan{ID: "s1", Documents: 3, Published: 2, Unchanged: 1}},
	} {
		m, err := e.Msg()
		if err != nil {
			t.Fatalf("%s %s: %v", e.Op, e.Path, err)
		}
		got, err := events.Decode(m.Subject, m.Header, m.Data)
		if err != nil {
			t.Fatalf("decode %s: %v", m.Subject, err)
		}
		if e.Content == nil {
			e.Content = got.Content // nil and empty are the same on the wire
		}
		testkit.Equal(t, &got, e, "round trip of "+string(e.Op)+" "+e.Path)
	}
}

func TestDecodeRefusesUnknownSchema(t *testing.T) {
	m, _ := upsert("a.md", "x", 0).Msg()
	m.Header.Set(events.HdrSchema, strconv.Itoa(events.SchemaVersion+1))
	if _, err := events.Decode(m.Subject, m.Header, m.Data); !errors.Is(err, events.ErrUnknownSchema) {
		t.Fatalf("err = %v, want ErrUnknownSchema", err)
	}
	m.Header.Del(events.HdrSchema)
	if _, err := events.Decode(m.Subject, m.Header, m.Data); !errors.Is(err, events.ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

func TestMsgID(t *testing.T) {
	a1, b, a2 := upsert("f.md", "A", 0), upsert("f.md", "B", 1), upsert("f.md", "A", 2)
	if a1.MsgID() == a2.MsgID() {
		t.Error("A → B → A: the second A has the first's id and would be dropped as a duplicate")
	}
	if a1.MsgID() != upsert("f.md", "A", 0).MsgID() {
		t.Error("the same event has two ids: a retry would not be de-duplicated")
	}
	if a1.MsgID() == b.MsgID() {
		t.Error("different content, same id")
	}
}

// TestPublishIsIdempotent: a retried publish is dropped by the server.
func TestPublishIsIdempotent(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	ctx := testkit.Context(t)
	pub := s.Publisher()
	for range 3 {
		testkit.NoErr(t, pub.Publish(ctx, upsert("a.md", "same", 0)), "publish")
	}
	acks, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")
	dups := 0
	for _, a := range acks {
		if a.Duplicate {
			dups++
		}
	}
	testkit.Equal(t, dups, 2, "duplicates dropped by the server")
	info, _ := s.Info(ctx)
	testkit.Equal(t, info.State.Msgs, uint64(1), "messages in the stream")
}

// TestAcksDescribeTheirDocuments: the acks a publisher keeps until Flush describe each event's
// document (a first scan's acks are kept for every file until its end), and the caller's
// events are left as they were.
func TestAcksDescribeTheirDocuments(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	ctx := testkit.Context(t)
	pub := s.Publisher()
	var sent []*events.Event
	for i := range 3 * s.MaxPending { // past MaxPending: acks are collected before Flush
		e := upsert(fmt.Sprintf("d/%d.md", i), strings.Repeat("text ", 100), 0)
		sent = append(sent, e)
		testkit.NoErr(t, pub.Publish(ctx, e), "publish")
	}
	acks, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")
	testkit.Equal(t, len(acks), len(sent), "acks")
	for i, a := range acks {
		st := a.State
		if st.Hash != events.HashContent([]byte(strings.Repeat("text ", 100))) || st.Op != events.OpUpsert ||
			st.Path != sent[i].Path || st.Seq != a.Seq || st.Size != sent[i].Size {
			t.Fatalf("ack %d lost its event's state: %+v (sent %s)", i, st, sent[i].Path)
		}
	}
	for _, e := range sent {
		if len(e.Content) == 0 {
			t.Fatalf("the caller's event %s lost its content", e.Path)
		}
	}
}

func TestCurrentReadsLatestPerDocument(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	ctx := testkit.Context(t)
	pub := s.Publisher()
	for _, e := range []*events.Event{
		upsert("a.md", "v1", 0), upsert("b.md", "v1", 0), upsert("a.md", "v2", 1),
		{Op: events.OpDelete, Project: "p", Path: "b.md", PrevSeq: 2},
		upsert("other/c.md", "c", 0),
	} {
		testkit.NoErr(t, pub.Publish(ctx, e), "publish")
	}
	_, err := pub.Flush(ctx)
	testkit.NoErr(t, err, "flush")
	// Another project's documents are not this one's.
	o := upsert("a.md", "elsewhere", 0)
	o.Project = "q"
	m, _ := o.Msg()
	_, err = s.JS.PublishMsg(ctx, m)
	testkit.NoErr(t, err, "publish other project")

	cur, last, err := testkit.Current(ctx, s, "p")
	testkit.NoErr(t, err, "current")
	testkit.Equal(t, len(cur), 3, "documents")
	testkit.Equal(t, cur["a.md"].Hash, events.HashContent([]byte("v2")), "a.md is at v2")
	testkit.Equal(t, cur["b.md"].Op, events.OpDelete, "b.md deleted")
	testkit.Equal(t, last, uint64(6), "stream sequence read up to")
}

func TestHeadersAreReadable(t *testing.T) {
	m, _ := upsert("Notes/idées.md", "x", 0).Msg()
	testkit.Equal(t, m.Header.Get(events.HdrPath), "Notes/idées.md", "path header")
	testkit.Equal(t, m.Header.Get(nats.MsgIdHdr) != "", true, "message id set")
	m, _ = upsert("bad\nname", "x", 0).Msg()
	testkit.Equal(t, m.Header.Get(events.HdrPath), `"bad\nname"`, "a path with a line break is quoted")
}

func TestIsBinary(t *testing.T) {
	nulAt := func(i int) []byte { b := bytes.Repeat([]byte("a"), i+1); b[i] = 0; return b }
	for _, tc := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"Empty", nil, false},
		{"Text", []byte("hello\n"), false},
		{"NULFirst", []byte{0}, true},
		{"NULLastOfPrefix", nulAt(8<<10 - 1), true},
		{"NULPastPrefix", nulAt(8 << 10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := events.IsBinary(tc.in); got != tc.want {
				t.Fatalf("IsBinary = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDecodedEventsKeepNoHeaderBlock: nats.go decodes a message's headers as slices of one
// string; a decoded event keeps none of them, so that what keeps an event's hash or status
// does not keep the whole block.
func TestDecodedEventsKeepNoHeaderBlock(t *testing.T) {
	e := upsert("a.md", "hello", 0)
	e.Status, e.Reason = events.StatusTooLarge, "over the limit"
	m, err := e.Msg()
	testkit.NoErr(t, err, "msg")
	var block strings.Builder
	block.WriteString("NATS/1.0\r\n")
	for k, vs := range m.Header {
		for _, v := range vs {
			fmt.Fprintf(&block, "%s: %s\r\n", k, v)
		}
	}
	block.WriteString("\r\n")
	h, err := nats.DecodeHeadersMsg([]byte(block.String()))
	testkit.NoErr(t, err, "headers")
	got, err := events.Decode(m.Subject, h, m.Data)
	testkit.NoErr(t, err, "decode")
	testkit.Equal(t, [4]string{got.Hash, string(got.Status), got.Reason, string(got.Op)},
		[4]string{e.Hash, string(e.Status), e.Reason, string(e.Op)}, "decoded")
	for name, s := range map[string]string{"hash": got.Hash, "status": string(got.Status), "reason": got.Reason,
		"op": string(got.Op)} {
		for _, v := range h {
			if unsafe.StringData(s) == unsafe.StringData(v[0]) {
				t.Errorf("the event's %s is a slice of the header block", name)
			}
		}
	}
	if unsafe.StringData(string(got.Status)) != unsafe.StringData(string(events.StatusTooLarge)) {
		t.Error("a known status is not the constant")
	}
}
