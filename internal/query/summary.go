package query

import (
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// SummaryResult is what get_summary returns: a short summary built when the document was
// indexed.
type SummaryResult struct {
	Origin
	Path           string               `json:"path"`
	Filename       string               `json:"filename"`
	Status         string               `json:"status"` // always ready
	Title          string               `json:"title,omitempty"`
	Outline        []projection.Heading `json:"outline"`
	FirstParagraph string               `json:"first_paragraph,omitempty"`
	Words          int                  `json:"words"`
	Size           int64                `json:"size"`
	// Partial, when set, says the outline and first paragraph are missing: another
	// partition keeps the document's body, and none of its replicas answered.
	Partial *ContentPartial `json:"partial,omitempty"`
}

// notReady refuses a tool that needs an indexed, readable document.
func notReady(ref, status, reason string) *Error {
	if status == StatusFailed {
		return Errorf(ErrNotReady, "%q failed: %s; it has no text to summarize", ref, reason).
			WithInstruction("Tell the user this document cannot be read as text, and why.")
	}
	return Errorf(ErrNotReady, "%q is %s, not ready yet", ref, status).
		WithInstruction("Use analyze(path) for a document that is not ready; call get_summary again once list shows it ready.")
}

// Summary answers get_summary(path) for a session (token "" for none): refused with
// not_ready until the document is ready.
func Summary(s *projection.Snapshot, c Contexts, pend Pending, raw string) (*SummaryResult, *Error) {
	k, d, qerr := ResolveDocument(s, c.Session, raw)
	if qerr != nil {
		return nil, qerr
	}
	status, reason := pend.Status(k, d)
	ref := ref(k)
	switch status {
	case "":
		return nil, notFound(raw)
	case StatusReady:
	default:
		return nil, notReady(ref, status, reason)
	}
	sum, err := s.Summary(d)
	var away elsewhere
	if away.add(err) {
		err = nil
	}
	if err != nil {
		return nil, Internal(ErrIO, err, "reading the summary of %s", ref)
	}
	r := &SummaryResult{Path: ref, Filename: baseName(k.Path), Status: status, Title: d.Title, Outline: sum.Outline,
		FirstParagraph: sum.FirstParagraph, Words: d.Words, Size: d.Size}
	if r.Outline == nil {
		r.Outline = []projection.Heading{}
	}
	r.Partial = away.partial()
	r.Origin = Scope{Contexts: c}.Annotate(k.Session, k.Path)
	return r, nil
}

// ref is a document's path as the tools show it.
func ref(k events.DocKey) string {
	if k.Session != "" {
		return SessionPrefix + k.Path
	}
	return k.Path
}

// ViewSession answers view("session:<name>") for the session token: its own documents only.
func ViewSession(s *projection.Snapshot, token, raw string, offset int, lim Limits) (any, *Error) {
	lim = lim.orDefault()
	if offset < 0 {
		return nil, Errorf(ErrInvalidArgument, "offset %d is negative", offset)
	}
	name, qerr := CheckSessionName(raw)
	if qerr != nil {
		return nil, qerr
	}
	d, ok := s.SessionDocument(token, name)
	if token == "" || !ok {
		return nil, Errorf(ErrNotFound, "no session document %q", name).
			WithInstruction("Call list to see the documents attached to this session.")
	}
	v, qerr := viewDocument(s, d, offset, "", lim)
	if v != nil {
		v.Path = SessionPrefix + name
	}
	return v, qerr
}

// Analysis is what analyze returns: a document read from the stream's latest event, so
// that it works before the document is indexed.
type Analysis struct {
	Path     string               `json:"path"`
	Filename string               `json:"filename"`
	Status   string               `json:"status"` // processing or ready (as indexed), failed
	Reason   string               `json:"reason,omitempty"`
	Indexed  bool                 `json:"indexed"` // every projection applied this version
	Size     int64                `json:"size"`
	Words    int                  `json:"words"`
	Language string               `json:"language"` // ISO 639-1, "und" when unknown
	Title    string               `json:"title,omitempty"`
	Outline  []projection.Heading `json:"outline"`
	Seq      uint64               `json:"seq"` // the stream sequence of the version analyzed
}

// Analyze answers analyze(path) from the latest event of the document; applied is the
// sequence every projection has applied.
func Analyze(k events.DocKey, e *events.Event, applied uint64) (*Analysis, *Error) {
	ref := ref(k)
	if e == nil || e.Op != events.OpUpsert {
		return nil, notFound(ref)
	}
	a := &Analysis{Path: ref, Filename: baseName(k.Path), Size: e.Size, Seq: e.Seq, Indexed: e.Seq <= applied,
		Outline: []projection.Heading{}, Language: "und"}
	if e.Status != events.StatusOK || events.HashContent(e.Content) != e.Hash {
		d := &projection.Document{Status: e.Status, Reason: e.Reason}
		if e.Status == events.StatusOK {
			d.Status, d.Reason = events.StatusUnreadable, "content does not match its hash"
		}
		a.Status, a.Reason = StatusFailed, failure(d)
		return a, nil
	}
	a.Status = StatusProcessing
	if a.Indexed {
		a.Status = StatusReady
	}
	var sum projection.Summary
	a.Words, a.Title, sum = projection.Describe(e.Content)
	if sum.Outline != nil {
		a.Outline = sum.Outline
	}
	a.Language = DetectLanguage(e.Content)
	return a, nil
}
