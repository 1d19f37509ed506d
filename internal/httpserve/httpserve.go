// Package httpserve serves a query process over HTTP for more than one machine: the MCP
// endpoint behind DNS-rebinding protection, a bearer token and request size limits, plus
// the operations endpoints /healthz and /metrics, optional TLS, and a graceful shutdown
// that lets in-flight calls finish.
package httpserve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// Defaults, in one place.
const (
	DefaultMaxBodyBytes    = 4 << 20
	DefaultShutdownTimeout = 15 * time.Second
	maxHeaderBytes         = 64 << 10
)

// ErrNoToken is returned by Listen for a non-loopback address without a token: anyone on
// the network could otherwise read the whole project.
var ErrNoToken = errors.New("a bearer token is required to listen on a non-loopback address (--token-file or $GUIDE_TOKEN)")

// Health says whether the process is ready for traffic, and what to show about it.
type Health func(ctx context.Context) (ready bool, body any)

// Server is the HTTP face of a query process. Set the fields, then call Listen and Serve.
type Server struct {
	Addr string // host:port; default 127.0.0.1:8080
	// Token, when set, is required as "Authorization: Bearer TOKEN" on /mcp and /metrics.
	Token string
	// AllowedHosts are Host header values (without port) accepted besides loopback names
	// and the literal address listened on; "*" accepts any.
	AllowedHosts []string
	// AllowedOrigins are Origin header values ("https://app.example.com") accepted besides
	// loopback origins; "*" accepts any. Requests without Origin (non-browser) pass.
	AllowedOrigins []string
	TLSCert        string
	TLSKey         string
	MaxBodyBytes   int64         // default DefaultMaxBodyBytes
	ShutdownWait   time.Duration // how long Shutdown waits for in-flight calls; default DefaultShutdownTimeout

	MCP     http.Handler // served at /mcp
	Metrics http.Handler // served at /metrics; nil: not served
	Health  Health       // served at /healthz; nil: always ready
	Logger  *slog.Logger
	// Web is served at / (every path but /mcp, /healthz and /metrics), behind the same Host
	// and Origin checks and body limit as /mcp; it checks the token itself, since a browser
	// signs in with a form. nil: not served.
	Web http.Handler

	ln       net.Listener
	srv      *http.Server
	draining chan struct{} // closed when shutdown begins: ends long-lived event streams
}

// Listen validates the settings and binds the address.
func (s *Server) Listen() error {
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.Addr == "" {
		s.Addr = "127.0.0.1:8080"
	}
	if s.MaxBodyBytes == 0 {
		s.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if s.ShutdownWait == 0 {
		s.ShutdownWait = DefaultShutdownTimeout
	}
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", s.Addr, err)
	}
	if !isLoopback(host) && s.Token == "" {
		return fmt.Errorf("--http %s: %w", s.Addr, ErrNoToken)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return errors.New("TLS needs both --tls-cert and --tls-key")
	}
	var tlsConf *tls.Config
	if s.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
		if err != nil {
			return fmt.Errorf("TLS certificate: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.Addr, err)
	}
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	}
	s.ln = ln
	s.draining = make(chan struct{})
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
		// No WriteTimeout: event streams stay open as long as the client listens.
	}
	return nil
}

// URL is the base URL of the listener (http or https), once Listen returned.
func (s *Server) URL() string {
	scheme := "http"
	if s.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + s.ln.Addr().String()
}

// ListenAddr is the bound address, once Listen returned.
func (s *Server) ListenAddr() net.Addr { return s.ln.Addr() }

// Serve serves until ctx ends, then shuts down gracefully: it stops accepting, ends the
// event streams, waits up to ShutdownWait for in-flight calls to finish, and returns.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Logger.Info("HTTP shutting down; waiting for in-flight calls", "within", s.ShutdownWait)
	close(s.draining)
	sctx, cancel := context.WithTimeout(context.Background(), s.ShutdownWait)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		_ = s.srv.Close()
		return fmt.Errorf("HTTP shutdown: %w", err)
	}
	return nil
}

