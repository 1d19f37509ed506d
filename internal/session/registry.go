package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/freshness"
	"github.com/guide/guide/internal/projection"
)

// Defaults of the Registry's settings.
const (
	DefaultTTL         = 24 * time.Hour
	DefaultMaxDocBytes = 1 << 20
	DefaultMaxDocs     = 20
	DefaultAttachWait  = 10 * time.Second
	// A process holds at most DefaultMaxSessions sessions (about 20 KB each, idle), at most
	// DefaultMaxClientSessions of one client address, and DefaultMaxAttachedBytes of
	// session documents; a session unused for DefaultPressureIdle may be ended early to
	// make room for a new one.
	DefaultMaxSessions       = 5000
	DefaultMaxClientSessions = 100
	DefaultMaxAttachedBytes  = 256 << 20
	DefaultPressureIdle      = time.Minute
)

// Registry holds the sessions of one query process. Set the fields, then use it; Run
// sweeps idle sessions and abandoned documents.
type Registry struct {
	Project string
	// Stream may be nil until the query process reaches NATS (see Connect).
	Stream  *events.Stream
	Catalog *projection.Catalog
	// Freshness says how far the projections have applied the stream: attach and detach
	// wait on it, and Pending reads what is not applied yet from it. Connect may hand one
	// over; while there is none, the catalog's checkpoint is the applied sequence and
	// nothing reads as unapplied.
	Freshness *freshness.Tracker
	// TTL is how long an idle session keeps its documents; also how old a document of no
	// live session must be before a sweep deletes it.
	TTL time.Duration
	// MaxDocBytes bounds one session document; MaxDocs a session's number of documents.
	MaxDocBytes int64
	MaxDocs     int
	// AttachWait bounds how long attach waits for the projections to apply a document.
	AttachWait time.Duration
	// MaxSessions bounds the sessions this process holds, MaxClientSessions those of one
	// client (see Admit); PressureIdle is how long a session must have been unused to be
	// ended early, oldest first, when a new one needs its room.
	MaxSessions       int
	MaxClientSessions int
	PressureIdle      time.Duration
	// MaxAttachedBytes bounds the session documents of every session together: those the
	// catalog holds, and those on their way to it.
	MaxAttachedBytes int64
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
	// at: an answer about the documents' statuses that has not seen the stream that far
	// would miss what a session just did (see Pending).
	published atomic.Uint64
	connMu    sync.Mutex    // guards Stream, Freshness and Store, which Connect sets while serving
	storeSem  chan struct{} // one call at a time opens the store (openStore)
	// connected is closed by Connect: a session this process did not issue can be
	// checked from then on.
	connected chan struct{}
	connOnce  sync.Once
	// forgetting counts the purges of detached documents' histories still running;
	// forgotten is closed when it drops to zero (nil while none runs). Both under mu.
	forgetting int
	forgotten  chan struct{}
	// Under mu: the sizes of the session documents being published (uploadingBytes), and
	// of those published here, by stream sequence, that the catalog may not hold yet.
	uploadingBytes int64
	pendingBytes   map[uint64]int64
}

// Connect hands the registry the stream and, when not nil, the tracker of the projections'
// freshness (see Freshness) once the query process has reached NATS; until then attach and
// detach say it is not connected. It opens the session store on the stream's JetStream as
// long as ctx allows, and returns why it could not: the first call that needs the store
// opens it then.
func (r *Registry) Connect(ctx context.Context, stream *events.Stream, fresh *freshness.Tracker) error {
	r.init()
	r.connMu.Lock()
	r.Stream = stream
	if fresh != nil {
		r.Freshness = fresh
	}
	r.connMu.Unlock()
	if stream != nil {
		r.connOnce.Do(func() { close(r.connected) })
	}
	if _, err := r.store(ctx); err != nil && !errors.Is(err, errNotConnected) {
		r.Logger.Warn("session store not open yet; issued sessions are checked once it is", "err", err)
		return err
	}
	return nil
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
	// One call at a time opens the store; the others wait for it, each only as long as
	// its own context allows: when NATS does not answer (a full store), N callers must not
	// take N times the wait.
	r.connMu.Lock()
	if r.storeSem == nil {
		r.storeSem = make(chan struct{}, 1)
	}
	sem := r.storeSem
	r.connMu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("opening the session store: %w", ctx.Err())
	}
	defer func() { <-sem }()
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

// tracker is the tracker of the projections' freshness: the one Connect handed over, or
// one that knows the catalog alone.
func (r *Registry) tracker() *freshness.Tracker {
	r.connMu.Lock()
	defer r.connMu.Unlock()
	if r.Freshness == nil {
		r.Freshness = &freshness.Tracker{Project: r.Project, Catalog: r.Catalog, Logger: r.Logger}
	}
	return r.Freshness
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
		if r.MaxSessions <= 0 {
			r.MaxSessions = DefaultMaxSessions
		}
		if r.MaxClientSessions <= 0 {
			r.MaxClientSessions = DefaultMaxClientSessions
		}
		if r.PressureIdle <= 0 {
			r.PressureIdle = DefaultPressureIdle
		}
		if r.MaxAttachedBytes <= 0 {
			r.MaxAttachedBytes = DefaultMaxAttachedBytes
		}
		r.pendingBytes = map[uint64]int64{}
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
