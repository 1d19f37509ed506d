package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
)

func (r *Registry) notePublished(seq uint64) {
	for {
		last := r.published.Load()
		if seq <= last || r.published.CompareAndSwap(last, seq) {
			return
		}
	}
}

// Pending is what is on its way to the projections, as a session sees it: the events the
// stream holds that not every projection has applied (documents processing), and the
// session's documents being published (uploading). The answer covers what this process
// published last, so that a session's attach shows in its next list at once.
func (r *Registry) Pending(ctx context.Context, id string) query.Pending {
	r.init()
	return query.Pending{Uploading: r.Uploading(id), Events: r.tracker().Unapplied(ctx, r.published.Load())}
}

// Uploading returns the names of a session's documents being published.
func (r *Registry) Uploading(id string) map[string]bool {
	r.init()
	if id == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	if st, ok := r.sessions[Token(id)]; ok {
		for n := range st.uploading {
			out[n] = true
		}
	}
	return out
}

// AttachResult is what attach returns.
type AttachResult struct {
	Path     string   `json:"path"` // session:<filename>
	Filename string   `json:"filename"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason,omitempty"`
	Statuses []string `json:"statuses"` // the statuses it went through, in order
	Size     int64    `json:"size"`
	Words    int      `json:"words"`
	Title    string   `json:"title,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// Attach publishes a session document on the session's subject and returns once every
// projection has applied it (or AttachWait passed), so that view, list, get_summary and
// search of the session see it as soon as attach answers ready.
func (r *Registry) Attach(ctx context.Context, id, rawName, content string) (*AttachResult, *query.Error) {
	r.init()
	if id == "" {
		return nil, noSession()
	}
	name, qerr := query.CheckSessionName(rawName)
	if qerr != nil {
		return nil, qerr
	}
	if int64(len(content)) > r.MaxDocBytes {
		return nil, query.Errorf(query.ErrTooLarge, "%q is %d bytes; a session document may have at most %d", name, len(content), r.MaxDocBytes).
			WithInstruction("Tell the user the document is too large to attach; they may attach a part of it.")
	}
	token := Token(id)
	var prev *projection.Document
	held := map[string]bool{}
	if err := r.Catalog.Read(func(s *projection.Snapshot) error {
		for _, d := range s.SessionDocuments(token) {
			held[d.Path] = true
		}
		prev, _ = s.SessionDocument(token, name)
		return nil
	}); err != nil {
		return nil, query.Internal(query.ErrIO, err, "attaching %q", name)
	}
	r.mu.Lock()
	st := r.get(token)
	if st.ended {
		r.mu.Unlock()
		return nil, errEnded()
	}
	if st.uploading[name] {
		r.mu.Unlock()
		return nil, query.Errorf(query.ErrInvalidArgument, "%q is being attached already", name)
	}
	// The session's documents are those the catalog holds, and those published here that
	// it may not hold yet, and those being published: counted under mu, with this one
	// reserved below, concurrent attaches cannot pass the limit together.
	for n := range st.published {
		held[n] = true
	}
	for n := range st.uploading {
		held[n] = true
	}
	if !held[name] && len(held) >= r.MaxDocs {
		r.mu.Unlock()
		return nil, query.Errorf(query.ErrTooLarge, "this session has %d documents attached; the limit is %d", len(held), r.MaxDocs).
			WithInstruction("Tell the user to detach a document before attaching another.")
	}
	size := int64(len(content))
	if ok, held := r.reserveBytes(size); !ok {
		r.mu.Unlock()
		return nil, query.Errorf(query.ErrTooLarge, "the server holds %d bytes of session documents, of every session; %q (%d bytes) would pass its limit of %d", held, name, size, r.MaxAttachedBytes).
			WithInstruction("Tell the user the server has no room for more attached documents now: detaching documents, or ending sessions no longer in use, makes room.")
	}
	st.uploading[name] = true
	r.mu.Unlock()
	res := &AttachResult{Path: query.SessionPrefix + name, Filename: name, Size: int64(len(content)),
		Statuses: []string{query.StatusUploading}}

	b := []byte(content)
	e := &events.Event{Op: events.OpUpsert, Project: r.Project, Session: token, Path: name, Size: int64(len(b)),
		Mtime: r.Now().UTC(), Hash: events.HashContent(b), Status: events.StatusOK, Content: b}
	if prev != nil {
		e.PrevSeq = prev.Seq
	}
	if events.IsBinary(b) {
		e.Status, e.Reason, e.Content = events.StatusBinary, "a NUL byte in the first 8 KiB", nil
	}
	var seq uint64
	stream, err := r.stream()
	if err == nil {
		seq, err = stream.PublishSync(ctx, e)
	}
	if err == nil {
		r.notePublished(seq)
	}
	r.mu.Lock()
	delete(st.uploading, name)
	if err == nil {
		st.published[name] = seq
		r.publishedBytes(size, seq)
	} else {
		r.unreserveBytes(size)
	}
	ended := st.ended
	r.mu.Unlock()
	if err == nil && ended {
		// The session ended while this document was published, and End may have listed
		// the session's documents before this one was applied: delete it here, so that no
		// document outlives its session.
		if _, rerr := r.remove(context.WithoutCancel(ctx), &projection.Document{Session: token, Path: name, Seq: seq}); rerr == nil {
			r.mu.Lock()
			delete(st.published, name)
			r.mu.Unlock()
		} else {
			r.Logger.Warn("could not delete a document attached as its session ended; the next sweep retries", "name", name, "err", rerr)
		}
		return nil, errEnded()
	}
	if err != nil {
		if errors.Is(err, errNotConnected) {
			return nil, query.Errorf(query.ErrIO, "attaching %q: %v", name, err)
		}
		return nil, query.Internal(query.ErrIO, err, "attaching %q", name)
	}
	res.Statuses = append(res.Statuses, query.StatusProcessing)
	if !r.waitApplied(ctx, seq) {
		res.Status = query.StatusProcessing
		res.Message = fmt.Sprintf("published, not indexed yet after %s; list shows when it is ready, and analyze reads it now", r.AttachWait)
		return res, nil
	}
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		d, ok := s.SessionDocument(token, name)
		if !ok {
			res.Status = query.StatusProcessing
			return nil
		}
		res.Status, res.Reason = query.Pending{}.Status(d.Key(), d)
		res.Words, res.Title = d.Words, d.Title
		return nil
	})
	res.Statuses = append(res.Statuses, res.Status)
	r.Logger.Debug("session document attached", "session", token, "name", name, "seq", seq, "status", res.Status)
	return res, nil
}

// waitApplied waits until every projection has applied seq, up to AttachWait: woken by
// each batch a projection applies, so that it answers as soon as the last one has.
func (r *Registry) waitApplied(ctx context.Context, seq uint64) bool {
	ctx, cancel := context.WithTimeout(ctx, r.AttachWait)
	defer cancel()
	return r.tracker().WaitApplied(ctx, seq)
}

// DetachResult is what detach returns.
type DetachResult struct {
	Path     string `json:"path"`
	Detached bool   `json:"detached"`
}

// Detach deletes one of the session's documents: a delete event, then the subject's
// history purged down to that event, so that the content leaves the stream too.
func (r *Registry) Detach(ctx context.Context, id, rawName string) (*DetachResult, *query.Error) {
	r.init()
	if id == "" {
		return nil, noSession()
	}
	name, qerr := query.CheckSessionName(rawName)
	if qerr != nil {
		return nil, qerr
	}
	token := Token(id)
	r.mu.Lock()
	st := r.get(token)
	pubSeq, published := st.published[name]
	r.mu.Unlock()
	var d *projection.Document
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		d, _ = s.SessionDocument(token, name)
		return nil
	})
	if published && (d == nil || d.Seq < pubSeq) {
		// Published here and not applied yet (the projections lag): delete it all the same.
		d = &projection.Document{Session: token, Path: name, Seq: pubSeq}
	}
	if d == nil {
		return nil, query.Errorf(query.ErrNotFound, "no session document %q", name).
			WithInstruction("Call list to see the documents attached to this session.")
	}
	seq, forget, err := r.publishDelete(ctx, d)
	if err != nil {
		return nil, query.Errorf(query.ErrIO, "detaching %q: %v", name, err)
	}
	r.mu.Lock()
	if st.published[name] == pubSeq {
		delete(st.published, name)
	}
	r.mu.Unlock()
	r.waitApplied(ctx, seq)
	// The purge of the document's history is no part of the answer: it keeps whatever
	// came at or after the delete, so it may land whenever. It runs after the answer, not
	// on its way; EndAll waits for it.
	r.mu.Lock()
	if r.forgetting == 0 {
		r.forgotten = make(chan struct{})
	}
	r.forgetting++
	r.mu.Unlock()
	go func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), forgetWait)
		defer cancel()
		forget(fctx)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.forgetting--; r.forgetting == 0 {
			close(r.forgotten)
			r.forgotten = nil
		}
	}()
	return &DetachResult{Path: query.SessionPrefix + name, Detached: true}, nil
}

// forgetWait bounds a purge that runs after detach has answered.
const forgetWait = 30 * time.Second

// Forgotten waits until the purges of detached documents' histories still running have
// ended, or ctx ends.
func (r *Registry) Forgotten(ctx context.Context) {
	r.init()
	r.mu.Lock()
	done := r.forgotten
	r.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// remove publishes the deletion of a session document and purges its older events.
func (r *Registry) remove(ctx context.Context, d *projection.Document) (uint64, error) {
	seq, forget, err := r.publishDelete(ctx, d)
	if err == nil {
		forget(ctx)
	}
	return seq, err
}

// publishDelete publishes the deletion of a session document, and returns forget, which
// purges the events of its subject before the delete: the delete itself stays, so that a
// projection that applied the upsert and not yet the delete still sees it. forget may run
// whenever the caller likes (detach runs it once it has answered).
func (r *Registry) publishDelete(ctx context.Context, d *projection.Document) (uint64, func(context.Context), error) {
	e := &events.Event{Op: events.OpDelete, Project: r.Project, Session: d.Session, Path: d.Path, PrevSeq: d.Seq}
	stream, err := r.stream()
	if err != nil {
		return 0, nil, err
	}
	seq, err := stream.PublishSync(ctx, e)
	if err != nil {
		return 0, nil, err
	}
	r.notePublished(seq)
	forget := func(ctx context.Context) {
		subj, err := stream.EventSubject(e)
		if err == nil {
			err = stream.Forget(ctx, subj, seq)
		}
		if err != nil {
			r.Logger.Warn("session document deleted, its history not purged", "name", d.Path, "err", err)
		}
	}
	return seq, forget, nil
}

// removeAll deletes a session's documents: those of the catalog, and those published
// here (by name, with their sequence) that it may not hold yet.
func (r *Registry) removeAll(ctx context.Context, token string, published map[string]uint64) {
	var docs []*projection.Document
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		docs = s.SessionDocuments(token)
		return nil
	})
	for i, d := range docs {
		if seq, ok := published[d.Path]; ok && seq > d.Seq {
			docs[i] = &projection.Document{Session: token, Path: d.Path, Seq: seq}
		}
		delete(published, d.Path)
	}
	for name, seq := range published {
		docs = append(docs, &projection.Document{Session: token, Path: name, Seq: seq})
	}
	for _, d := range docs {
		if _, err := r.remove(ctx, d); err != nil {
			r.Logger.Warn("could not delete a session document; the next sweep retries", "name", d.Path, "err", err)
		}
	}
	if len(docs) > 0 {
		r.Logger.Info("session ended; its documents deleted", "session", token, "documents", len(docs))
	}
}

// Documents counts the session documents the catalog holds, of every session.
func (r *Registry) Documents() int {
	n := 0
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		for _, t := range s.SessionTokens() {
			n += len(s.SessionDocuments(t))
		}
		return nil
	})
	return n
}
