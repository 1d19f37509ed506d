package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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
	transport := server.NewStreamableHTTPServer(m, opts...)
	return s.checkSession(s.admit(wholeAnswers(transport), transport))
}

// admittedKey carries, in an initialize request's context, the session id the registry
// reserved for it (Registry.Admit), which the transport's Generate then issues.
type admittedKey struct{}

// admit makes room for the session an initialize request opens, within the registry's
// limits of sessions per process and per client address, before the transport opens it:
// sessions unused for a while are ended through transport (a DELETE, so that it drops what
// it holds of them too), and a client that finds no room is answered a JSON-RPC error that
// says why.
func (s *Server) admit(next, transport http.Handler) http.Handler {
	var refused atomic.Int64     // refusals since the last logged
	var logged atomic.Int64      // when one was last logged, in unix nanoseconds
	const logEvery = time.Minute // a flood of refusals logs one line a minute
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(server.HeaderKeySessionID) != "" || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta *mcp.Meta `json:"_meta"`
			} `json:"params"`
		}
		if err != nil || json.Unmarshal(body, &head) != nil || head.Method != string(mcp.MethodInitialize) ||
			// From protocol version 2026-07-28 on, initialize opens no session.
			mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) || mcp.IsModernProtocol(head.Params.Meta.ProtocolVersion()) {
			next.ServeHTTP(w, r)
			return
		}
		id, evict, err := s.Sessions.Admit(clientAddr(r))
		if len(evict) > 0 {
			// Ended whether or not this client waits for its answer: they count no more.
			ectx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
			for _, v := range evict {
				s.endSession(ectx, transport, v)
			}
			cancel()
		}
		if err != nil {
			n, now := refused.Add(1), time.Now().UnixNano()
			if last := logged.Load(); now-last >= int64(logEvery) && logged.CompareAndSwap(last, now) {
				refused.Add(-n)
				s.Logger.Warn("refused new MCP sessions", "refused", n, "client", clientAddr(r), "err", err)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "60")
			// An answer, not a status: clients show a JSON-RPC error's message, and some
			// take a 4xx to initialize for a server of another transport.
			w.WriteHeader(http.StatusOK)
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": head.ID,
				"error": map[string]any{"code": -32000, "message": "guide: " + err.Error()}})
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), admittedKey{}, id)))
		s.Sessions.Unadmit(id) // nothing, once issued
	})
}

// endSession ends a session through the transport, as its client's DELETE would, or in the
// registry alone when the transport would not.
func (s *Server) endSession(ctx context.Context, transport http.Handler, id string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, "http://localhost/mcp", nil)
	if err == nil {
		req.Header.Set(server.HeaderKeySessionID, id)
		rec := &statusOnly{header: http.Header{}}
		transport.ServeHTTP(rec, req)
		if rec.status == 0 || rec.status == http.StatusOK {
			return
		}
	}
	s.Sessions.End(ctx, id)
}

// statusOnly is a ResponseWriter that keeps the status alone.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return len(p), nil
}
func (s *statusOnly) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

// errReader returns err once what came before it is read (nil: io.EOF).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// clientAddr is the address a request came from, without its port: the key of the limit
// of sessions per client. A request on a unix socket (a bridge on the owner's) has none.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	return host
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
	if id, ok := r.Context().Value(admittedKey{}).(string); ok {
		return admitted{m.r, id}
	}
	return m.r
}

// admitted is the registry as an initialize request that admit made room for sees it: it
// issues the id reserved for it.
type admitted struct {
	*session.Registry
	id string
}

func (m admitted) Generate() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Issue(ctx, m.id); err != nil {
		m.Logger.Warn("session issued but not recorded yet; other processes refuse it until it is", "err", err)
	}
	return m.id
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
