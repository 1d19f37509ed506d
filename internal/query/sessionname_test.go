package query_test

import (
	"fmt"
	"testing"

	"github.com/guide/guide/internal/query"
)

// TestSessionNameRefusesHiddenCharacters: a name with a control character, or with a
// character that reorders or hides what follows it, is refused with one error; ordinary
// names in any script are kept.
func TestSessionNameRefusesHiddenCharacters(t *testing.T) {
	for _, name := range []string{
		"a\x01b.md", "a\x7fb.md", "a\u0085b.md", "a\u009bb.md",
		"invoice\u202Efdp.md", "a\u202Db.md", "a\u2066b.md", "a\u2067b.md", "a\u2068b.md", "a\u2069b.md",
		"a\u200Eb.md", "a\u200Fb.md", "a\u061Cb.md", "a\u200Bb.md", "a\u200Db.md", "\uFEFFa.md", "a\u00ADb.md",
		"a\u2028b.md", "a\u2029b.md",
	} {
		_, qerr := query.CheckSessionName(name)
		if qerr == nil || qerr.Type != query.ErrInvalidPath || qerr.Message != "file name "+quote(name)+" contains a control character" {
			t.Errorf("CheckSessionName(%q) = %v; want invalid_path: contains a control character", name, qerr)
		}
	}
	for _, name := range []string{"notes.md", "idées.md", "заметки.md", "笔记.md", "ملاحظات.md", "a b.md", "😀.md"} {
		if got, qerr := query.CheckSessionName(name); qerr != nil || got != name {
			t.Errorf("CheckSessionName(%q) = %q, %v; want it kept", name, got, qerr)
		}
	}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
