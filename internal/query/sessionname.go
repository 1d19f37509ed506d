package query

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// SessionPrefix marks a session document's path in every tool: "session:notes.md".
// A top-level file of the tree whose name begins with it is shadowed.
const SessionPrefix = "session:"

// SessionContextID is the context_id of session documents: always the caller's own session,
// whose identifier the assistant has no use for.
const SessionContextID = "session"

// Session document names: a file name, no folder.
const MaxSessionName = 255

// CheckSessionName checks a session document's file name.
func CheckSessionName(name string) (string, *Error) {
	name = strings.TrimPrefix(name, SessionPrefix)
	switch {
	case name == "" || name == "." || name == "..":
		return "", Errorf(ErrInvalidPath, "%q is not a file name", name)
	case len(name) > MaxSessionName:
		return "", Errorf(ErrInvalidPath, "file name is %d bytes long; the limit is %d", len(name), MaxSessionName)
	case !utf8.ValidString(name):
		return "", Errorf(ErrInvalidPath, "file name is not valid UTF-8")
	case strings.ContainsAny(name, "/\\\x00"):
		return "", Errorf(ErrInvalidPath, "%q is not a plain file name: session documents live in no folder", name)
	}
	if strings.ContainsFunc(name, hiddenRune) {
		return "", Errorf(ErrInvalidPath, "file name %q contains a control character", name)
	}
	return name, nil
}

// hiddenRune reports the characters a name shown to a person must not hold: controls (C0,
// DEL, C1), format characters (U+202E and the other bidirectional overrides and isolates,
// zero-width characters, U+FEFF), and the line and paragraph separators. Each changes
// how the rest of the name reads, or hides part of it: "invoice\u202Efdp.md" shows as
// "invoicedm.pdf".
func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// ResolveDocument finds the document a path argument names for a session: "session:<name>"
// is one of the session's own documents (another session's are not found); anything else
// is a document of the tree, as view resolves it.
func ResolveDocument(s *projection.Snapshot, session, raw string) (events.DocKey, *projection.Document, *Error) {
	if strings.HasPrefix(raw, SessionPrefix) {
		name, qerr := CheckSessionName(raw)
		if qerr != nil {
			return events.DocKey{}, nil, qerr
		}
		k := events.DocKey{Session: session, Path: name}
		if session == "" {
			return k, nil, notFound(raw)
		}
		d, _ := s.SessionDocument(session, name)
		return k, d, nil
	}
	p, qerr := CleanPath(raw)
	if qerr != nil {
		return events.DocKey{}, nil, qerr
	}
	if _, ok := s.Folder(p); ok {
		return events.DocKey{}, nil, Errorf(ErrInvalidPath, "%q is a folder; give a document", p)
	}
	if d, ok := s.Document(p); ok {
		return d.Key(), d, nil
	}
	if d, qerr := resolve(s, p); qerr == nil {
		return d.Key(), d, nil
	}
	return events.DocKey{Path: p}, nil, nil
}
