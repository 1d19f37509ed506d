// Package session keeps what a query process knows of each MCP session: its focus context
// and history (in memory; sessions do not survive a restart), and its session documents,
// which travel through the event stream on the session's own subjects like any document,
// so that every projection indexes them.
package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/guide/guide/internal/backoff"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
)

// Token derives a session's token, which names its documents on the stream, from its MCP
// session id. The id is a bearer credential of the HTTP transport; the stream, readable by
// every process of the deployment, sees only this one-way hash of it.
func Token(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("guide-session\x00" + id))
	return hex.EncodeToString(sum[:16])
}

// Defaults of the Registry's settings.
const (
	DefaultTTL         = 24 * time.Hour
	DefaultMaxDocBytes = 1 << 20
	DefaultMaxDocs     = 20
	DefaultAttachWait  = 10 * time.Second
)

// Registry holds the sessions of one query process. Set the fields, then use it; Run
// sweeps idle sessions and abandoned documents.
type Registry struct {
	Project string
	// Stream may be nil until the query process reaches NATS (see Connect).
	Stream  *events.Stream
	Catalog *projection.Catalog
	// Applied is the stream sequence every projection has applied (Runner.Applied).
	Applied func() uint64
	// TTL is how long an idle session keeps its documents; also how old a document of no
	// live session must be before a sweep deletes it.
	TTL time.Duration
	// MaxDocBytes bounds one session document; MaxDocs a session's number of documents.
	MaxDocBytes int64
	MaxDocs     int
	// AttachWait bounds how long attach waits for the projections to apply a document.
	AttachWait time.Duration
	// Exclusive says this is the only query process of the project (all-in-one mode): at
	// start, every session document on the stream belongs to no live session and goes.
	Exclusive bool
	Now       func() time.Time
	Logger    *slog.Logger

	once     sync.Once
	mu       sync.Mutex
	sessions map[string]*state // by token
	connMu   sync.Mutex        // guards Stream and Applied, which Connect sets while serving
}

// Connect hands the registry the stream and the projections' applied sequence once the
// query process has reached NATS; until then attach and detach say it is not connected.
func (r *Registry) Connect(stream *events.Stream, applied func() uint64) {
	r.connMu.Lock()
	defer r.connMu.Unlock()
	r.Stream, r.Applied = stream, applied
}

// stream returns the stream, or an error a client can read while there is none.
func (r *Registry) stream() (*events.Stream, error) {
	r.connMu.Lock()
	defer r.connMu.Unlock()
	if r.Stream == nil {
		return nil, errNotConnected
	}
	return r.Stream, nil
}

var errNotConnected = errors.New("not connected to NATS yet; try again in a moment")

func (r *Registry) applied() uint64 {
	r.connMu.Lock()
	f := r.Applied
	r.connMu.Unlock()
	if f == nil {
		return r.Catalog.Checkpoint()
	}
	return f()
}

type state struct {
	contexts   query.Contexts
	lastActive time.Time
	uploading  map[string]bool
}

func (r *Registry) init() {
	r.once.Do(func() {
		if r.TTL <= 0 {
			r.TTL = DefaultTTL
		}
		if r.MaxDocBytes <= 0 {
			r.MaxDocBytes = DefaultMaxDocBytes
		}
		if r.MaxDocs <= 0 {
			r.MaxDocs = DefaultMaxDocs
		}
		if r.AttachWait <= 0 {
			r.AttachWait = DefaultAttachWait
		}
		if r.Now == nil {
			r.Now = time.Now
		}
		if r.Logger == nil {
			r.Logger = slog.Default()
		}
		r.sessions = make(map[string]*state)
	})
}

// get returns the state of a session, creating it; the caller holds mu.
func (r *Registry) get(token string) *state {
	st, ok := r.sessions[token]
	if !ok {
		st = &state{contexts: query.Contexts{Session: token}, uploading: map[string]bool{}}
		r.sessions[token] = st
	}
	st.lastActive = r.Now()
	return st
}

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

func noSession() *query.Error {
	return query.Errorf(query.ErrNoSession, "this connection has no MCP session: contexts and session documents need one").
		WithInstruction("Tell the user that focus and attached documents need a client that keeps an MCP session (stdio, or Streamable HTTP with protocol version 2025-11-25 or earlier).")
}

