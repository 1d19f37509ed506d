package session

import (
	"context"

	"github.com/guide/guide/internal/query"
)

// Contexts returns a session's contexts ("" id: no session, the root and no documents).
func (r *Registry) Contexts(id string) query.Contexts {
	r.init()
	if id == "" {
		return query.Contexts{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.get(Token(id)).contexts
	c.History = append([]string(nil), c.History...)
	return c
}

// SetFocus makes folder (already checked) the session's focus, and records it for an
// issued session, so that the session keeps it in any process.
func (r *Registry) SetFocus(ctx context.Context, id, folder string) (query.Contexts, *query.Error) {
	r.init()
	if id == "" {
		return query.Contexts{}, noSession()
	}
	r.mu.Lock()
	st := r.get(Token(id))
	st.contexts = st.contexts.WithFocus(folder)
	c := st.contexts
	c.History = append([]string(nil), c.History...)
	issued := st.issued
	r.mu.Unlock()
	if issued {
		if err := r.save(ctx, st); err != nil {
			// The focus holds here; another process would restore the previous one.
			r.Logger.Warn("focus set but not recorded; another process would not know it", "err", err)
		}
	}
	return c, nil
}
