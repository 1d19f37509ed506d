package events

import (
	"errors"
	"testing"
)

// TestConfigEventRoundTrip: a config event encodes on the project's config subject and
// decodes to the same body, source and hash; a body that does not match its hash is refused.
func TestConfigEventRoundTrip(t *testing.T) {
	e := &Event{Op: OpConfig, Project: "p q", Config: []byte(`{"categories":{}}`), Source: "guide.yaml", PrevSeq: 7}
	m, err := e.Msg()
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != NewSubjects("p q").Config() {
		t.Errorf("subject %q", m.Subject)
	}
	got, err := Decode(m.Subject, m.Header, m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Op != OpConfig || got.Project != "p q" || string(got.Config) != string(e.Config) || got.Source != "guide.yaml" || got.Hash != HashContent(e.Config) {
		t.Errorf("decoded %+v", got)
	}
	// The same configuration after another config event is a new message, not a duplicate.
	e2 := *e
	e2.PrevSeq = 9
	if e.MsgID() == e2.MsgID() {
		t.Error("message id ignores the previous sequence")
	}
	if _, err := Decode(m.Subject, m.Header, []byte(`{}`)); !errors.Is(err, ErrMalformed) {
		t.Errorf("tampered body: %v", err)
	}
	if _, err := Decode(NewSubjects("p q").Scan(), m.Header, m.Data); !errors.Is(err, ErrMalformed) {
		t.Errorf("config op on the scan subject: %v", err)
	}
}
