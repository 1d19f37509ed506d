package events_test

import (
	"testing"

	"github.com/guide/guide/internal/events"
)

// The id's bytes are what the catalog and the index hold on disk: they must not change.
func TestDocKeyID(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  events.DocKey
		id   string
	}{
		{"TreeDocument", events.DocKey{Path: "a/b.md"}, "a/b.md"},
		{"SessionDocument", events.DocKey{Session: "tok", Path: "notes.md"}, "\x00tok\x00notes.md"},
		{"EmptySessionName", events.DocKey{Session: "tok"}, "\x00tok\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.key.ID(); got != tc.id {
				t.Fatalf("ID() = %q, want %q", got, tc.id)
			}
			back, err := events.ParseDocKey(tc.id)
			if err != nil || back != tc.key {
				t.Fatalf("ParseDocKey(%q) = %+v, %v; want %+v", tc.id, back, err, tc.key)
			}
		})
	}
	t.Run("ErrOneNUL", func(t *testing.T) {
		if _, err := events.ParseDocKey("\x00tok"); err == nil {
			t.Fatal("an id with one NUL parsed")
		}
	})
}
