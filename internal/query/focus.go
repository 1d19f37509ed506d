package query

import (
	"strings"

	"github.com/guide/guide/internal/projection"
)

// A context is a folder of the project, named by its path; the root ("") is the outermost
// one. A chat's organization / folder / usecase are three levels of this hierarchy, and
// its availability rules generalize to any depth: with the focus on a
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
	dir := projection.ParentOf(docPath)
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

// enclosingFolders returns the folders that contain folder, nearest first, ending with the
// root ("" itself has none). index's documentFolders differs: a document's folders, outermost first, root left out.
func enclosingFolders(folder string) []string {
	var out []string
	for folder != "" {
		folder = projection.ParentOf(folder)
		out = append(out, folder)
	}
	return out
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
