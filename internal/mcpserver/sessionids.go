package mcpserver

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/session"
)

// HTTPHandler is the Streamable HTTP transport of the server (built by New), whose
// session ids are issued and checked by the session registry: an id never issued, or
// ended, is answered 404 on every method, as the transport specifies, and an id issued
// by another process of the deployment (a replica, this one before a restart) is
// accepted with its session restored.
func (s *Server) HTTPHandler(m *server.MCPServer, opts ...server.StreamableHTTPOption) http.Handler {
	s.ensureSessions()
	opts = append(opts, server.WithSessionIdManagerResolver(sessionIDs{s.Sessions}))
	return s.checkSession(wholeAnswers(server.NewStreamableHTTPServer(m, opts...)))
}

// checkSession answers 404 to a GET or DELETE that names a session id not issued or
// ended: the transport checks the id of a POST only, and would open a stream for any id
// or answer a DELETE of an unknown one with a success.
func (s *Server) checkSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(server.HeaderKeySessionID)
		if id == "" || (r.Method != http.MethodGet && r.Method != http.MethodDelete) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		_, err := s.Sessions.Restore(ctx, id)
		cancel()
		switch {
		case errors.Is(err, session.ErrEnded):
			http.Error(w, "Not Found: the session has ended; start a new one", http.StatusNotFound)
		case err != nil:
			http.Error(w, "Not Found: no such session; start a new one", http.StatusNotFound)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// sessionIDs hands the transport the registry as its session id manager, except to its
// idle sweeper (a nil request), which only sees this process's use of a session.
type sessionIDs struct{ r *session.Registry }

func (m sessionIDs) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return idleRelease{m.r}
	}
	return m.r
}

// idleRelease is the registry as the transport's idle sweeper sees it: a session idle
// here may be in use in another process, so the sweep releases it here and no more; the
// registry's own sweep ends it once its record says it is idle everywhere.
type idleRelease struct{ *session.Registry }

func (m idleRelease) Terminate(id string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.Release(ctx, id)
	return false, nil
}
