package query

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/projection"
)

// A context is a folder of the project, named by its path; the root ("") is the outermost
// one. chat-contexts-spec.md's organization / folder / usecase are three levels of this
// hierarchy, and its availability rules generalize to any depth: with the focus on a
// folder F, the assistant sees the documents in F and in every folder below F, plus the
// documents directly in each ancestor of F; with the focus on the root, everything.
// Session documents are always available to their own session, never to another.

// Context types: where a document comes from, relative to a session's contexts.
const (
	ContextSession    = "session"    // attached to this session
	ContextFocus      = "focus"      // directly in the focus folder
	ContextAncestor   = "ancestor"   // directly in a folder that contains the focus
	ContextDescendant = "descendant" // in a folder below the focus
	ContextHistorical = "historical" // outside the focus set, inside an earlier focus's set
	ContextOther      = "other"      // outside every context of the session (a widened scope)
)

// contextRank orders listings: session documents first, then the focus set from the
// nearest to the farthest, then what a widened scope added.
var contextRank = map[string]int{ContextSession: 0, ContextFocus: 1, ContextAncestor: 2, ContextDescendant: 3,
	ContextHistorical: 4, ContextOther: 5}

// SessionPrefix marks a session document's path in every tool: "session:notes.md".
// A top-level file of the tree whose name begins with it is shadowed.
const SessionPrefix = "session:"

// SessionContextID is the context_id of session documents: always the caller's own session,
// whose identifier the assistant has no use for.
const SessionContextID = "session"

// MaxHistory bounds a session's list of earlier contexts.
const MaxHistory = 20

// Contexts is what one session knows of its contexts.
type Contexts struct {
	Focus   string   // the focus folder, "" for the root
	History []string // earlier foci, most recent first, without duplicates or the focus
	Session string   // the session's token; "" without a session (no session documents)
	// Chosen is set once the focus was chosen by a focus call: the root a session starts on
	// by default was never the user's context, so it does not go into the history.
	Chosen bool
}

// WithFocus returns the contexts after focusing on folder: the previous focus moves to the
// front of the history. Focusing on the current focus changes nothing.
func (c Contexts) WithFocus(folder string) Contexts {
	if folder == c.Focus {
		c.Chosen = true
		return c
	}
	h := make([]string, 0, len(c.History)+1)
	if c.Chosen {
		h = append(h, c.Focus)
	}
	for _, x := range c.History {
		if x != folder && x != c.Focus {
			h = append(h, x)
		}
	}
	if len(h) > MaxHistory {
		h = h[:MaxHistory]
	}
	return Contexts{Focus: folder, History: h, Session: c.Session, Chosen: true}
}

// FocusType names the kind of the focus context: "root" or "folder".
func FocusType(folder string) string {
	if folder == "" {
		return "root"
	}
	return "folder"
}

// Origin is where a document comes from, as list and search report it.
type Origin struct {
	Type string `json:"context_type"`
	ID   string `json:"context_id"`
	// InFocus is false for a document outside the focus set and the session's documents,
	// which only a widened scope returns: the assistant says when it used one.
	InFocus bool `json:"in_focus"`
}

// below reports whether dir is folder or lies below it.
func below(dir, folder string) bool {
	return folder == "" || dir == folder || strings.HasPrefix(dir, folder+"/")
}

// available reports whether a document directly in dir is in the focus set of focus,
// and from which side.
func available(focus, dir string) (string, bool) {
	switch {
	case dir == focus:
		return ContextFocus, true
	case below(dir, focus):
		return ContextDescendant, true
	case below(focus, dir):
		return ContextAncestor, true
	}
	return "", false
}

