package web

import (
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
)

// sessionDefaultMax is the registry's default bound on one session document.
const sessionDefaultMax = session.DefaultMaxDocBytes

func sessionToken(r *http.Request) string { return session.Token(sessionID(r)) }

func (s *Server) pending(r *http.Request) query.Pending {
	return s.Sessions.Pending(r.Context(), sessionID(r))
}

// sessionDocuments lists the browser session's documents with their status, by name,
// from the session's own records (never a walk of the tree).
func (s *Server) sessionDocuments(r *http.Request) []query.ListEntry {
	token := sessionToken(r)
	pend := s.pending(r)
	var out []query.ListEntry
	seen := map[string]bool{}
	add := func(name string, d *projection.Document) {
		st, reason := pend.Status(events.DocKey{Session: token, Path: name}, d)
		if st == "" || seen[name] {
			return
		}
		seen[name] = true
		e := query.ListEntry{Origin: query.Origin{Type: query.ContextSession, ID: query.SessionContextID, InFocus: true},
			Path: query.SessionPrefix + name, Filename: name, Status: st, Reason: reason, SummaryAvailable: st == query.StatusReady}
		if d != nil {
			e.Title, e.Words = d.Title, d.Words
		}
		out = append(out, e)
	}
	_ = s.Catalog.Read(func(snap *projection.Snapshot) error {
		for _, d := range snap.SessionDocuments(token) {
			add(d.Path, d)
		}
		for k, st := range pend.Events {
			if k.Session == token && st.Op == events.OpUpsert {
				if _, ok := snap.SessionDocument(token, k.Path); !ok {
					add(k.Path, nil)
				}
			}
		}
		return nil
	})
	for name := range pend.Uploading {
		add(name, nil)
	}
	slices.SortFunc(out, func(a, b query.ListEntry) int { return strings.Compare(a.Filename, b.Filename) })
	return out
}

// attachment is one file's outcome, as the page's widgets show it.
type attachment struct {
	Filename string `json:"filename"`
	Status   string `json:"status"` // processing, ready or failed
	Reason   string `json:"reason,omitempty"`
	Href     string `json:"href,omitempty"`
}

// attach attaches every file of the form to the browser session, one after another, each
// bounded as the attach tool bounds it.
func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	if r.MultipartForm == nil {
		if err := r.ParseMultipartForm(s.MaxBodyBytes); err != nil {
			s.fail(w, r, http.StatusRequestEntityTooLarge, "The upload is too large or malformed: "+err.Error())
			return
		}
	}
	files := r.MultipartForm.File["files"]
	if len(files) == 0 {
		s.fail(w, r, http.StatusBadRequest, "Choose one or more files to attach.")
		return
	}
	id := sessionID(r)
	out := make([]attachment, 0, len(files))
	for _, fh := range files {
		out = append(out, s.attachOne(r, id, fh))
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"files": out})
		return
	}
	// Without a script, the outcome is a page of its own; the widgets above it show the
	// session's documents as they now stand.
	pg := s.chrome(r, &page{Title: "Attached", Body: attachedBody{Files: out, Back: localPath(r.PostFormValue("return"))}})
	s.render(w, r, http.StatusOK, "attached", pg)
}

type attachedBody struct {
	Files []attachment
	Back  string
}

func (s *Server) attachOne(r *http.Request, id string, fh *multipart.FileHeader) attachment {
	a := attachment{Filename: fh.Filename, Status: query.StatusFailed}
	if max := s.maxUpload(); fh.Size > max {
		a.Reason = fmt.Sprintf("too large: %s bytes; a session document may have at most %s", commas(int(fh.Size)), commas(int(max)))
		return a
	}
	f, err := fh.Open()
	if err != nil {
		a.Reason = "could not read the upload"
		return a
	}
	b, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil {
		a.Reason = "could not read the upload"
		return a
	}
	res, qerr := s.Sessions.Attach(r.Context(), id, fh.Filename, string(b))
	if qerr != nil {
		if qerr.Cause != nil {
			s.Logger.Error("attaching a session document", "err", qerr.Cause)
		}
		a.Reason = qerr.Message
		return a
	}
	a.Filename, a.Status, a.Reason = res.Filename, res.Status, res.Reason
	if a.Status == query.StatusReady {
		a.Href = sessionHref(res.Filename)
	}
	return a
}

// detach removes one of the browser session's documents.
func (s *Server) detach(w http.ResponseWriter, r *http.Request) {
	name := r.PostFormValue("name")
	_, qerr := s.Sessions.Detach(r.Context(), sessionID(r), name)
	if qerr != nil && !(qerr.Type == query.ErrNotFound && wantsJSON(r)) {
		s.failQuery(w, r, qerr)
		return
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"filename": name, "removed": true})
		return
	}
	http.Redirect(w, r, localPath(r.PostFormValue("return")), http.StatusSeeOther)
}

// attachments is the session's documents with their statuses, for the widgets' script.
func (s *Server) attachments(w http.ResponseWriter, r *http.Request) {
	docs := s.sessionDocuments(r)
	out := make([]attachment, 0, len(docs))
	for _, d := range docs {
		a := attachment{Filename: d.Filename, Status: d.Status, Reason: d.Reason}
		if d.Status == query.StatusReady {
			a.Href = sessionHref(d.Filename)
		}
		out = append(out, a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
