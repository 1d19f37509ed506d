package session

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// ErrTooManySessions is returned by Admit when a new session finds no room.
var ErrTooManySessions = errors.New("too many MCP sessions")

// Admit makes room for a new session of a client (its network address; "" for one that
// has none, such as a bridge on the owner's socket, which only the process's limit bounds)
// and reserves it: it returns the id to issue (Issue, or the transport's Generate), and
// the ids of the sessions to end to make room, unused for PressureIdle or longer, oldest
// first; the caller ends them (even when err is not nil). It returns ErrTooManySessions,
// wrapped with what to do, when every session in the way is in use. A reserved id that is
// not issued is given back with Unadmit.
func (r *Registry) Admit(client string) (id string, evict []string, err error) {
	r.init()
	now := r.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	total, mine := 0, 0
	for _, st := range r.sessions {
		if st.ended || st.evicting {
			continue
		}
		total++
		if client != "" && st.client == client {
			mine++
		}
	}
	if client != "" && mine >= r.MaxClientSessions {
		v := r.oldestIdle(now, client)
		if v == nil {
			return "", nil, fmt.Errorf("%w: %s has %d sessions open, the most one client may have, and none has been unused for %s; end one (an HTTP DELETE of /mcp with its Mcp-Session-Id) or try again later",
				ErrTooManySessions, client, mine, r.PressureIdle)
		}
		v.evicting = true
		evict = append(evict, v.id)
		total--
	}
	if total >= r.MaxSessions {
		v := r.oldestIdle(now, "")
		if v == nil {
			return "", evict, fmt.Errorf("%w: this server holds %d sessions, its limit, and none has been unused for %s; try again later",
				ErrTooManySessions, total, r.PressureIdle)
		}
		v.evicting = true
		evict = append(evict, v.id)
	}
	for _, v := range evict {
		r.Logger.Info("session ended early to make room for a new one", "session", Token(v), "client", client)
	}
	id = IDPrefix + rand.Text()
	st := r.get(Token(id))
	st.id, st.client = id, client
	return id, evict, nil
}

// Unadmit gives back a session Admit reserved and nothing issued.
func (r *Registry) Unadmit(id string) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.sessions[Token(id)]; ok && !st.issued && !st.ended && len(st.published) == 0 && len(st.uploading) == 0 {
		delete(r.sessions, Token(id))
	}
}

// oldestIdle is the session of client ("" for any) that has been unused longest, if for
// PressureIdle at least and this process knows its id; the caller holds mu.
func (r *Registry) oldestIdle(now time.Time, client string) *state {
	var oldest *state
	for _, st := range r.sessions {
		if st.ended || st.evicting || st.id == "" || len(st.uploading) > 0 ||
			(client != "" && st.client != client) || now.Sub(st.lastActive) < r.PressureIdle {
			continue
		}
		if oldest == nil || st.lastActive.Before(oldest.lastActive) {
			oldest = st
		}
	}
	return oldest
}

// reserveBytes reserves n bytes of session documents for an attach, within
// MaxAttachedBytes: what the catalog holds, what was published here and is not applied
// yet, and what is being published. The caller holds mu, and gives the reservation back
// with published or unreserveBytes.
func (r *Registry) reserveBytes(n int64) (ok bool, held int64) {
	t := r.Catalog.SessionTotals()
	held = t.Bytes + r.uploadingBytes
	for seq, size := range r.pendingBytes {
		if seq <= t.Seq {
			delete(r.pendingBytes, seq) // in the catalog's count now
			continue
		}
		held += size
	}
	if held+n > r.MaxAttachedBytes {
		return false, held
	}
	r.uploadingBytes += n
	return true, held
}

// publishedBytes moves a reservation to the documents published at seq; the caller holds mu.
func (r *Registry) publishedBytes(n int64, seq uint64) {
	r.uploadingBytes -= n
	r.pendingBytes[seq] += n
}

// unreserveBytes gives back a reservation that was not published; the caller holds mu.
func (r *Registry) unreserveBytes(n int64) { r.uploadingBytes -= n }