// Handler is the whole HTTP surface: /mcp, /healthz, /metrics and the web page.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mcpH := s.MCP
	if mcpH == nil {
		mcpH = http.NotFoundHandler()
	}
	// Every endpoint is behind the Host and Origin checks: a page whose DNS name was
	// rebound to this address reads none of them. Probes of the operations endpoints come
	// by IP address too (a rebinding page always has a DNS name), so those accept any
	// IP-literal Host.
	mux.Handle("/mcp", s.checkOrigin(s.checkHost(s.authorize(s.limitBody(s.endOnDrain(mcpH))), false)))
	mux.Handle("/healthz", s.checkOrigin(s.checkHost(http.HandlerFunc(s.healthz), true)))
	if s.Web != nil {
		mux.Handle("/", s.checkOrigin(s.checkHost(s.limitBody(s.endOnDrain(s.Web)), false)))
	}
	if s.Metrics != nil {
		mux.Handle("/metrics", s.checkOrigin(s.checkHost(s.authorize(s.Metrics), true)))
	}
	return mux
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ready, body := true, any(map[string]any{})
	if s.Health != nil {
		ready, body = s.Health(r.Context())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(body)
}

// checkHost refuses Host headers that are not loopback, the address listened on or
// allowed (or, with anyIP, any IP address): a web page whose DNS name was rebound to this
// address must not reach it.
func (s *Server) checkHost(next http.Handler, anyIP bool) http.Handler {
	listenHost, _, _ := net.SplitHostPort(s.Addr)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Host
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		}
		h = strings.Trim(h, "[]")
		if isLoopback(h) || (h != "" && strings.EqualFold(h, listenHost) && !isUnspecified(listenHost)) ||
			matchesAny(h, s.AllowedHosts) || (anyIP && isIP(h)) {
			next.ServeHTTP(w, r)
			return
		}
		s.Logger.Warn("refused a request for an unknown Host", "host", r.Host, "remote", r.RemoteAddr)
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not allowed (see --allowed-host)", r.Host), http.StatusForbidden)
	})
}

// checkOrigin refuses browser requests from origins other than loopback or allowed ones.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := r.Header.Get("Origin")
		if o == "" || matchesAny(o, s.AllowedOrigins) {
			next.ServeHTTP(w, r)
			return
		}
		if u, err := url.Parse(o); err == nil && (u.Scheme == "http" || u.Scheme == "https") && isLoopback(u.Hostname()) {
			next.ServeHTTP(w, r)
			return
		}
		s.Logger.Warn("refused a request from an unknown Origin", "origin", o, "remote", r.RemoteAddr)
		http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed (see --allowed-origin)", o), http.StatusForbidden)
	})
}

// authorize requires the bearer token, when there is one. Both sides are hashed first so
// that the comparison takes the same time whatever the length of the guess.
func (s *Server) authorize(next http.Handler) http.Handler {
	if s.Token == "" {
		return next
	}
	want := sha256.Sum256([]byte(s.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="guide"`)
			http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer returns the credentials of an Authorization header of the Bearer scheme, whose
// name is case-insensitive (RFC 9110, section 11.1).
func bearer(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(cred), true
}

// limitBody refuses request bodies over MaxBodyBytes: 413 when the length is declared,
// and a read error (which the MCP handler reports) when a chunked body grows past it.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.MaxBodyBytes {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: at most %d bytes", s.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// endOnDrain ends long-lived GET event streams when shutdown begins, since
// http.Server.Shutdown waits for every request; POSTs (tool calls) run to completion.
func (s *Server) endOnDrain(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || s.draining == nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-s.draining:
				cancel()
			case <-ctx.Done():
			}
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func isLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func isIP(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}

func isUnspecified(host string) bool {
	if host == "" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsUnspecified()
}

func matchesAny(v string, allowed []string) bool {
	return slices.ContainsFunc(allowed, func(a string) bool { return a == "*" || strings.EqualFold(a, v) })
}

// ReadToken reads a bearer token from a file (trimmed), else from the environment
// variable env; "" when neither is set. A token file readable by others is refused.
func ReadToken(file, env string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(env)), nil
	}
	st, err := os.Stat(file)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s is readable by others (mode %v); chmod 600 it", file, st.Mode().Perm())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", file)
	}
	return t, nil
}
