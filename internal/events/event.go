// Package events is the contract between the indexer and the query processes: the events
// that describe a content tree, how they are written to and read from a NATS JetStream
// stream, and the subjects they travel on.
package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"

	"github.com/guide/guide/internal/text"
)

// SchemaVersion is the version of the event format this program writes and reads.
// A consumer refuses an event of any other version.
const SchemaVersion = 1

// Op says what an event reports.
type Op string

// The operations of the event contract.
const (
	OpUpsert    Op = "upsert"     // a document exists with this metadata and content
	OpDelete    Op = "delete"     // a document no longer exists
	OpScanBegin Op = "scan_begin" // the indexer started comparing the tree with the stream
	OpScanEnd   Op = "scan_end"   // ...and finished: everything before this is a consistent snapshot
	OpConfig    Op = "config"     // the project's configuration (guide.yaml) is now this
)

// Status says whether a document's content travels with its event, and if not, why.
type Status string

// Document statuses.
const (
	StatusOK          Status = "ok"           // text content, in the event
	StatusBinary      Status = "binary"       // a NUL byte in the first 8 KiB: metadata only
	StatusTooLarge    Status = "too_large"    // over the indexer's size limit: metadata only
	StatusInvalidUTF8 Status = "invalid_utf8" // not UTF-8 text: metadata only
	StatusUnreadable  Status = "unreadable"   // the indexer could not read it: metadata only
	StatusOutsideRoot Status = "outside_root" // a symbolic link that leaves the root: never followed
	// StatusPathTooLong: the path does not fit in a subject; the document is listed under
	// a short stand-in path (see TooLongFolder), its real path in the reason.
	StatusPathTooLong Status = "path_too_long"
)

// Header names. Metadata lives in headers so that `nats stream view` shows it readably.
const (
	HdrSchema  = "Guide-Schema"
	HdrOp      = "Guide-Op"
	HdrPath    = "Guide-Path"
	HdrSize    = "Guide-Size"
	HdrMtime   = "Guide-Mtime"
	HdrHash    = "Guide-Hash"
	HdrStatus  = "Guide-Status"
	HdrReason  = "Guide-Reason"
	HdrScanID  = "Guide-Scan"
	HdrPrevSeq = "Guide-Prev-Seq"
	HdrInode   = "Guide-Inode"
	HdrSource  = "Guide-Source" // a config event's file, "" for the built-in default
	HdrSession = "Guide-Session"
	// What the document was before this event (see Prev): a reader of what changed
	// learns it without reading the previous event.
	HdrPrevOp     = "Guide-Prev-Op"
	HdrPrevSize   = "Guide-Prev-Size"
	HdrPrevHash   = "Guide-Prev-Hash"
	HdrPrevStatus = "Guide-Prev-Status"
	HdrPrevInode  = "Guide-Prev-Inode"
	// What a readable document's record needs besides its metadata, written by a
	// publisher of a partitioned stream (P > 1) so that a replica of other partitions
	// folds the record from the headers alone (Described): the word count as a reader
	// counts words and the title. A title that is not a printable line as it is comes
	// Go-quoted, with HdrTitleQuoted "1".
	HdrWords       = "Guide-Words"
	HdrTitle       = "Guide-Title"
	HdrTitleQuoted = "Guide-Title-Quoted"
)

// ErrUnknownSchema is returned for an event written by an unknown version of the contract.
var ErrUnknownSchema = errors.New("unknown event schema version")

// ErrMalformed is returned for a message that does not follow the contract.
var ErrMalformed = errors.New("malformed event")

// Event is one fact about a project's content tree.
type Event struct {
	Op      Op
	Project string

	// Document events. Session is the token of the MCP session a session document is
	// attached to ("" for a document of the tree); Path is then the document's file name.
	Session string
	Path    string
	Size    int64
	Mtime   time.Time
	Hash    string // hex SHA-256 of the file's bytes; empty for a delete
	Status  Status
	Reason  string // why Status is not ok, for people
	Content []byte // present when Status is ok
	PrevSeq uint64 // the stream sequence of the document's previous event, 0 if none
	Inode   uint64 // the file's inode on the indexer's machine, 0 if unknown
	// Prev is what the previous event (PrevSeq) said of the document, when the publisher
	// wrote it down: optional, since an event of an older publisher has none.
	Prev *Prev
	// Described says that Words and Title, the record's share of the content, travel in
	// the event's headers (HdrWords): a publisher of a partitioned stream writes them, an
	// older one never did. Slim says that the content was left on the server (read
	// headers-only, Stream.Folds): Content is nil though Status is ok.
	Described bool
	Words     int
	Title     string
	Slim      bool
	// Partitioned says that the event's subject carries its document's partition (a
	// stream of P > 1 partitions, written by a publisher that knows them: Subjects).
	Partitioned bool

	// Scan events.
	Scan *Scan

	// Config events: the canonical JSON of the configuration (see package project), the
	// file it came from ("" for the built-in default), and Hash, the hex SHA-256 of Config.
	Config []byte
	Source string

	// Set when read from the stream.
	Seq  uint64
	Time time.Time
}

