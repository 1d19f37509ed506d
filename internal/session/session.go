// Package session keeps what a query process knows of each MCP session: its focus context
// and history, and its session documents, which travel through the event stream on the
// session's own subjects like any document, so that every projection indexes them.
//
// A session the registry issued (Generate, or Issue for an id chosen elsewhere) is
// recorded in a Store shared by the deployment: any query process (this one restarted,
// another replica, a new owner) accepts its id and Restores its focus and history, and
// its documents are on the stream already. An id never issued, or ended, is refused.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
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
	// AppliedChange, when set, returns a channel closed when Applied may next have moved
	// (Runner.AppliedChange), or nil when it cannot tell: attach and detach then poll.
	AppliedChange func() <-chan struct{}
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
	// Store records issued sessions for every query process of the deployment; nil until
	// Connect opens it on the stream's JetStream (bucket Bucket, default DefaultBucket).
	Store  *Store
	Bucket string

	once     sync.Once
	mu       sync.Mutex
	sessions map[string]*state // by token
	// published is the last stream sequence this process published a session document
	// at (LastPublished).
	published atomic.Uint64
	connMu    sync.Mutex // guards Stream, Applied, AppliedChange and Store, which Connect sets while serving
	storeMu   sync.Mutex // serialises opening the store
	// connected is closed by Connect: a session this process did not issue can be
	// checked from then on.
	connected chan struct{}
	connOnce  sync.Once
	// forgetting counts the purges of detached documents' histories still running;
	// forgotten is closed when it drops to zero (nil while none runs). Both under mu.
	forgetting int
	forgotten  chan struct{}
}