// Origin says where the tree document at docPath comes from.
func (c Contexts) Origin(docPath string) Origin {
	dir := parentDir(docPath)
	if t, ok := available(c.Focus, dir); ok {
		id := dir
		return Origin{Type: t, ID: id, InFocus: true}
	}
	for _, h := range c.History {
		if _, ok := available(h, dir); ok {
			return Origin{Type: ContextHistorical, ID: h}
		}
	}
	return Origin{Type: ContextOther, ID: dir}
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// enclosingFolders returns the folders that contain folder, nearest first, ending with the
// root ("" itself has none). index.Ancestors differs: a document's folders, root left out.
func enclosingFolders(folder string) []string {
	var out []string
	for folder != "" {
		folder = parentDir(folder)
		out = append(out, folder)
	}
	return out
}

// Scope is the set of documents a list or search covers: by default the focus set plus
// the session's documents; an explicit Folder (every document below it, no session
// documents) or All (every document, and the session's) widens or moves it.
type Scope struct {
	Contexts
	Folder string
	All    bool
}

// Name says which scope applies: "focus", "folder" or "all".
func (sc Scope) Name() string {
	switch {
	case sc.Folder != "":
		return "folder"
	case sc.All:
		return "all"
	}
	return "focus"
}

// Filter returns the scope in the terms of the full-text index, whose Match also says
// which documents the scope admits.
func (sc Scope) Filter() index.Scope {
	switch {
	case sc.Folder != "": // the narrower request wins over scope "all"
		return index.Scope{Subtree: sc.Folder}
	case sc.All:
		return index.Scope{Session: sc.Session}
	}
	return index.Scope{Session: sc.Session, Subtree: sc.Focus, DirectIn: enclosingFolders(sc.Focus)}
}

// Annotate says where a hit of a search in this scope comes from: session documents are
// the session's, others are placed relative to the focus.
func (sc Scope) Annotate(session, docPath string) Origin {
	if session != "" {
		return Origin{Type: ContextSession, ID: SessionContextID, InFocus: true}
	}
	return sc.Origin(docPath)
}

// CheckFocus checks a context argument: a folder that exists ("" is the root).
func CheckFocus(s *projection.Snapshot, raw string) (string, *Error) {
	p, qerr := CleanPath(raw)
	if qerr != nil {
		return "", qerr
	}
	if strings.HasPrefix(p, SessionPrefix) {
		return "", Errorf(ErrInvalidPath, "%q is a session document; a context is a folder of the project", raw)
	}
	if _, ok := s.Folder(p); ok {
		return p, nil
	}
	if _, ok := s.Document(p); ok {
		return "", Errorf(ErrInvalidPath, "%q is a document; a context is a folder of the project", p).
			WithInstruction("Focus on the folder that holds it, as shown by tree or view.")
	}
	return "", Errorf(ErrNotFound, "no folder %q", p).
		WithInstruction("Check the folder with tree(\"\"), then call focus again.")
}

// Document statuses of list (chat-contexts-spec.md's upload widget).
const (
	StatusUploading  = "uploading"  // a session document whose publish is in flight
	StatusProcessing = "processing" // an event is on the stream, not yet applied by every projection
	StatusReady      = "ready"      // applied, with text content: every tool works
	StatusFailed     = "failed"     // applied, without text content: Reason says why
)

// Pending is what is on its way to the projections, as the query process last saw it.
type Pending struct {
	// Events holds the latest unapplied event per document.
	Events map[events.DocKey]events.DocState
	// Uploading holds the file names of this session's documents being published.
	Uploading map[string]bool
}

// Status says where a document stands: d is its catalog record (nil when the catalog does
// not hold it yet), k its key.
func (p Pending) Status(k events.DocKey, d *projection.Document) (status, reason string) {
	if k.Session != "" && p.Uploading[k.Path] {
		return StatusUploading, ""
	}
	// Events holds only what some projection has not applied: even when the catalog has
	// (d.Seq == st.Seq), another projection (the search index) may not have.
	if st, ok := p.Events[k]; ok && (d == nil || st.Seq >= d.Seq) {
		return StatusProcessing, ""
	}
	if d == nil {
		return "", ""
	}
	if d.Readable() {
		return StatusReady, ""
	}
	return StatusFailed, failure(d)
}

// failure says why a document has no text content, in words.
func failure(d *projection.Document) string {
	what := map[events.Status]string{
		events.StatusBinary:      "binary file",
		events.StatusTooLarge:    "too large",
		events.StatusInvalidUTF8: "not UTF-8 text",
		events.StatusUnreadable:  "unreadable",
		events.StatusOutsideRoot: "a symbolic link that leaves the project root",
	}[d.Status]
	if what == "" {
		what = string(d.Status)
	}
	// The indexer's reason often repeats the status ("binary content"); say it once.
	if d.Reason != "" && !strings.Contains(d.Reason, strings.Fields(what)[0]) {
		return what + ": " + d.Reason
	}
	return what
}

// ListEntry is one document of list: where it comes from, its name and its status.
type ListEntry struct {
	Origin
	Path             string `json:"path"` // "session:<filename>" for a session document
	Filename         string `json:"filename"`
	Status           string `json:"status"`
	Reason           string `json:"reason,omitempty"` // why a document failed
	SummaryAvailable bool   `json:"summary_available"`
	Title            string `json:"title,omitempty"`
	Words            int    `json:"words,omitempty"`
}

// ListFilter narrows and pages a listing.
type ListFilter struct {
	ContextType string // one of the context types, "" for all
	Status      string // one of the statuses, "" for all
	Offset      int
	Limit       int // default DefaultListLimit, at most MaxListLimit
}

// Listing bounds.
const (
	DefaultListLimit = 100
	MaxListLimit     = 500
)

// ListResult is what list returns.
type ListResult struct {
	Focus      string         `json:"focus"`
	Scope      string         `json:"scope"` // focus, folder or all
	Folder     string         `json:"folder,omitempty"`
	Total      int            `json:"total"`  // documents matching, before paging
	Counts     map[string]int `json:"counts"` // documents matching, by context type
	Offset     int            `json:"offset"`
	Documents  []ListEntry    `json:"documents"`
	NextOffset int            `json:"next_offset,omitempty"`
	Truncated  bool           `json:"truncated,omitempty"`
	Message    string         `json:"message,omitempty"`
}

func checkListFilter(f ListFilter) (ListFilter, *Error) {
	if f.ContextType != "" {
		if _, ok := contextRank[f.ContextType]; !ok {
			return f, Errorf(ErrInvalidArgument, "context_type %q is not one of session, focus, ancestor, descendant, historical, other", f.ContextType)
		}
	}
	switch f.Status {
	case "", StatusUploading, StatusProcessing, StatusReady, StatusFailed:
	default:
		return f, Errorf(ErrInvalidArgument, "status %q is not one of uploading, processing, ready, failed", f.Status)
	}
	if f.Offset < 0 {
		return f, Errorf(ErrInvalidArgument, "offset %d is negative", f.Offset)
	}
	if f.Limit <= 0 {
		f.Limit = DefaultListLimit
	}
	if f.Limit > MaxListLimit {
		return f, Errorf(ErrInvalidArgument, "limit %d is over %d", f.Limit, MaxListLimit)
	}
	return f, nil
}

// Available collects every document of the scope, with its origin and status, in listing
// order: session documents, then by context type, then by path.
func Available(s *projection.Snapshot, sc Scope, pend Pending) []ListEntry {
	var out []ListEntry
	seen := map[events.DocKey]bool{}
	add := func(k events.DocKey, d *projection.Document, o Origin) {
		status, reason := pend.Status(k, d)
		if status == "" {
			return
		}
		seen[k] = true
		e := ListEntry{Origin: o, Path: k.Path, Filename: baseName(k.Path), Status: status, Reason: reason,
			SummaryAvailable: status == StatusReady}
		if k.Session != "" {
			e.Path = SessionPrefix + k.Path
		}
		if d != nil {
			e.Title, e.Words = d.Title, d.Words
		}
		out = append(out, e)
	}
	tree := func(d *projection.Document) { add(d.Key(), d, sc.Origin(d.Path)) }
	sessionOrigin := Origin{Type: ContextSession, ID: SessionContextID, InFocus: true}

	if sc.Session != "" && sc.Folder == "" {
		for _, d := range s.SessionDocuments(sc.Session) {
			add(d.Key(), d, sessionOrigin)
		}
	}
	docsBelow := func(folder string) {
		if f, ok := s.Folder(folder); ok {
			eachDoc(f, tree)
		}
	}
	switch {
	case sc.Folder != "": // as in Filter: the narrower request wins over scope "all"
		docsBelow(sc.Folder)
	case sc.All:
		docsBelow("")
	default:
		docsBelow(sc.Focus)
		for _, a := range enclosingFolders(sc.Focus) {
			if f, ok := s.Folder(a); ok {
				for _, d := range f.Docs() {
					tree(d)
				}
			}
		}
	}
	// Documents the stream holds and the catalog does not yet: new, still processing.
	filter := sc.Filter()
	for k, st := range pend.Events {
		if seen[k] || st.Op != events.OpUpsert || !filter.Match(k.Session, k.Path) {
			continue
		}
		if _, ok := lookup(s, k); ok {
			continue
		}
		o := sessionOrigin
		if k.Session == "" {
			o = sc.Origin(k.Path)
		}
		add(k, nil, o)
	}
	if sc.Session != "" && sc.Folder == "" {
		for name := range pend.Uploading {
			if k := (events.DocKey{Session: sc.Session, Path: name}); !seen[k] {
				add(k, nil, sessionOrigin)
			}
		}
	}
	slices.SortFunc(out, func(a, b ListEntry) int {
		r := cmp.Compare(contextRank[a.Type], contextRank[b.Type])
		if r == 0 && a.Type == ContextAncestor {
			// The nearest ancestor first: the deepest folder.
			r = -cmp.Compare(strings.Count(a.ID, "/")+len(a.ID), strings.Count(b.ID, "/")+len(b.ID))
		}
		return cmp.Or(r, strings.Compare(a.Path, b.Path))
	})
	return out
}

func lookup(s *projection.Snapshot, k events.DocKey) (*projection.Document, bool) {
	if k.Session != "" {
		return s.SessionDocument(k.Session, k.Path)
	}
	return s.Document(k.Path)
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// List answers list: the documents of the scope with their origin and status, filtered and
// paged.
func List(s *projection.Snapshot, sc Scope, pend Pending, f ListFilter, lim Limits) (*ListResult, *Error) {
	lim = lim.orDefault()
	f, qerr := checkListFilter(f)
	if qerr != nil {
		return nil, qerr
	}
	if sc.Folder != "" {
		p, qerr := CleanPath(sc.Folder)
		if qerr != nil {
			return nil, qerr
		}
		if _, ok := s.Folder(p); !ok {
			return nil, Errorf(ErrNotFound, "no folder %q", p).WithInstruction("Check the folder with tree(\"\"), then call list again.")
		}
		sc.Folder = p
	}
	all := Available(s, sc, pend)
	res := &ListResult{Focus: sc.Focus, Scope: sc.Name(), Folder: sc.Folder, Counts: map[string]int{}, Offset: f.Offset,
		Documents: []ListEntry{}}
	var match []ListEntry
	for _, e := range all {
		if (f.ContextType == "" || e.Type == f.ContextType) && (f.Status == "" || e.Status == f.Status) {
			match = append(match, e)
			res.Counts[e.Type]++
		}
	}
	res.Total = len(match)
	if f.Offset > len(match) {
		return nil, Errorf(ErrInvalidArgument, "offset %d is past the end (%d documents)", f.Offset, len(match))
	}
	budget := lim.MaxChars - 500
	end := f.Offset
	for end < len(match) && end-f.Offset < f.Limit {
		e := match[end]
		budget -= entrySize(e.Filename, e.Path, e.Title+e.Reason+e.ID) + 60
		if budget < 0 {
			break
		}
		res.Documents = append(res.Documents, e)
		end++
	}
	if end < len(match) {
		res.Truncated, res.NextOffset = true, end
		res.Message = fmt.Sprintf("showing %d to %d of %d documents; call list with offset %d for more, or narrow it with context_type, status or folder",
			f.Offset+1, end, len(match), end)
	}
	return res, nil
}

// FocusResult is what focus returns: the session's contexts and what they make available.
type FocusResult struct {
	Focus     string         `json:"focus"`
	FocusType string         `json:"focus_type"` // root or folder
	History   []string       `json:"history"`    // earlier contexts, most recent first
	Counts    map[string]int `json:"counts"`     // available documents by origin
	Documents int            `json:"documents"`  // available documents in all
}

// Focus reports a session's contexts with the counts of available documents by origin.
func Focus(s *projection.Snapshot, c Contexts, pend Pending) *FocusResult {
	r := &FocusResult{Focus: c.Focus, FocusType: FocusType(c.Focus), History: c.History, Counts: map[string]int{}}
	if r.History == nil {
		r.History = []string{}
	}
	for _, e := range Available(s, Scope{Contexts: c}, pend) {
		r.Counts[e.Type]++
		r.Documents++
	}
	return r
}

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
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", Errorf(ErrInvalidPath, "file name %q contains a control character", name)
		}
	}
	return name, nil
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
