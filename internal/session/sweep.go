package session

import (
	"context"
	"time"

	"github.com/guide/guide/internal/backoff"
	"github.com/guide/guide/internal/projection"
)

// Sweep ends sessions idle for longer than TTL (for an issued session: idle in every
// process, as its record says), and deletes the session documents of no live session:
// those of an ended session at once, the others once older than TTL (every one of them
// when all is set).
func (r *Registry) Sweep(ctx context.Context, all bool) {
	r.init()
	now := r.Now()
	r.mu.Lock()
	live, ended := map[string]bool{}, map[string]bool{}
	idle := map[string]map[string]uint64{}
	for t, st := range r.sessions {
		switch {
		case st.ended:
			ended[t] = true
			if now.Sub(st.lastActive) > r.TTL {
				delete(r.sessions, t)
			}
		case now.Sub(st.lastActive) > r.TTL:
			// An issued session may be in use in another process: its record decides.
			delete(r.sessions, t)
			if !st.issued {
				idle[t] = st.published
			}
		default:
			live[t] = true
		}
	}
	r.mu.Unlock()
	for t, published := range idle {
		r.Logger.Info("session idle for longer than the TTL", "session", t, "ttl", r.TTL)
		r.removeAll(ctx, t, published)
	}
	store, err := r.store(ctx)
	if err != nil {
		// Which sessions live elsewhere is unknown: spare every document younger than the TTL.
		all = false
	} else {
		recs, err := store.List(ctx, r.Project)
		if err != nil {
			r.Logger.Warn("cannot list the recorded sessions; this sweep spares their documents", "err", err)
			return
		}
		for _, rec := range recs {
			switch {
			case rec.Ended != nil:
				ended[rec.Token] = true
				r.markEnded(rec.Token) // by another process
			case now.Sub(rec.LastSeen) > r.TTL && !live[rec.Token]:
				r.Logger.Info("session idle for longer than the TTL", "session", rec.Token, "ttl", r.TTL)
				rec.Ended = &now
				if err := store.Put(ctx, rec); err != nil {
					r.Logger.Warn("could not record an idle session as ended", "session", rec.Token, "err", err)
					continue
				}
				ended[rec.Token] = true
			default:
				live[rec.Token] = true // in use here or in another process
			}
		}
	}
	var stale []*projection.Document
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		for _, t := range s.SessionTokens() {
			if live[t] && !ended[t] {
				continue
			}
			for _, d := range s.SessionDocuments(t) {
				if ended[t] || all || now.Sub(d.Mtime) > r.TTL {
					stale = append(stale, d)
				}
			}
		}
		return nil
	})
	for _, d := range stale {
		if _, err := r.remove(ctx, d); err != nil {
			r.Logger.Warn("could not delete an abandoned session document", "name", d.Path, "err", err)
		}
	}
	if len(stale) > 0 {
		r.Logger.Info("deleted abandoned session documents", "documents", len(stale))
	}
}

// watchEnded marks a session this process holds as ended as soon as another process
// records it ended (its client's DELETE reached that one), until ctx ends.
func (r *Registry) watchEnded(ctx context.Context) {
	poll := backoff.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
	for ctx.Err() == nil {
		store, err := r.store(ctx)
		if err == nil {
			// The watch sees only what is written once it runs: a session this process
			// holds may have ended elsewhere before (while this process started, or while
			// the watch was down), so each is read once the watch is on.
			err = store.Watch(ctx, func() { r.readEnded(ctx, store) }, func(rec Record) {
				if rec.Ended == nil || rec.Project != r.Project {
					return
				}
				r.markEnded(rec.Token)
			})
		}
		if ctx.Err() == nil {
			r.Logger.Debug("watching ended sessions; retrying", "err", err)
			if poll.Wait(ctx) != nil {
				return
			}
		}
	}
}

// markEnded records that the session ended elsewhere, if this process holds it.
func (r *Registry) markEnded(token string) {
	r.mu.Lock()
	if st, ok := r.sessions[token]; ok {
		st.ended = true
	}
	r.mu.Unlock()
}

// readEnded reads the record of every session this process holds and has not seen end,
// and marks those that ended elsewhere.
func (r *Registry) readEnded(ctx context.Context, store *Store) {
	r.mu.Lock()
	var tokens []string
	for token, st := range r.sessions {
		if st.issued && !st.ended {
			tokens = append(tokens, token)
		}
	}
	r.mu.Unlock()
	for _, token := range tokens {
		if rec, err := store.Get(ctx, token); err == nil && rec.Ended != nil && rec.Project == r.Project {
			r.markEnded(token)
		}
	}
}

// Run sweeps once the projections have caught up with the stream (caught), then every
// quarter of the TTL (at most every minute), until ctx ends.
func (r *Registry) Run(ctx context.Context, caught <-chan struct{}) {
	r.init()
	select {
	case <-caught:
	case <-ctx.Done():
		return
	}
	go r.watchEnded(ctx)
	r.Sweep(ctx, r.Exclusive)
	every := min(max(r.TTL/4, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Sweep(ctx, false)
		}
	}
}