// SetFocus makes folder (already checked) the session's focus.
func (r *Registry) SetFocus(id, folder string) (query.Contexts, *query.Error) {
	r.init()
	if id == "" {
		return query.Contexts{}, noSession()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.get(Token(id))
	st.contexts = st.contexts.WithFocus(folder)
	c := st.contexts
	c.History = append([]string(nil), c.History...)
	return c, nil
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
	count := 0
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		docs := s.SessionDocuments(token)
		count = len(docs)
		if d, ok := s.SessionDocument(token, name); ok {
			prev = d
		}
		return nil
	})
	r.mu.Lock()
	st := r.get(token)
	if st.uploading[name] {
		r.mu.Unlock()
		return nil, query.Errorf(query.ErrInvalidArgument, "%q is being attached already", name)
	}
	if prev == nil && count+len(st.uploading) >= r.MaxDocs {
		r.mu.Unlock()
		return nil, query.Errorf(query.ErrTooLarge, "this session has %d documents attached; the limit is %d", count, r.MaxDocs).
			WithInstruction("Tell the user to detach a document before attaching another.")
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
	r.mu.Lock()
	delete(st.uploading, name)
	r.mu.Unlock()
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

// waitApplied waits until every projection has applied seq, up to AttachWait.
func (r *Registry) waitApplied(ctx context.Context, seq uint64) bool {
	deadline := time.Now().Add(r.AttachWait)
	poll := backoff.Backoff{Initial: time.Millisecond, Max: 20 * time.Millisecond}
	for r.applied() < seq {
		if time.Now().After(deadline) || poll.Wait(ctx) != nil {
			return false
		}
	}
	return true
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
	r.get(token)
	r.mu.Unlock()
	var d *projection.Document
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		d, _ = s.SessionDocument(token, name)
		return nil
	})
	if d == nil {
		return nil, query.Errorf(query.ErrNotFound, "no session document %q", name).
			WithInstruction("Call list to see the documents attached to this session.")
	}
	seq, err := r.remove(ctx, d)
	if err != nil {
		return nil, query.Errorf(query.ErrIO, "detaching %q: %v", name, err)
	}
	r.waitApplied(ctx, seq)
	return &DetachResult{Path: query.SessionPrefix + name, Detached: true}, nil
}

// remove publishes the deletion of a session document and purges its older events.
func (r *Registry) remove(ctx context.Context, d *projection.Document) (uint64, error) {
	e := &events.Event{Op: events.OpDelete, Project: r.Project, Session: d.Session, Path: d.Path, PrevSeq: d.Seq}
	stream, err := r.stream()
	if err != nil {
		return 0, err
	}
	seq, err := stream.PublishSync(ctx, e)
	if err != nil {
		return 0, err
	}
	// Keep the delete itself: a projection that applied the upsert and not yet the
	// delete must still see it.
	subj, err := e.Subject()
	if err == nil {
		err = stream.Forget(ctx, subj, 1)
	}
	if err != nil {
		r.Logger.Warn("session document deleted, its history not purged", "name", d.Path, "err", err)
	}
	return seq, nil
}

// End forgets a session and deletes its documents: the MCP session ended.
func (r *Registry) End(ctx context.Context, id string) {
	r.init()
	if id == "" {
		return
	}
	token := Token(id)
	r.mu.Lock()
	delete(r.sessions, token)
	r.mu.Unlock()
	r.removeAll(ctx, token)
}

func (r *Registry) removeAll(ctx context.Context, token string) {
	var docs []*projection.Document
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		docs = s.SessionDocuments(token)
		return nil
	})
	for _, d := range docs {
		if _, err := r.remove(ctx, d); err != nil {
			r.Logger.Warn("could not delete a session document; the next sweep retries", "name", d.Path, "err", err)
		}
	}
	if len(docs) > 0 {
		r.Logger.Info("session ended; its documents deleted", "session", token, "documents", len(docs))
	}
}

// EndAll ends every session: the process is stopping, and sessions do not survive it.
func (r *Registry) EndAll(ctx context.Context) {
	r.init()
	r.mu.Lock()
	tokens := make([]string, 0, len(r.sessions))
	for t := range r.sessions {
		tokens = append(tokens, t)
	}
	r.sessions = make(map[string]*state)
	r.mu.Unlock()
	for _, t := range tokens {
		r.removeAll(ctx, t)
	}
}

// Sweep ends sessions idle for longer than TTL, and deletes session documents of no live
// session that are older than TTL (every one of them when all is set).
func (r *Registry) Sweep(ctx context.Context, all bool) {
	r.init()
	now := r.Now()
	r.mu.Lock()
	live := map[string]bool{}
	var idle []string
	for t, st := range r.sessions {
		if now.Sub(st.lastActive) > r.TTL {
			idle = append(idle, t)
			delete(r.sessions, t)
		} else {
			live[t] = true
		}
	}
	r.mu.Unlock()
	for _, t := range idle {
		r.Logger.Info("session idle for longer than the TTL", "session", t, "ttl", r.TTL)
		r.removeAll(ctx, t)
	}
	var stale []*projection.Document
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		for _, t := range s.SessionTokens() {
			if live[t] {
				continue
			}
			for _, d := range s.SessionDocuments(t) {
				if all || now.Sub(d.Mtime) > r.TTL {
					stale = append(stale, d)
				}
			}
		}
		return nil
	})
	for _, d := range stale {
		if _, err := r.remove(ctx, d); err != nil {
			r.Logger.Warn("could not delete an abandoned session document", "name", d.Path, "err", err)
		}
	}
	if len(stale) > 0 {
		r.Logger.Info("deleted abandoned session documents", "documents", len(stale))
	}
}

// Run sweeps once the projections have caught up with the stream (caught), then every
// quarter of the TTL (at most every minute), until ctx ends.
func (r *Registry) Run(ctx context.Context, caught <-chan struct{}) {
	r.init()
	select {
	case <-caught:
	case <-ctx.Done():
		return
	}
	r.Sweep(ctx, r.Exclusive)
	every := min(max(r.TTL/4, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Sweep(ctx, false)
		}
	}
}
