package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/guide/guide/internal/query"
)

// statusLine is the status line: the document count and how current it is.
type statusLine struct {
	Documents string `json:"documents"` // "12,345 documents"
	Detail    string `json:"detail"`    // "up to date", "37 changes to apply", ...
	State     string `json:"state"`     // current, behind or error: for the line's colour
	// Progress, while catching up: events applied of the stream's.
	Applied uint64 `json:"applied,omitempty"`
	Total   uint64 `json:"total,omitempty"`
}

// describe says in words how current the projections are.
func describe(st query.Status) statusLine {
	l := statusLine{Documents: plural(st.Documents, "document", "documents"), State: "current"}
	indexLag := uint64(0)
	if st.Index != nil && st.Index.AppliedSeq < st.AppliedSeq {
		indexLag = st.AppliedSeq - st.Index.AppliedSeq
	}
	switch {
	case st.WriteError != "":
		l.State, l.Detail = "error", "cannot write, recent changes may be missing: "+st.WriteError
	case st.StreamError != "":
		l.State, l.Detail = "error", "stream unreachable, answering from what is indexed: "+st.StreamError
	case !st.CaughtUp || !st.InitialScanDone:
		l.State = "behind"
		l.Detail = "indexing"
		if st.StreamLastSeq > 0 {
			l.Applied, l.Total = min(st.AppliedSeq, st.StreamLastSeq), st.StreamLastSeq
			l.Detail = fmt.Sprintf("indexing: %d%% of the stream applied", l.Applied*100/l.Total)
		}
		if !st.InitialScanDone {
			l.Detail += ", first scan not complete"
		}
	case st.Lag > 0 || indexLag > 0:
		l.State = "behind"
		l.Detail = plural(int(max(st.Lag, indexLag)), "change", "changes") + " to apply"
	default:
		l.Detail = "up to date"
	}
	return l
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return commas(n) + " " + many
}

// commas writes n with thousands separators: 12,345.
func commas(n int) string {
	s := strconv.Itoa(n)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}

func (s *Server) currentLine(r *http.Request) statusLine {
	if s.Freshness == nil {
		return statusLine{Documents: "", Detail: "no status", State: "error"}
	}
	return describe(s.Freshness.Status(r.Context()))
}

func (s *Server) statusJSON(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.currentLine(r))
}

// statusEvents streams the status line as server-sent events: once at once, then each
// time it changes, with a comment now and then that keeps proxies from closing it.
func (s *Server) statusEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, "retry: 2000\n\n")
	t := time.NewTicker(s.StatusEvery)
	defer t.Stop()
	var last []byte
	quiet := 0
	for {
		b, _ := json.Marshal(s.currentLine(r))
		if string(b) != string(last) {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			last, quiet = b, 0
			fl.Flush()
		} else if quiet++; time.Duration(quiet)*s.StatusEvery >= 15*time.Second {
			if _, err := fmt.Fprintf(w, ": keep-alive\n\n"); err != nil {
				return
			}
			quiet = 0
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
}
