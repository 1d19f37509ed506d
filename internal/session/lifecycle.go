package session

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/guide/guide/internal/query"
)

// IDPrefix begins every session id the registry issues.
const IDPrefix = "mcp-session-"

// Errors of Validate and Restore.
var (
	ErrUnknownSession = errors.New("session id not issued by this deployment, or expired")
	ErrEnded          = errors.New("session ended")
)

// touchEvery is how often a session's last_seen is written to the store while it is used.
func (r *Registry) touchEvery() time.Duration { return min(max(r.TTL/10, time.Second), time.Minute) }

// Generate issues a new session id and records it in the store (it is the
// SessionIdManager's Generate of mcp-go's Streamable HTTP transport). When the store
// cannot be written the session still works here, and is recorded on its next use.
func (r *Registry) Generate() string {
	id := IDPrefix + rand.Text()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Issue(ctx, id); err != nil {
		r.Logger.Warn("session issued but not recorded yet; other processes refuse it until it is", "err", err)
	}
	return id
}

// Issue records a session id chosen elsewhere (a bridge's own client, say) as issued, so
// that every process of the deployment accepts it. Issuing an id again changes nothing.
func (r *Registry) Issue(ctx context.Context, id string) error {
	r.init()
	if id == "" {
		return ErrUnknownSession
	}
	now := r.Now()
	r.mu.Lock()
	st := r.get(Token(id))
	if st.ended {
		r.mu.Unlock()
		return ErrEnded
	}
	if !st.issued {
		st.issued, st.created = true, now
	}
	st.id = id
	r.mu.Unlock()
	return r.save(ctx, st)
}

// save writes a session's record as the session is now, and notes when. Writes of one
// session follow one another, so that the last one written is of its latest state.
func (r *Registry) save(ctx context.Context, st *state) error {
	store, err := r.store(ctx)
	if err != nil {
		return err
	}
	st.saving.Lock()
	defer st.saving.Unlock()
	r.mu.Lock()
	rec := st.record(r.Project, r.Now())
	r.mu.Unlock()
	if err := store.Put(ctx, rec); err != nil {
		return fmt.Errorf("recording session: %w", err)
	}
	r.mu.Lock()
	st.persisted = rec.LastSeen
	r.mu.Unlock()
	return nil
}

// Validate says whether a session id may be used (the SessionIdManager's Validate): nil
// for a live session, isTerminated for an ended one, an error for an id never issued.
// A session another process issued is restored from the store.
func (r *Registry) Validate(id string) (isTerminated bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = r.Restore(ctx, id)
	if errors.Is(err, ErrEnded) {
		return true, nil
	}
	return false, err
}

// Restore returns a session's contexts, loading the session from the store when this
// process does not hold it yet (it was issued by another process, or before a restart):
// ErrUnknownSession for an id never issued, ErrEnded for an ended session. Its attached
// documents come back with it, since they are named by its token on the stream.
func (r *Registry) Restore(ctx context.Context, id string) (query.Contexts, error) {
	r.init()
	if id == "" {
		return query.Contexts{}, ErrUnknownSession
	}
	token := Token(id)
	now := r.Now()
	r.mu.Lock()
	st, ok := r.sessions[token]
	if ok && (st.issued || st.ended) {
		if st.ended {
			r.mu.Unlock()
			return query.Contexts{}, ErrEnded
		}
		st.lastActive, st.id = now, id
		c := st.contexts
		c.History = append([]string(nil), c.History...)
		touch := now.Sub(st.persisted) >= r.touchEvery()
		if touch {
			st.persisted = now // one toucher at a time
		}
		r.mu.Unlock()
		if touch {
			if err := r.save(ctx, st); err != nil {
				r.Logger.Debug("could not record a session's last use", "err", err)
			}
		}
		return c, nil
	}
	r.mu.Unlock()
	// A process that has just started may not have reached NATS yet: the session may
	// well be one it issued before, so wait for the connection (as long as ctx allows).
	select {
	case <-r.connected:
	case <-ctx.Done():
	}
	store, err := r.store(ctx)
	if err != nil {
		return query.Contexts{}, fmt.Errorf("%w (cannot check it: %w)", ErrUnknownSession, err)
	}
	rec, err := store.Get(ctx, token)
	if errors.Is(err, errNoRecord) || (err == nil && rec.Project != r.Project) {
		return query.Contexts{}, ErrUnknownSession
	}
	if err != nil {
		return query.Contexts{}, fmt.Errorf("%w (cannot check it: %w)", ErrUnknownSession, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st = r.get(token)
	if rec.Ended != nil {
		st.ended = true
		return query.Contexts{}, ErrEnded
	}
	st.id = id
	if !st.issued {
		st.issued, st.created, st.persisted = true, rec.Created, rec.LastSeen
		st.contexts = query.Contexts{Session: token, Focus: rec.Focus, History: rec.History, Chosen: rec.Chosen}
		r.Logger.Debug("session restored", "session", token, "focus", rec.Focus)
	}
	c := st.contexts
	c.History = append([]string(nil), c.History...)
	return c, nil
}

// Terminate ends a session for its client (the SessionIdManager's Terminate: an HTTP
// DELETE): the session is recorded as ended, so that every process refuses it, and its
// documents are deleted. Ending an unknown or ended id is an error.
func (r *Registry) Terminate(id string) (isNotAllowed bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.Restore(ctx, id); err != nil {
		return false, err
	}
	r.End(ctx, id)
	return false, nil
}

// Release forgets what this process holds of a session its transport no longer serves
// (a connection closed, an idle transport session swept) without ending it: an issued
// session lives on in the store for any process. A session never issued (stdio, in
// process) has nothing else to live on in, and ends.
func (r *Registry) Release(ctx context.Context, id string) {
	r.init()
	if id == "" {
		return
	}
	token := Token(id)
	r.mu.Lock()
	st, ok := r.sessions[token]
	issued, ended := ok && st.issued, ok && st.ended
	if issued && !ended {
		delete(r.sessions, token)
	}
	r.mu.Unlock()
	if issued || ended {
		return
	}
	r.End(ctx, id)
}

// End ends a session and deletes its documents: the MCP session ended. An issued
// session is recorded as ended, so that no process accepts its id again.
func (r *Registry) End(ctx context.Context, id string) {
	r.init()
	if id == "" {
		return
	}
	token := Token(id)
	r.mu.Lock()
	st := r.get(token)
	st.ended = true
	issued := st.issued
	published := st.published
	st.published = map[string]uint64{}
	r.mu.Unlock()
	if issued {
		if err := r.save(ctx, st); err != nil {
			r.Logger.Warn("session ended here but not recorded as ended", "session", token, "err", err)
		}
	}
	// The documents published here are deleted even when the catalog does not hold them
	// yet; one published after this point is deleted by its attach, which sees the end.
	r.removeAll(ctx, token, published)
}

// EndAll ends every session that lives only in this process (stdio, in-process): the
// process is stopping. Issued sessions outlive it in the store, with their documents.
// It waits, as long as ctx allows, for the purges detach left running.
func (r *Registry) EndAll(ctx context.Context) {
	r.init()
	r.mu.Lock()
	ending := map[string]map[string]uint64{}
	for t, st := range r.sessions {
		if !st.issued && !st.ended {
			ending[t] = st.published
		}
	}
	r.sessions = make(map[string]*state)
	r.mu.Unlock()
	for t, published := range ending {
		r.removeAll(ctx, t, published)
	}
	r.Forgotten(ctx)
}
