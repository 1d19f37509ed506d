package search

import (
	"errors"
	"fmt"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/querylang"
)

// Limits of a page of results, and of the time one search may take: a phrase of the
// commonest words over a large tree reads every position of both, and must not hold a
// reader for seconds.
const (
	Timeout      = 2 * time.Second
	DefaultLimit = 20
	MaxLimit     = 100
)

// Request is one search.
type Request struct {
	Query  querylang.Query
	Folder string // a clean folder path; "" searches everything
	// Scope, when set, replaces Folder: which documents of the tree and of one session
	// the search covers (a session's focus set and its attached documents).
	Scope  *Scope
	Limit  int    // 1..MaxLimit; 0 means DefaultLimit
	Cursor string // from a previous Result's Next, for the following page
}

// Hit is one matching document.
type Hit struct {
	Path    string  `json:"path"`
	Session string  `json:"session,omitempty"` // a session document's session token
	Score   float64 `json:"score"`

	past bool // ranked after the nearness window, by the query's words alone (rerank.go)
}

func (h Hit) key() events.DocKey { return events.DocKey{Session: h.Session, Path: h.Path} }

// Result is a page of hits, best first.
type Result struct {
	Hits  []Hit
	Total uint64 // matching documents, on every page
	Next  string // cursor of the next page; "" on the last
	// Relaxed is set when no document held every word, and the hits hold some of them.
	Relaxed bool
	// Corrections are the words searched instead of words no document holds.
	Corrections []Correction
	// Missing, for a search of several partitions (Fanout), are the partitions none of
	// whose replicas answered: the hits are the other partitions'.
	Missing []int
	// Partitions is the project's number of partitions, when some are Missing.
	Partitions int

	more bool
}

// Errors of a search, besides those of the query itself (querylang).
var (
	// ErrNotOpen is returned by a search before the index is open (or after it is closed).
	ErrNotOpen        = errors.New("the search index is not open yet; try again in a moment")
	ErrInvalidCursor  = errors.New("the cursor is not valid for this query")
	ErrInvalidRequest = errors.New("invalid search request")
	ErrTooBroad       = errors.New("the query is too broad")
)

func errTooBroad() error {
	return fmt.Errorf("%w: it matched too much to rank within %v; add rarer words or a folder", ErrTooBroad, Timeout)
}
