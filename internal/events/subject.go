package events

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Subject layout, one stream for every project:
//
//	guide.<project>.doc.<seg>.<seg>...   one subject per document; each path segment is one token
//	guide.<project>.ses.<token>.<name>   one subject per session document: a file attached to one
//	                                     MCP session, <token> the session's token (see SessionToken)
//	guide.<project>.ctl.scan             scan began / ended
//	guide.<project>.ctl.config           the project's configuration changed
//
// A token keeps the bytes [A-Za-z0-9_-] as they are and writes every other byte as %XX
// (upper-case hex). The encoding is reversible for any byte string, never yields the
// separators or wildcards of NATS ('.', '*', '>', white space), and keeps a folder a prefix
// of its documents' subjects, so that "guide.p.doc.a.b.>" selects the folder a/b.

// Prefix is the first token of every subject this program writes.
const Prefix = "guide"

// MaxSubjectLen bounds an encoded subject. NATS limits a protocol line to 4 KiB by default;
// the subject shares that line with the reply subject and header sizes.
const MaxSubjectLen = 3000

// ErrPathTooLong is returned for a path whose subject would exceed MaxSubjectLen.
var ErrPathTooLong = errors.New("path too long to encode as a subject")

// ErrBadSubject is returned for a subject this program did not write.
var ErrBadSubject = errors.New("not a guide subject")

const hexDigits = "0123456789ABCDEF"

func safeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// EncodeToken encodes one name (a path segment or a project name) as a subject token.
// An empty name encodes as "%" alone, which no non-empty name produces.
func EncodeToken(s string) string {
	if s == "" {
		return "%"
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safeByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// DecodeToken reverses EncodeToken. It accepts only canonical encodings, so that every
// name has exactly one token.
func DecodeToken(t string) (string, error) {
	if t == "%" {
		return "", nil
	}
	if t == "" {
		return "", fmt.Errorf("%w: empty token", ErrBadSubject)
	}
	if !strings.Contains(t, "%") {
		for i := 0; i < len(t); i++ {
			if !safeByte(t[i]) {
				return "", fmt.Errorf("%w: byte %q in token", ErrBadSubject, t[i])
			}
		}
		return t, nil
	}
	b := make([]byte, 0, len(t))
	for i := 0; i < len(t); i++ {
		c := t[i]
		if safeByte(c) {
			b = append(b, c)
			continue
		}
		if c != '%' || i+2 >= len(t) {
			return "", fmt.Errorf("%w: bad escape in token %q", ErrBadSubject, t)
		}
		hi, ok1 := unhex(t[i+1])
		lo, ok2 := unhex(t[i+2])
		v := hi<<4 | lo
		if !ok1 || !ok2 || safeByte(v) {
			return "", fmt.Errorf("%w: bad escape in token %q", ErrBadSubject, t)
		}
		b = append(b, v)
		i += 2
	}
	return string(b), nil
}

// TooLongFolder is the folder at the root under which documents whose path does not fit
// in a subject are listed, each under a stand-in name (see StandIn).
const TooLongFolder = "_path_too_long"

// StandIn is the path a document is listed under when its own does not fit in a subject:
// in TooLongFolder, named by a hash of the real path and the start of its file name, so
// that it is the same at every scan and different for every path.
func StandIn(path string) string {
	sum := sha256.Sum256([]byte(path))
	name := path[strings.LastIndexByte(path, '/')+1:]
	if len(name) > 60 {
		name = name[:60]
		for len(name) > 0 && !utf8.ValidString(name) {
			name = name[:len(name)-1]
		}
	}
	return TooLongFolder + "/" + hex.EncodeToString(sum[:8]) + "-" + name
}

// Subjects names the subjects of one project.
//
// On a stream of P > 1 partitions (Stream.Subjects), a document's subject carries its
// partition as a token after the family's, "~" and the number — a token EncodeToken never
// makes:
//
//	guide.<project>.doc.~<k>.<seg>.<seg>...
//	guide.<project>.ses.~<k>.<token>.<name>
//
// so that a replica of some partitions reads its own documents' events whole with a
// filter of their subjects (PartitionFilters) and the others' headers-only. Subjects of a
// stream of one partition are as they always were. Parsing accepts either form.
type Subjects struct {
	Project string
	project string // encoded once
	// Partitions is P: above 1, document subjects carry their partition.
	Partitions int
}

// NewSubjects returns the subject names of project on a stream of one partition.
func NewSubjects(project string) Subjects {
	return Subjects{Project: project, project: EncodeToken(project)}
}

// partToken is the token of a document's partition in its subject, "" on a stream of one.
func (s Subjects) partToken(k DocKey) string {
	if s.Partitions <= 1 {
		return ""
	}
	return "~" + strconv.Itoa(PartitionOf(k, s.Partitions)) + "."
}

// PartitionFilters are the filters of the events of the documents of partitions ks, and
// of the control events (scans, configuration).
func (s Subjects) PartitionFilters(ks []int) []string {
	out := []string{Prefix + "." + s.project + ".ctl.>"}
	for _, k := range ks {
		out = append(out, Prefix+"."+s.project+".doc.~"+strconv.Itoa(k)+".>", Prefix+"."+s.project+".ses.~"+strconv.Itoa(k)+".>")
	}
	return out
}

// cutPartToken removes a leading partition token ("~k.") from the rest of a subject.
func cutPartToken(rest string) string {
	if !strings.HasPrefix(rest, "~") {
		return rest
	}
	tok, after, ok := strings.Cut(rest, ".")
	if !ok {
		return rest
	}
	if _, err := strconv.Atoi(tok[1:]); err != nil {
		return rest
	}
	return after
}

// All matches every subject of the project.
func (s Subjects) All() string { return Prefix + "." + s.project + ".>" }

// Documents matches every document subject of the project.
func (s Subjects) Documents() string { return Prefix + "." + s.project + ".doc.>" }

// Sessions matches every session-document subject of the project.
func (s Subjects) Sessions() string { return Prefix + "." + s.project + ".ses.>" }

// Session matches the documents of one session.
func (s Subjects) Session(token string) string {
	if s.Partitions > 1 {
		return Prefix + "." + s.project + ".ses.*." + EncodeToken(token) + ".>"
	}
	return Prefix + "." + s.project + ".ses." + EncodeToken(token) + ".>"
}

// SessionDocument is the subject of the document name attached to the session token.
// A session document has a file name, not a path: it lives in no folder.
func (s Subjects) SessionDocument(token, name string) (string, error) {
	if token == "" || name == "" {
		return "", fmt.Errorf("%w: empty session token or name", ErrBadSubject)
	}
	subj := Prefix + "." + s.project + ".ses." + s.partToken(DocKey{Session: token, Path: name}) + EncodeToken(token) + "." + EncodeToken(name)
	if len(subj) > MaxSubjectLen {
		return "", fmt.Errorf("%w: %d bytes", ErrPathTooLong, len(subj))
	}
	return subj, nil
}

// ParseSessionDocument returns the session token and file name of a session-document
// subject of this project.
func (s Subjects) ParseSessionDocument(subject string) (token, name string, err error) {
	head := Prefix + "." + s.project + ".ses."
	rest, ok := strings.CutPrefix(subject, head)
	if !ok {
		return "", "", fmt.Errorf("%w: %q", ErrBadSubject, subject)
	}
	tok, nm, ok := strings.Cut(cutPartToken(rest), ".")
	if !ok || strings.Contains(nm, ".") {
		return "", "", fmt.Errorf("%w: %q is not <token>.<name>", ErrBadSubject, subject)
	}
	if token, err = DecodeToken(tok); err != nil {
		return "", "", err
	}
	if name, err = DecodeToken(nm); err != nil {
		return "", "", err
	}
	if token == "" || name == "" {
		return "", "", fmt.Errorf("%w: empty session token or name in %q", ErrBadSubject, subject)
	}
	return token, name, nil
}

// Scan is the subject of scan events.
func (s Subjects) Scan() string { return Prefix + "." + s.project + ".ctl.scan" }

// Config is the subject of configuration events.
func (s Subjects) Config() string { return Prefix + "." + s.project + ".ctl.config" }

// Folder matches the document subjects below folder ("" is the whole project).
func (s Subjects) Folder(folder string) (string, error) {
	if folder == "" {
		return s.Documents(), nil
	}
	sub, err := NewSubjects(s.Project).Document(folder)
	if err != nil {
		return "", err
	}
	if s.Partitions > 1 {
		// Below the family's token, any partition's.
		head := Prefix + "." + s.project + ".doc."
		sub = head + "*." + strings.TrimPrefix(sub, head)
	}
	return sub + ".>", nil
}

// Document is the subject of the document at path, a clean slash-separated relative path.
func (s Subjects) Document(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%w: empty path", ErrBadSubject)
	}
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteByte('.')
	b.WriteString(s.project)
	b.WriteString(".doc")
	if t := s.partToken(DocKey{Path: path}); t != "" {
		b.WriteByte('.')
		b.WriteString(t[:len(t)-1])
	}
	for seg := range strings.SplitSeq(path, "/") {
		b.WriteByte('.')
		b.WriteString(EncodeToken(seg))
	}
	if b.Len() > MaxSubjectLen {
		return "", fmt.Errorf("%w: %d bytes", ErrPathTooLong, b.Len())
	}
	return b.String(), nil
}

// ParseDocument returns the path of a document subject of this project.
func (s Subjects) ParseDocument(subject string) (string, error) {
	head := Prefix + "." + s.project + ".doc."
	rest, ok := strings.CutPrefix(subject, head)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrBadSubject, subject)
	}
	rest = cutPartToken(rest)
	var b strings.Builder
	for i, tok := range strings.Split(rest, ".") {
		seg, err := DecodeToken(tok)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(seg)
	}
	return b.String(), nil
}

// ProjectOf returns the project named by any subject this program writes.
func ProjectOf(subject string) (string, error) {
	parts := strings.SplitN(subject, ".", 3)
	if len(parts) < 3 || parts[0] != Prefix {
		return "", fmt.Errorf("%w: %q", ErrBadSubject, subject)
	}
	return DecodeToken(parts[1])
}
