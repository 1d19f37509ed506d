package owner

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Server serves MCP Streamable HTTP to the project's bridges on the owner's unix socket
// (see Lock.Listen), and counts them by the request each holds open on /attach.
type Server struct {
	// MCP is the MCP endpoint, served at /mcp. Its session ids should outlive the owner (the
	// session registry's, recorded on the stream): a bridge keeps its id across owners.
	MCP http.Handler
	// MaxBody bounds a request's body: a message larger than HTTP clients may send is
	// refused here too (413).
	MaxBody int64
	// ShutdownWait is how long the calls in flight may take once ctx ends.
	ShutdownWait time.Duration
	// Lost, when set, says why this process no longer owns the project (Lock.Lost): a
	// bridge that attaches then is refused, and elects another owner.
	Lost func() error

	attached atomic.Int64
}

// Serve serves on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.MCP)
	mux.HandleFunc("/attach", func(w http.ResponseWriter, r *http.Request) {
		if s.Lost != nil {
			if err := s.Lost(); err != nil {
				http.Error(w, "this owner is stopping: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		s.attached.Add(1)
		defer s.attached.Add(-1)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-ctx.Done():
		}
	})
	// The calls' contexts end once the calls in flight have had ShutdownWait: a call that
	// is still working then (a long match, a slow read) stops, rather than holding the
	// process after it was told to stop.
	calls, endCalls := context.WithCancel(context.Background())
	hs := &http.Server{Handler: http.MaxBytesHandler(mux, s.MaxBody), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return calls }}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), s.ShutdownWait)
		defer cancel()
		_ = hs.Shutdown(sctx)
		endCalls()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Attached is the number of bridges attached now.
func (s *Server) Attached() int64 { return s.attached.Load() }

// AwaitIdle returns true once no bridge has been attached for idle, and false when ctx
// ends first or idle is not positive (an owner that never idles out).
func (s *Server) AwaitIdle(ctx context.Context, idle time.Duration) bool {
	if idle <= 0 {
		return false
	}
	tick := time.NewTicker(min(idle/4, time.Second))
	defer tick.Stop()
	since := time.Now()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
		if s.attached.Load() > 0 {
			since = time.Now()
		} else if time.Since(since) >= idle {
			return true
		}
	}
}
