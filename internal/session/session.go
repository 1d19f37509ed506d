// Package session keeps what a query process knows of each MCP session: its focus context
// and history, and its session documents, which travel through the event stream on the
// session's own subjects like any document, so that every projection indexes them.
//
// A session the registry issued (Generate, or Issue for an id chosen elsewhere) is
// recorded in a Store shared by the deployment: any query process (this one restarted,
// another replica, a new owner) accepts its id and Restores its focus and history, and
// its documents are on the stream already. An id never issued, or ended, is refused.
//
// The files, by job: session.go is what one session holds (its state); registry.go the
// Registry, its settings and its lazy binding to NATS (the stream, the session store);
// lifecycle.go how a session id is issued, validated, restored, released and ended;
// focus.go its focus and history; documents.go attaching and detaching its documents
// (publishing them on the stream, waiting for the projections to apply them); sweep.go
// the TTL sweeps and the watch of sessions ended by another process; store.go the
// records of issued sessions, shared by the deployment.
package session

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/guide/guide/internal/query"
)

// Token derives a session's token, which names its documents on the stream, from its MCP
// session id. The id is a bearer credential of the HTTP transport; the stream, readable by
// every process of the deployment, sees only this one-way hash of it.
func Token(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("guide-session\x00" + id))
	return hex.EncodeToString(sum[:16])
}

// state is what this process holds of one session: its contexts (focus and history),
// when it was last used, the documents it is publishing and those it published, and
// whether it is issued (recorded in the store) or ended.
type state struct {
	contexts   query.Contexts
	lastActive time.Time
	uploading  map[string]bool
	// issued: the session is recorded in the store (it outlives this process); created
	// and persisted are its record's creation and last write of last_seen.
	issued    bool
	created   time.Time
	persisted time.Time
	// ended: the session ended; attach refuses it and removes what it published.
	ended bool
	// id is the session's id, where this process learnt it (issued or restored here): a
	// session ended to make room is ended by it. client is the address it was admitted
	// from (see Admit); evicting: it is being ended to make room, and counts no more.
	id       string
	client   string
	evicting bool
	// saving serialises the writes of the session's record, each of its latest state.
	saving sync.Mutex
	// published holds the documents this process published for the session and has not
	// deleted, by name, with their stream sequence: under load the catalog may not hold
	// them yet, and detach and End must delete them all the same.
	published map[string]uint64
}

func (st *state) record(project string, now time.Time) Record {
	rec := Record{Token: st.contexts.Session, Project: project, Created: st.created, LastSeen: now,
		Focus: st.contexts.Focus, History: append([]string(nil), st.contexts.History...), Chosen: st.contexts.Chosen}
	if st.ended {
		rec.Ended = &now
	}
	return rec
}

// get returns the state of a session, creating it; the caller holds mu.
func (r *Registry) get(token string) *state {
	st, ok := r.sessions[token]
	if !ok {
		st = &state{contexts: query.Contexts{Session: token}, uploading: map[string]bool{}, published: map[string]uint64{}}
		r.sessions[token] = st
	}
	st.lastActive = r.Now()
	return st
}

func errEnded() *query.Error {
	return query.Errorf(query.ErrNoSession, "this MCP session has ended").
		WithInstruction("Tell the user the session ended; the client must start a new one.")
}

func noSession() *query.Error {
	return query.Errorf(query.ErrNoSession, "this connection has no MCP session: contexts and session documents need one").
		WithInstruction("Tell the user that focus and attached documents need a client that keeps an MCP session (stdio, or Streamable HTTP with protocol version 2025-11-25 or earlier).")
}
