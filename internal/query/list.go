package query

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
)

// Document statuses of list, as a client's upload widget shows them.
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
	l := &listing{pend: pend, seen: map[events.DocKey]bool{}}
	withSession := sc.Session != "" && sc.Folder == ""
	if withSession {
		for _, d := range s.SessionDocuments(sc.Session) {
			l.add(d.Key(), d, sessionOrigin)
		}
	}
	for _, d := range treeDocuments(s, sc) {
		l.add(d.Key(), d, sc.Origin(d.Path))
	}
	// Documents the stream holds and the catalog does not yet: new, still processing.
	filter := sc.Filter()
	for k, st := range pend.Events {
		if l.seen[k] || st.Op != events.OpUpsert || !filter.Match(k.Session, k.Path) {
			continue
		}
		if _, ok := lookup(s, k); ok {
			continue
		}
		o := sessionOrigin
		if k.Session == "" {
			o = sc.Origin(k.Path)
		}
		l.add(k, nil, o)
	}
	if withSession {
		for name := range pend.Uploading {
			if k := (events.DocKey{Session: sc.Session, Path: name}); !l.seen[k] {
				l.add(k, nil, sessionOrigin)
			}
		}
	}
	slices.SortFunc(l.out, func(a, b ListEntry) int {
		r := cmp.Compare(contextRank[a.Type], contextRank[b.Type])
		if r == 0 && a.Type == ContextAncestor {
			// The nearest ancestor first: the deepest folder.
			r = -cmp.Compare(strings.Count(a.ID, "/")+len(a.ID), strings.Count(b.ID, "/")+len(b.ID))
		}
		return cmp.Or(r, strings.Compare(a.Path, b.Path))
	})
	return l.out
}

// sessionOrigin is where a session's own document comes from.
var sessionOrigin = Origin{Type: ContextSession, ID: SessionContextID, InFocus: true}

// listing collects the entries of a listing, each document once, with its status; a
// document without one (deleted, and applied) is left out.
type listing struct {
	pend Pending
	out  []ListEntry
	seen map[events.DocKey]bool
}

func (l *listing) add(k events.DocKey, d *projection.Document, o Origin) {
	status, reason := l.pend.Status(k, d)
	if status == "" {
		return
	}
	l.seen[k] = true
	e := ListEntry{Origin: o, Path: k.Path, Filename: baseName(k.Path), Status: status, Reason: reason,
		SummaryAvailable: status == StatusReady}
	if k.Session != "" {
		e.Path = SessionPrefix + k.Path
	}
	if d != nil {
		e.Title, e.Words = d.Title, d.Words
	}
	l.out = append(l.out, e)
}

