package events_test

import (
	"strings"
	"testing"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit"
)

// TestSessionSubjects: a session document's subject keeps the session's documents under one
// prefix, out of the tree's "doc" family, and decodes back to its token and name.
func TestSessionSubjects(t *testing.T) {
	s := events.NewSubjects("my notes")
	subj, err := s.SessionDocument("c0ffee", "draft v2.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "guide.my%20notes.ses.c0ffee.draft%20v2%2Emd"; subj != want {
		t.Fatalf("SessionDocument = %q, want %q", subj, want)
	}
	if !strings.HasPrefix(subj, strings.TrimSuffix(s.Session("c0ffee"), ">")) {
		t.Errorf("session filter %q does not select %q", s.Session("c0ffee"), subj)
	}
	if strings.HasPrefix(subj, strings.TrimSuffix(s.Documents(), ">")) {
		t.Errorf("a session document %q is in the tree's subject family", subj)
	}
	tok, name, err := s.ParseSessionDocument(subj)
	if err != nil || tok != "c0ffee" || name != "draft v2.md" {
		t.Errorf("ParseSessionDocument = %q, %q, %v", tok, name, err)
	}
	for _, bad := range []string{"guide.my%20notes.ses.c0ffee", "guide.my%20notes.ses.a.b.c", "guide.my%20notes.doc.a.b"} {
		if _, _, err := s.ParseSessionDocument(bad); err == nil {
			t.Errorf("ParseSessionDocument(%q) accepted", bad)
		}
	}
}

// TestSessionEventRoundTrip: a session document's events carry the session through the
// subject, and differ in message id from the same file of another session.
func TestSessionEventRoundTrip(t *testing.T) {
	e := &events.Event{Op: events.OpUpsert, Project: "p", Session: "tok1", Path: "notes.md", Size: 5,
		Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent([]byte("hello")),
		Status: events.StatusOK, Content: []byte("hello")}
	m, err := e.Msg()
	if err != nil {
		t.Fatal(err)
	}
	got, err := events.Decode(m.Subject, m.Header, m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Session != "tok1" || got.Path != "notes.md" || string(got.Content) != "hello" {
		t.Fatalf("decoded %+v", got)
	}
	other := *e
	other.Session = "tok2"
	if other.MsgID() == e.MsgID() {
		t.Error("the same file in two sessions has one message id: the server would drop the second")
	}
	del := &events.Event{Op: events.OpDelete, Project: "p", Session: "tok1", Path: "notes.md"}
	m, err = del.Msg()
	if err != nil {
		t.Fatal(err)
	}
	got, err = events.Decode(m.Subject, m.Header, m.Data)
	if err != nil || got.Op != events.OpDelete || got.Session != "tok1" || got.Path != "notes.md" {
		t.Fatalf("delete decoded %+v, %v", got, err)
	}
}

// FuzzSessionSubjectRoundTrip: any token and name round-trip through their subject.
func FuzzSessionSubjectRoundTrip(f *testing.F) {
	f.Add("tok", "a.md")
	f.Add("%", "with/slash")
	f.Fuzz(func(t *testing.T, token, name string) {
		s := events.NewSubjects("p")
		subj, err := s.SessionDocument(token, name)
		if err != nil {
			return
		}
		tok, n, err := s.ParseSessionDocument(subj)
		if err != nil || tok != token || n != name {
			t.Fatalf("round trip of %q/%q via %q = %q/%q, %v", token, name, subj, tok, n, err)
		}
	})
}

// TestForgetKeepsWhatCameAfter: purging a deleted session document's history drops what
// came before the delete and keeps the delete and anything published since (the same name
// attached again), however late the purge runs.
func TestForgetKeepsWhatCameAfter(t *testing.T) {
	s := testkit.Stream(t, testkit.NATS(t))
	ctx := testkit.Context(t)
	doc := func(content string) *events.Event {
		b := []byte(content)
		return &events.Event{Op: events.OpUpsert, Project: "p", Session: "tok", Path: "notes.md", Size: int64(len(b)),
			Mtime: time.Unix(1700000000, 0).UTC(), Hash: events.HashContent(b), Status: events.StatusOK, Content: b}
	}
	var seqs []uint64
	for _, e := range []*events.Event{doc("first"), doc("second"),
		{Op: events.OpDelete, Project: "p", Session: "tok", Path: "notes.md"}, doc("attached again")} {
		seq, err := s.PublishSync(ctx, e)
		testkit.NoErr(t, err, "publish")
		seqs = append(seqs, seq)
	}
	subj, err := events.NewSubjects("p").SessionDocument("tok", "notes.md")
	testkit.NoErr(t, err, "subject")
	testkit.NoErr(t, s.Forget(ctx, subj, seqs[2]), "forget")

	js, err := s.JS.Stream(ctx, s.Name)
	testkit.NoErr(t, err, "stream")
	var left []uint64
	for seq := seqs[0]; seq <= seqs[3]; seq++ {
		if _, err := js.GetMsg(ctx, seq); err == nil {
			left = append(left, seq)
		}
	}
	testkit.Equal(t, left, seqs[2:], "events left on the subject")
}
