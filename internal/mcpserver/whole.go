package mcpserver

import (
	"net/http"
	"strconv"
	"strings"
)

// wholeAnswers sends the JSON answer to a POST in one write with its length: net/http
// sends a body it is handed in one piece past 2 KB as chunks, and a search's answer of
// ~10 KB left in three writes, each waking its reader. An answer that becomes an event
// stream (a call that sends notifications before its result) passes through as written.
func wholeAnswers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		a := &wholeAnswer{ResponseWriter: w}
		next.ServeHTTP(a, r)
		a.finish()
	})
}

// wholeAnswer holds a response's status and body until its handler returns, unless it
// streams events.
type wholeAnswer struct {
	http.ResponseWriter
	status    int
	streaming bool
	body      []byte
}

func (a *wholeAnswer) WriteHeader(code int) {
	if a.status != 0 || a.streaming {
		return // as net/http, the first status counts
	}
	a.status = code
	if strings.HasPrefix(a.Header().Get("Content-Type"), "text/event-stream") {
		a.stream()
	}
}

func (a *wholeAnswer) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if a.streaming {
		return a.ResponseWriter.Write(p)
	}
	a.body = append(a.body, p...)
	return len(p), nil
}

// Flush sends what is held, and from then on what is written, at once.
func (a *wholeAnswer) Flush() {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	a.stream()
	_ = http.NewResponseController(a.ResponseWriter).Flush()
}

func (a *wholeAnswer) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// stream sends the status and what is held, and passes on the rest.
func (a *wholeAnswer) stream() {
	if a.streaming {
		return
	}
	a.streaming = true
	a.ResponseWriter.WriteHeader(a.status)
	if len(a.body) > 0 {
		_, _ = a.ResponseWriter.Write(a.body)
		a.body = nil
	}
}

// finish sends a held answer, with its length.
func (a *wholeAnswer) finish() {
	if a.streaming || a.status == 0 {
		return // streamed, or nothing written: net/http answers as it would have
	}
	a.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	a.ResponseWriter.WriteHeader(a.status)
	_, _ = a.ResponseWriter.Write(a.body)
}