// Prev is what a document event's previous event said of the document: its operation,
// and for an upsert its size, hash, status and inode.
type Prev struct {
	Op     Op
	Size   int64
	Hash   string
	Status Status
	Inode  uint64
}

// Scan describes one scan of the tree; counts are filled on OpScanEnd.
type Scan struct {
	ID        string `json:"id"`
	Documents int    `json:"documents"`
	Published int    `json:"published"`
	Unchanged int    `json:"unchanged"`
	Deleted   int    `json:"deleted"`
	Failed    int    `json:"failed"`
}

// HashContent returns the content hash the contract uses.
func HashContent(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// binaryPrefix is how much of a content IsBinary looks at.
const binaryPrefix = 8 << 10

// IsBinary applies the test of git and grep: a NUL byte in the first 8 KiB.
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), binaryPrefix)], 0) >= 0
}

// MsgID derives the JetStream de-duplication id from what the event says, so that a retried
// publish is dropped by the server. The previous sequence of the document takes part, so
// that a document changed A → B → A within the de-duplication window is not dropped.
func (e *Event) MsgID() string {
	h := sha256.New()
	switch e.Op {
	case OpScanBegin, OpScanEnd:
		fmt.Fprintf(h, "%s\x00%s\x00%s", e.Project, e.Op, e.Scan.ID)
	case OpConfig:
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", e.Project, e.Op, e.Hash, e.PrevSeq)
	default:
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d\x00%d\x00%s\x00%d",
			e.Project, e.Path, e.Op, e.Hash, e.Size, e.Mtime.UnixNano(), e.Status, e.PrevSeq)
		if e.Session != "" {
			fmt.Fprintf(h, "\x00session\x00%s", e.Session)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Describe fills Words and Title from a readable upsert's content, as the catalog's record
// has them (projection.Describe), and marks them Described, to be written in headers.
func (e *Event) Describe() {
	if e.Op != OpUpsert || e.Status != StatusOK || e.Described {
		return
	}
	e.Words, e.Title, e.Described = text.ReaderWords(e.Content), text.ParseMarkdown(e.Content).Title, true
}

// Msg encodes the event as a NATS message on its subject, on a stream of one partition
// (Stream.Msg on any stream).
func (e *Event) Msg() (*nats.Msg, error) { return e.msgOn(NewSubjects(e.Project)) }

// msgOn encodes the event as a NATS message on its subject among subj.
func (e *Event) msgOn(subj Subjects) (*nats.Msg, error) {
	m := nats.NewMsg("")
	m.Header.Set(HdrSchema, strconv.Itoa(SchemaVersion))
	m.Header.Set(HdrOp, string(e.Op))
	switch e.Op {
	case OpUpsert, OpDelete:
		s, err := e.subject(subj)
		if err != nil {
			return nil, err
		}
		m.Subject = s
		m.Header.Set(HdrPath, headerSafe(e.Path))
		if e.Session != "" {
			m.Header.Set(HdrSession, e.Session)
		}
		if e.PrevSeq != 0 {
			m.Header.Set(HdrPrevSeq, strconv.FormatUint(e.PrevSeq, 10))
		}
		if p := e.Prev; p != nil && e.PrevSeq != 0 {
			m.Header.Set(HdrPrevOp, string(p.Op))
			if p.Op == OpUpsert {
				m.Header.Set(HdrPrevSize, strconv.FormatInt(p.Size, 10))
				m.Header.Set(HdrPrevHash, p.Hash)
				m.Header.Set(HdrPrevStatus, string(p.Status))
				if p.Inode != 0 {
					m.Header.Set(HdrPrevInode, strconv.FormatUint(p.Inode, 10))
				}
			}
		}
		if e.Op == OpUpsert {
			m.Header.Set(HdrSize, strconv.FormatInt(e.Size, 10))
			m.Header.Set(HdrMtime, e.Mtime.UTC().Format(time.RFC3339Nano))
			m.Header.Set(HdrHash, e.Hash)
			m.Header.Set(HdrStatus, string(e.Status))
			if e.Inode != 0 {
				m.Header.Set(HdrInode, strconv.FormatUint(e.Inode, 10))
			}
			if e.Reason != "" {
				m.Header.Set(HdrReason, e.Reason)
			}
			if e.Described && e.Status == StatusOK {
				m.Header.Set(HdrWords, strconv.Itoa(e.Words))
				if t := headerSafe(e.Title); t == e.Title && strings.TrimSpace(t) == t {
					m.Header.Set(HdrTitle, t)
				} else {
					m.Header.Set(HdrTitle, strconv.Quote(e.Title))
					m.Header.Set(HdrTitleQuoted, "1")
				}
			}
			m.Data = e.Content
		}
	case OpScanBegin, OpScanEnd:
		if e.Scan == nil || e.Scan.ID == "" {
			return nil, fmt.Errorf("%w: scan event without id", ErrMalformed)
		}
		m.Subject = subj.Scan()
		m.Header.Set(HdrScanID, e.Scan.ID)
		b, err := json.Marshal(e.Scan)
		if err != nil {
			return nil, err
		}
		m.Data = b
	case OpConfig:
		m.Subject = subj.Config()
		m.Header.Set(HdrSource, headerSafe(e.Source))
		m.Header.Set(HdrHash, HashContent(e.Config))
		if e.PrevSeq != 0 {
			m.Header.Set(HdrPrevSeq, strconv.FormatUint(e.PrevSeq, 10))
		}
		e.Hash = HashContent(e.Config)
		m.Data = e.Config
	default:
		return nil, fmt.Errorf("%w: op %q", ErrMalformed, e.Op)
	}
	m.Header.Set(nats.MsgIdHdr, e.MsgID())
	return m, nil
}

// Subject is the subject of a document event: a tree document's or a session document's,
// on a stream of one partition (Stream.EventSubject on any stream).
func (e *Event) Subject() (string, error) { return e.subject(NewSubjects(e.Project)) }

func (e *Event) subject(subj Subjects) (string, error) {
	if e.Session != "" {
		return subj.SessionDocument(e.Session, e.Path)
	}
	return subj.Document(e.Path)
}

// headerSafe returns p as a header value: as it is when it is printable UTF-8, else
// Go-quoted, since a header cannot carry a line break.
func headerSafe(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return strconv.Quote(p)
		}
	}
	return p
}

