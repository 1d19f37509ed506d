package query

import "github.com/guide/guide/internal/index/search"

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
func (sc Scope) Filter() search.Scope {
	switch {
	case sc.Folder != "": // the narrower request wins over scope "all"
		return search.Scope{Subtree: sc.Folder}
	case sc.All:
		return search.Scope{Session: sc.Session}
	}
	return search.Scope{Session: sc.Session, Subtree: sc.Focus, DirectIn: enclosingFolders(sc.Focus)}
}

// Annotate says where a hit of a search in this scope comes from: session documents are
// the session's, others are placed relative to the focus.
func (sc Scope) Annotate(session, docPath string) Origin {
	if session != "" {
		return sessionOrigin
	}
	return sc.Origin(docPath)
}