// treeDocuments returns the catalog's documents of the tree that the scope covers.
func treeDocuments(s *projection.Snapshot, sc Scope) []*projection.Document {
	var out []*projection.Document
	add := func(d *projection.Document) { out = append(out, d) }
	docsBelow := func(folder string) {
		if f, ok := s.Folder(folder); ok {
			f.EachDoc(add)
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
				out = append(out, f.Docs()...)
			}
		}
	}
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
	if res, ok := listFocusPage(s, sc, pend, f, lim); ok {
		return res.result()
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

// focusPage is a page of the default listing of a focus, found without collecting every
// document available: the counts come from the folders' counts, and the page is read in
// listing order from where it starts, skipping whole folders before it. A listing of the
// root of a large tree costs the page, not the tree.
type focusPage struct {
	res   *ListResult
	total int
	err   *Error
}

func (p focusPage) result() (*ListResult, *Error) { return p.res, p.err }

// listFocusPage answers List as Available and the paging after it would, when nothing
// narrows the listing and nothing is on its way (no pending event, no upload): then every
// document of the catalog in the focus set is listed, with its catalog status.
func listFocusPage(s *projection.Snapshot, sc Scope, pend Pending, f ListFilter, lim Limits) (focusPage, bool) {
	if f.ContextType != "" || f.Status != "" || sc.Folder != "" || sc.All || len(pend.Events) > 0 || len(pend.Uploading) > 0 {
		return focusPage{}, false
	}
	focus, ok := s.Folder(sc.Focus)
	if !ok {
		return focusPage{}, false
	}
	// Session documents first, by path, as Available orders them.
	l := &listing{pend: pend, seen: map[events.DocKey]bool{}}
	if sc.Session != "" {
		for _, d := range s.SessionDocuments(sc.Session) {
			l.add(d.Key(), d, sessionOrigin)
		}
		slices.SortFunc(l.out, func(a, b ListEntry) int { return strings.Compare(a.Path, b.Path) })
	}
	sessions := l.out
	l.out = nil
	var ancestors []*projection.Folder // nearest first: the deepest folder first, as Available orders them
	nAncestors := 0
	for _, a := range enclosingFolders(sc.Focus) {
		if af, ok := s.Folder(a); ok {
			ancestors = append(ancestors, af)
			nAncestors += len(af.Docs())
		}
	}
	nFocus := len(focus.Docs())
	res := &ListResult{Focus: sc.Focus, Scope: sc.Name(), Counts: map[string]int{}, Offset: f.Offset, Documents: []ListEntry{}}
	for t, n := range map[string]int{ContextSession: len(sessions), ContextFocus: nFocus, ContextAncestor: nAncestors,
		ContextDescendant: focus.Documents - nFocus} {
		if n > 0 {
			res.Counts[t] = n
		}
	}
	res.Total = len(sessions) + focus.Documents + nAncestors
	if f.Offset > res.Total {
		return focusPage{err: Errorf(ErrInvalidArgument, "offset %d is past the end (%d documents)", f.Offset, res.Total)}, true
	}
	budget := lim.MaxChars - 500
	end := f.Offset
	// take adds an entry to the page; false when the page is full.
	take := func(e ListEntry) bool {
		if end-f.Offset >= f.Limit {
			return false
		}
		budget -= entrySize(e.Filename, e.Path, e.Title+e.Reason+e.ID) + 60
		if budget < 0 {
			return false
		}
		res.Documents = append(res.Documents, e)
		end++
		return true
	}
	skip := f.Offset
	doc := func(d *projection.Document) bool {
		if skip > 0 {
			skip--
			return true
		}
		l.add(d.Key(), d, sc.Origin(d.Path))
		if len(l.out) == 0 {
			return true
		}
		e := l.out[0]
		l.out = l.out[:0]
		return take(e)
	}
	more := true
	for _, e := range sessions {
		if skip > 0 {
			skip--
			continue
		}
		if more = take(e); !more {
			break
		}
	}
	for _, d := range focus.Docs() {
		if !more {
			break
		}
		more = doc(d)
	}
	for _, a := range ancestors {
		for _, d := range a.Docs() {
			if !more {
				break
			}
			more = doc(d)
		}
	}
	for _, sub := range focus.Folders() {
		if !more {
			break
		}
		more = eachDocByPath(sub, &skip, doc)
	}
	if end < res.Total {
		res.Truncated, res.NextOffset = true, end
		res.Message = fmt.Sprintf("showing %d to %d of %d documents; call list with offset %d for more, or narrow it with context_type, status or folder",
			f.Offset+1, end, res.Total, end)
	}
	return focusPage{res: res}, true
}

// eachDocByPath calls fn for the documents in f and below it in the order of their paths
// (a folder's documents and subfolders interleaved by name), after skipping the first
// *skip of them, whole folders at a time; it stops, returning false, when fn does.
func eachDocByPath(f *projection.Folder, skip *int, fn func(*projection.Document) bool) bool {
	if *skip >= f.Documents {
		*skip -= f.Documents
		return true
	}
	docs, subs := f.Docs(), f.Folders()
	for len(docs) > 0 || len(subs) > 0 {
		// A document's path and a folder's documents' paths share everything up to the
		// document's name and the folder's name with a slash: compare those.
		if len(subs) == 0 || len(docs) > 0 && docs[0].Name() < subs[0].Name()+"/" {
			if *skip > 0 {
				*skip--
			} else if !fn(docs[0]) {
				return false
			}
			docs = docs[1:]
			continue
		}
		if !eachDocByPath(subs[0], skip, fn) {
			return false
		}
		subs = subs[1:]
	}
	return true
}