// ops and statuses are the values an event's op and status take, kept as constants.
var (
	ops      = []string{string(OpUpsert), string(OpDelete), string(OpScanBegin), string(OpScanEnd), string(OpConfig)}
	statuses = []string{string(StatusOK), string(StatusBinary), string(StatusTooLarge), string(StatusInvalidUTF8),
		string(StatusUnreadable), string(StatusOutsideRoot), string(StatusPathTooLong)}
)

// StatusOf is the status s names: the package's constant when it is one, else a copy of s,
// so that what keeps it does not keep what s is a slice of.
func StatusOf(s string) Status { return Status(known(s, statuses)) }

// known returns the constant of values equal to s, or a copy of s when none is.
func known(s string, values []string) string {
	for _, v := range values {
		if s == v {
			return v
		}
	}
	return strings.Clone(s)
}

// Decode reads an event from a message's subject, headers and body. With headersOnly, the
// body is absent by request and the size comes from the Nats-Msg-Size header.
//
// The header values nats.go decodes are slices of one string, the message's header block:
// an event keeps none of them, so that a record built from it (the catalog's, for each of a
// million documents) does not keep the whole block (some 300 bytes) for its 64-byte hash.
func Decode(subject string, h nats.Header, data []byte) (Event, error) {
	var e Event
	v := h.Get(HdrSchema)
	if v == "" {
		return e, fmt.Errorf("%w: no %s header on %q", ErrMalformed, HdrSchema, subject)
	}
	if v != strconv.Itoa(SchemaVersion) {
		return e, fmt.Errorf("%w: %q on %q (this program reads %d)", ErrUnknownSchema, v, subject, SchemaVersion)
	}
	project, err := ProjectOf(subject)
	if err != nil {
		return e, err
	}
	e.Project = project
	e.Op = Op(known(h.Get(HdrOp), ops))
	switch e.Op {
	case OpUpsert, OpDelete:
		// The subject is authoritative: the header is for people and may be quoted.
		subj := NewSubjects(project)
		e.Partitioned = strings.Contains(subject, ".~") // EncodeToken never writes '~'
		if e.Path, err = subj.ParseDocument(subject); err != nil {
			var serr error
			if e.Session, e.Path, serr = subj.ParseSessionDocument(subject); serr != nil {
				return e, err
			}
		}
		if s := h.Get(HdrPrevSeq); s != "" {
			if e.PrevSeq, err = strconv.ParseUint(s, 10, 64); err != nil {
				return e, fmt.Errorf("%w: %s: %v", ErrMalformed, HdrPrevSeq, err)
			}
		}
		if e.Prev, err = decodePrev(h); err != nil {
			return e, err
		}
		if e.Op == OpDelete {
			return e, nil
		}
		if e.Size, err = strconv.ParseInt(h.Get(HdrSize), 10, 64); err != nil {
			return e, fmt.Errorf("%w: %s: %v", ErrMalformed, HdrSize, err)
		}
		if e.Mtime, err = time.Parse(time.RFC3339Nano, h.Get(HdrMtime)); err != nil {
			return e, fmt.Errorf("%w: %s: %v", ErrMalformed, HdrMtime, err)
		}
		e.Hash = strings.Clone(h.Get(HdrHash))
		e.Status = StatusOf(h.Get(HdrStatus))
		if s := h.Get(HdrInode); s != "" {
			if e.Inode, err = strconv.ParseUint(s, 10, 64); err != nil {
				return e, fmt.Errorf("%w: %s: %v", ErrMalformed, HdrInode, err)
			}
		}
		e.Reason = strings.Clone(h.Get(HdrReason))
		e.Content = data
		if w := h.Get(HdrWords); w != "" && e.Status == StatusOK {
			if e.Words, err = strconv.Atoi(w); err != nil {
				return e, fmt.Errorf("%w: %s: %v", ErrMalformed, HdrWords, err)
			}
			e.Title = strings.Clone(h.Get(HdrTitle))
			if h.Get(HdrTitleQuoted) == "1" {
				if e.Title, err = strconv.Unquote(e.Title); err != nil {
					return e, fmt.Errorf("%w: %s: %v", ErrMalformed, HdrTitle, err)
				}
			}
			e.Described = true
		}
	case OpScanBegin, OpScanEnd:
		e.Scan = &Scan{}
		if len(data) > 0 {
			if err := json.Unmarshal(data, e.Scan); err != nil {
				return e, fmt.Errorf("%w: scan body: %v", ErrMalformed, err)
			}
		}
		e.Scan.ID = strings.Clone(h.Get(HdrScanID))
	case OpConfig:
		if subject != NewSubjects(project).Config() {
			return e, fmt.Errorf("%w: config event on %q", ErrMalformed, subject)
		}
		e.Source, e.Hash, e.Config = strings.Clone(h.Get(HdrSource)), strings.Clone(h.Get(HdrHash)), data
		if data != nil && HashContent(data) != e.Hash {
			return e, fmt.Errorf("%w: config body does not match its hash on %q", ErrMalformed, subject)
		}
	default:
		return e, fmt.Errorf("%w: op %q on %q", ErrMalformed, e.Op, subject)
	}
	return e, nil
}

// decodePrev reads the Guide-Prev-* headers; nil when the event has none.
func decodePrev(h nats.Header) (*Prev, error) {
	op := h.Get(HdrPrevOp)
	if op == "" {
		return nil, nil
	}
	p := &Prev{Op: Op(known(op, ops))}
	switch p.Op {
	case OpDelete:
		return p, nil
	case OpUpsert:
	default:
		return nil, fmt.Errorf("%w: %s %q", ErrMalformed, HdrPrevOp, op)
	}
	var err error
	if p.Size, err = strconv.ParseInt(h.Get(HdrPrevSize), 10, 64); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, HdrPrevSize, err)
	}
	p.Hash, p.Status = strings.Clone(h.Get(HdrPrevHash)), StatusOf(h.Get(HdrPrevStatus))
	if s := h.Get(HdrPrevInode); s != "" {
		if p.Inode, err = strconv.ParseUint(s, 10, 64); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, HdrPrevInode, err)
		}
	}
	return p, nil
}