// Connect hands the registry the stream and the projections' applied sequence (and, when
// not nil, what wakes a wait for it: see AppliedChange) once the query process has reached
// NATS; until then attach and detach say it is not connected. It opens the session store
// on the stream's JetStream (or leaves it to the first call that needs it, when NATS does
// not answer now).
func (r *Registry) Connect(stream *events.Stream, applied func() uint64, change func() <-chan struct{}) {
	r.init()
	r.connMu.Lock()
	r.Stream, r.Applied, r.AppliedChange = stream, applied, change
	r.connMu.Unlock()
	if stream != nil {
		r.connOnce.Do(func() { close(r.connected) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.store(ctx); err != nil && !errors.Is(err, errNotConnected) {
		r.Logger.Warn("session store not open yet; issued sessions are checked once it is", "err", err)
	}
}

// store returns the session store, opening it on the stream's JetStream the first time.
func (r *Registry) store(ctx context.Context) (*Store, error) {
	r.connMu.Lock()
	st, stream := r.Store, r.Stream
	r.connMu.Unlock()
	if st != nil {
		return st, nil
	}
	if stream == nil || stream.JS == nil {
		return nil, errNotConnected
	}
	r.storeMu.Lock()
	defer r.storeMu.Unlock()
	r.connMu.Lock()
	st = r.Store
	r.connMu.Unlock()
	if st != nil {
		return st, nil
	}
	replicas := 1
	if info, err := stream.Info(ctx); err == nil {
		replicas = info.Config.Replicas
	}
	bucket := r.Bucket
	if bucket == "" {
		bucket = DefaultBucket
		if stream.Name != "" && stream.Name != events.DefaultStream {
			bucket = stream.Name + "_SESSIONS"
		}
	}
	// A record outlives an idle session's TTL by as much again, so that an ended or
	// swept session is still told apart from one never issued; then it expires.
	st, err := OpenStore(ctx, stream.JS, bucket, replicas, 2*r.TTL)
	if err != nil {
		return nil, err
	}
	r.connMu.Lock()
	r.Store = st
	r.connMu.Unlock()
	return st, nil
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

// appliedChange is a channel closed when the applied sequence may next have moved; nil
// when nothing says so.
func (r *Registry) appliedChange() <-chan struct{} {
	r.connMu.Lock()
	f := r.AppliedChange
	r.connMu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

type state struct {
	contexts   query.Contexts
	lastActive time.Time
	uploading  map[string]bool
	// issued: the session is recorded in the store (it outlives this process); created
	// and persisted are its record's creation and last write of last_seen.
	issued    bool
	created   time.Time
	persisted time.Time
	// ended: the session ended; attach refuses it and removes what it published.
	ended bool
	// saving serialises the writes of the session's record, each of its latest state.
	saving sync.Mutex
	// published holds the documents this process published for the session and has not
	// deleted, by name, with their stream sequence: under load the catalog may not hold
	// them yet, and detach and End must delete them all the same.
	published map[string]uint64
}

func (st *state) record(project string, now time.Time) Record {
	rec := Record{Token: st.contexts.Session, Project: project, Created: st.created, LastSeen: now,
		Focus: st.contexts.Focus, History: append([]string(nil), st.contexts.History...), Chosen: st.contexts.Chosen}
	if st.ended {
		rec.Ended = &now
	}
	return rec
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
		r.connected = make(chan struct{})
		if r.Stream != nil {
			close(r.connected)
			r.connOnce.Do(func() {})
		}
	})
}

// get returns the state of a session, creating it; the caller holds mu.
func (r *Registry) get(token string) *state {
	st, ok := r.sessions[token]
	if !ok {
		st = &state{contexts: query.Contexts{Session: token}, uploading: map[string]bool{}, published: map[string]uint64{}}
		r.sessions[token] = st
	}
	st.lastActive = r.Now()
	return st
}

// IDPrefix begins every session id the registry issues.
const IDPrefix = "mcp-session-"

// Errors of Validate and Restore.
var (
	ErrUnknownSession = errors.New("session id not issued by this deployment, or expired")
	ErrEnded          = errors.New("session ended")
)

// touchEvery is how often a session's last_seen is written to the store while it is used.
func (r *Registry) touchEvery() time.Duration { return min(max(r.TTL/10, time.Second), time.Minute) }

// Generate issues a new session id and records it in the store (it is the
// SessionIdManager's Generate of mcp-go's Streamable HTTP transport). When the store
// cannot be written the session still works here, and is recorded on its next use.
func (r *Registry) Generate() string {
	id := IDPrefix + rand.Text()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Issue(ctx, id); err != nil {
		r.Logger.Warn("session issued but not recorded yet; other processes refuse it until it is", "err", err)
	}
	return id
}

// Issue records a session id chosen elsewhere (a bridge's own client, say) as issued, so
// that every process of the deployment accepts it. Issuing an id again changes nothing.
func (r *Registry) Issue(ctx context.Context, id string) error {
	r.init()
	if id == "" {
		return ErrUnknownSession
	}
	now := r.Now()
	r.mu.Lock()
	st := r.get(Token(id))
	if st.ended {
		r.mu.Unlock()
		return ErrEnded
	}
	if !st.issued {
		st.issued, st.created = true, now
	}
	r.mu.Unlock()
	return r.save(ctx, st)
}

// save writes a session's record as the session is now, and notes when. Writes of one
// session follow one another, so that the last one written is of its latest state.
func (r *Registry) save(ctx context.Context, st *state) error {
	store, err := r.store(ctx)
	if err != nil {
		return err
	}
	st.saving.Lock()
	defer st.saving.Unlock()
	r.mu.Lock()
	rec := st.record(r.Project, r.Now())
	r.mu.Unlock()
	if err := store.Put(ctx, rec); err != nil {
		return fmt.Errorf("recording session: %w", err)
	}
	r.mu.Lock()
	st.persisted = rec.LastSeen
	r.mu.Unlock()
	return nil
}

// Validate says whether a session id may be used (the SessionIdManager's Validate): nil
// for a live session, isTerminated for an ended one, an error for an id never issued.
// A session another process issued is restored from the store.
func (r *Registry) Validate(id string) (isTerminated bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = r.Restore(ctx, id)
	if errors.Is(err, ErrEnded) {
		return true, nil
	}
	return false, err
}

// Restore returns a session's contexts, loading the session from the store when this
// process does not hold it yet (it was issued by another process, or before a restart):
// ErrUnknownSession for an id never issued, ErrEnded for an ended session. Its attached
// documents come back with it, since they are named by its token on the stream.
func (r *Registry) Restore(ctx context.Context, id string) (query.Contexts, error) {
	r.init()
	if id == "" {
		return query.Contexts{}, ErrUnknownSession
	}
	token := Token(id)
	now := r.Now()
	r.mu.Lock()
	st, ok := r.sessions[token]
	if ok && (st.issued || st.ended) {
		if st.ended {
			r.mu.Unlock()
			return query.Contexts{}, ErrEnded
		}
		st.lastActive = now
		c := st.contexts
		c.History = append([]string(nil), c.History...)
		touch := now.Sub(st.persisted) >= r.touchEvery()
		if touch {
			st.persisted = now // one toucher at a time
		}
		r.mu.Unlock()
		if touch {
			if err := r.save(ctx, st); err != nil {
				r.Logger.Debug("could not record a session's last use", "err", err)
			}
		}
		return c, nil
	}
	r.mu.Unlock()
	// A process that has just started may not have reached NATS yet: the session may
	// well be one it issued before, so wait for the connection (as long as ctx allows).
	select {
	case <-r.connected:
	case <-ctx.Done():
	}
	store, err := r.store(ctx)
	if err != nil {
		return query.Contexts{}, fmt.Errorf("%w (cannot check it: %w)", ErrUnknownSession, err)
	}
	rec, err := store.Get(ctx, token)
	if errors.Is(err, errNoRecord) || (err == nil && rec.Project != r.Project) {
		return query.Contexts{}, ErrUnknownSession
	}
	if err != nil {
		return query.Contexts{}, fmt.Errorf("%w (cannot check it: %w)", ErrUnknownSession, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st = r.get(token)
	if rec.Ended != nil {
		st.ended = true
		return query.Contexts{}, ErrEnded
	}
	if !st.issued {
		st.issued, st.created, st.persisted = true, rec.Created, rec.LastSeen
		st.contexts = query.Contexts{Session: token, Focus: rec.Focus, History: rec.History, Chosen: rec.Chosen}
		r.Logger.Debug("session restored", "session", token, "focus", rec.Focus)
	}
	c := st.contexts
	c.History = append([]string(nil), c.History...)
	return c, nil
}

// Terminate ends a session for its client (the SessionIdManager's Terminate: an HTTP
// DELETE): the session is recorded as ended, so that every process refuses it, and its
// documents are deleted. Ending an unknown or ended id is an error.
func (r *Registry) Terminate(id string) (isNotAllowed bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.Restore(ctx, id); err != nil {
		return false, err
	}
	r.End(ctx, id)
	return false, nil
}

// Release forgets what this process holds of a session its transport no longer serves
// (a connection closed, an idle transport session swept) without ending it: an issued
// session lives on in the store for any process. A session never issued (stdio, in
// process) has nothing else to live on in, and ends.
func (r *Registry) Release(ctx context.Context, id string) {
	r.init()
	if id == "" {
		return
	}
	token := Token(id)
	r.mu.Lock()
	st, ok := r.sessions[token]
	issued, ended := ok && st.issued, ok && st.ended
	if issued && !ended {
		delete(r.sessions, token)
	}
	r.mu.Unlock()
	if issued || ended {
		return
	}
	r.End(ctx, id)
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

// LastPublished is the last stream sequence this process published a session document
// (an attach or a detach) at: an answer about the documents' statuses that has not seen
// the stream that far would miss what a session just did.
func (r *Registry) LastPublished() uint64 { return r.published.Load() }

func (r *Registry) notePublished(seq uint64) {
	for {
		last := r.published.Load()
		if seq <= last || r.published.CompareAndSwap(last, seq) {
			return
		}
	}
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

func errEnded() *query.Error {
	return query.Errorf(query.ErrNoSession, "this MCP session has ended").
		WithInstruction("Tell the user the session ended; the client must start a new one.")
}

func noSession() *query.Error {
	return query.Errorf(query.ErrNoSession, "this connection has no MCP session: contexts and session documents need one").
		WithInstruction("Tell the user that focus and attached documents need a client that keeps an MCP session (stdio, or Streamable HTTP with protocol version 2025-11-25 or earlier).")
}

// SetFocus makes folder (already checked) the session's focus, and records it for an
// issued session, so that the session keeps it in any process.
func (r *Registry) SetFocus(ctx context.Context, id, folder string) (query.Contexts, *query.Error) {
	r.init()
	if id == "" {
		return query.Contexts{}, noSession()
	}
	r.mu.Lock()
	st := r.get(Token(id))
	st.contexts = st.contexts.WithFocus(folder)
	c := st.contexts
	c.History = append([]string(nil), c.History...)
	issued := st.issued
	r.mu.Unlock()
	if issued {
		if err := r.save(ctx, st); err != nil {
			// The focus holds here; another process would restore the previous one.
			r.Logger.Warn("focus set but not recorded; another process would not know it", "err", err)
		}
	}
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
	if st.ended {
		r.mu.Unlock()
		return nil, errEnded()
	}
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
	if err == nil {
		r.notePublished(seq)
	}
	r.mu.Lock()
	delete(st.uploading, name)
	if err == nil {
		st.published[name] = seq
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

// pollApplied is how often a wait for the projections checks again when nothing wakes it
// (no runner yet, or one that does not say when it applies a batch).
const pollApplied = 2 * time.Millisecond

// waitApplied waits until every projection has applied seq, up to AttachWait: woken by
// each batch a projection applies, so that it answers as soon as the last one has.
func (r *Registry) waitApplied(ctx context.Context, seq uint64) bool {
	ctx, cancel := context.WithTimeout(ctx, r.AttachWait)
	defer cancel()
	var poll *time.Timer
	for {
		change := r.appliedChange() // before reading the sequence: no batch falls between
		if r.applied() >= seq {
			return true
		}
		var tick <-chan time.Time
		if change == nil {
			if poll == nil {
				poll = time.NewTimer(pollApplied)
				defer poll.Stop()
			} else {
				poll.Reset(pollApplied)
			}
			tick = poll.C
		}
		select {
		case <-change:
		case <-tick:
		case <-ctx.Done():
			return false
		}
	}
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
		subj, err := e.Subject()
		if err == nil {
			err = stream.Forget(ctx, subj, seq)
		}
		if err != nil {
			r.Logger.Warn("session document deleted, its history not purged", "name", d.Path, "err", err)
		}
	}
	return seq, forget, nil
}

// End ends a session and deletes its documents: the MCP session ended. An issued
// session is recorded as ended, so that no process accepts its id again.
func (r *Registry) End(ctx context.Context, id string) {
	r.init()
	if id == "" {
		return
	}
	token := Token(id)
	r.mu.Lock()
	st := r.get(token)
	st.ended = true
	issued := st.issued
	published := st.published
	st.published = map[string]uint64{}
	r.mu.Unlock()
	if issued {
		if err := r.save(ctx, st); err != nil {
			r.Logger.Warn("session ended here but not recorded as ended", "session", token, "err", err)
		}
	}
	// The documents published here are deleted even when the catalog does not hold them
	// yet; one published after this point is deleted by its attach, which sees the end.
	r.removeAll(ctx, token, published)
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

// EndAll ends every session that lives only in this process (stdio, in-process): the
// process is stopping. Issued sessions outlive it in the store, with their documents.
// It waits, as long as ctx allows, for the purges detach left running.
func (r *Registry) EndAll(ctx context.Context) {
	r.init()
	r.mu.Lock()
	ending := map[string]map[string]uint64{}
	for t, st := range r.sessions {
		if !st.issued && !st.ended {
			ending[t] = st.published
		}
	}
	r.sessions = make(map[string]*state)
	r.mu.Unlock()
	for t, published := range ending {
		r.removeAll(ctx, t, published)
	}
	r.Forgotten(ctx)
}

// Sweep ends sessions idle for longer than TTL (for an issued session: idle in every
// process, as its record says), and deletes the session documents of no live session:
// those of an ended session at once, the others once older than TTL (every one of them
// when all is set).
func (r *Registry) Sweep(ctx context.Context, all bool) {
	r.init()
	now := r.Now()
	r.mu.Lock()
	live, ended := map[string]bool{}, map[string]bool{}
	idle := map[string]map[string]uint64{}
	for t, st := range r.sessions {
		switch {
		case st.ended:
			ended[t] = true
			if now.Sub(st.lastActive) > r.TTL {
				delete(r.sessions, t)
			}
		case now.Sub(st.lastActive) > r.TTL:
			// An issued session may be in use in another process: its record decides.
			delete(r.sessions, t)
			if !st.issued {
				idle[t] = st.published
			}
		default:
			live[t] = true
		}
	}
	r.mu.Unlock()
	for t, published := range idle {
		r.Logger.Info("session idle for longer than the TTL", "session", t, "ttl", r.TTL)
		r.removeAll(ctx, t, published)
	}
	store, err := r.store(ctx)
	if err != nil {
		// Which sessions live elsewhere is unknown: spare every document younger than the TTL.
		all = false
	} else {
		recs, err := store.List(ctx, r.Project)
		if err != nil {
			r.Logger.Warn("cannot list the recorded sessions; this sweep spares their documents", "err", err)
			return
		}
		for _, rec := range recs {
			switch {
			case rec.Ended != nil:
				ended[rec.Token] = true
				r.markEnded(rec.Token) // by another process
			case now.Sub(rec.LastSeen) > r.TTL && !live[rec.Token]:
				r.Logger.Info("session idle for longer than the TTL", "session", rec.Token, "ttl", r.TTL)
				rec.Ended = &now
				if err := store.Put(ctx, rec); err != nil {
					r.Logger.Warn("could not record an idle session as ended", "session", rec.Token, "err", err)
					continue
				}
				ended[rec.Token] = true
			default:
				live[rec.Token] = true // in use here or in another process
			}
		}
	}
	var stale []*projection.Document
	_ = r.Catalog.Read(func(s *projection.Snapshot) error {
		for _, t := range s.SessionTokens() {
			if live[t] && !ended[t] {
				continue
			}
			for _, d := range s.SessionDocuments(t) {
				if ended[t] || all || now.Sub(d.Mtime) > r.TTL {
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

// watchEnded marks a session this process holds as ended as soon as another process
// records it ended (its client's DELETE reached that one), until ctx ends.
func (r *Registry) watchEnded(ctx context.Context) {
	poll := backoff.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
	for ctx.Err() == nil {
		store, err := r.store(ctx)
		if err == nil {
			// The watch sees only what is written once it runs: a session this process
			// holds may have ended elsewhere before (while this process started, or while
			// the watch was down), so each is read once the watch is on.
			err = store.Watch(ctx, func() { r.readEnded(ctx, store) }, func(rec Record) {
				if rec.Ended == nil || rec.Project != r.Project {
					return
				}
				r.markEnded(rec.Token)
			})
		}
		if ctx.Err() == nil {
			r.Logger.Debug("watching ended sessions; retrying", "err", err)
			if poll.Wait(ctx) != nil {
				return
			}
		}
	}
}

// markEnded records that the session ended elsewhere, if this process holds it.
func (r *Registry) markEnded(token string) {
	r.mu.Lock()
	if st, ok := r.sessions[token]; ok {
		st.ended = true
	}
	r.mu.Unlock()
}

// readEnded reads the record of every session this process holds and has not seen end,
// and marks those that ended elsewhere.
func (r *Registry) readEnded(ctx context.Context, store *Store) {
	r.mu.Lock()
	var tokens []string
	for token, st := range r.sessions {
		if st.issued && !st.ended {
			tokens = append(tokens, token)
		}
	}
	r.mu.Unlock()
	for _, token := range tokens {
		if rec, err := store.Get(ctx, token); err == nil && rec.Ended != nil && rec.Project == r.Project {
			r.markEnded(token)
		}
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
	go r.watchEnded(ctx)
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
