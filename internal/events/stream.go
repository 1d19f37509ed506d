package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/guide/guide/internal/backoff"
)

// DefaultStream is the name of the JetStream stream that holds every project.
const DefaultStream = "GUIDE"

// Stream is the JetStream stream the events live on. Set the fields, then call Open.
type Stream struct {
	Conn     *nats.Conn
	Name     string // default DefaultStream
	Replicas int    // default 1
	// History is how many events per document the stream keeps (MaxMsgsPerSubject).
	// One is enough for correctness, since every upsert carries the whole document;
	// a few more let a person see what changed.
	History int64 // default 3
	// MaxPending bounds the asynchronous publishes awaiting an ack.
	MaxPending int // default 1024
	// Partitions is P for a stream Open creates (partition.go); 0 takes the stream's own,
	// and a count other than the stream's is refused.
	Partitions int

	partitions int // P as the stream records it, once opened or bound

	// Folds, when not whole, is the partitions whose content a follower needs (a replica
	// of some partitions: its own documents'). Follow then reads every event headers-only
	// and the whole of those it needs (slim.go): its own documents', every event that does
	// not describe its record in headers (an older publisher's), and scan and configuration
	// events. The others are delivered Slim, their records folded from the headers.
	Folds PartitionSet

	JS     jetstream.JetStream
	stream jetstream.Stream
}

// Open connects to JetStream and creates or updates the stream. It is idempotent.
func (s *Stream) Open(ctx context.Context) error {
	if s.Name == "" {
		s.Name = DefaultStream
	}
	if s.Replicas == 0 {
		s.Replicas = 1
	}
	if s.History == 0 {
		s.History = 3
	}
	if s.MaxPending == 0 {
		s.MaxPending = 1024
	}
	// A server that cannot store a message (its disk full) does not answer its publish:
	// without a timeout its ack would be awaited for ever.
	js, err := jetstream.New(s.Conn, jetstream.WithPublishAsyncMaxPending(s.MaxPending),
		jetstream.WithPublishAsyncTimeout(PublishAckWait))
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	s.JS = js
	cfg := jetstream.StreamConfig{
		Name:              s.Name,
		Description:       "guide: content tree events, one subject per project and document",
		Subjects:          []string{Prefix + ".>"},
		Storage:           jetstream.FileStorage,
		Replicas:          s.Replicas,
		MaxMsgsPerSubject: s.History,
		Discard:           jetstream.DiscardOld,
		Duplicates:        2 * time.Minute,
		AllowDirect:       true,
		// S2 in the file store: the stream holds every document's content, and text
		// compresses to well under half its size at a small cost in CPU. A stream made
		// without it is updated in place; its existing blocks stay as they were.
		Compression: jetstream.S2Compression,
	}
	if err := s.partitionMeta(ctx, js, &cfg); err != nil {
		return err
	}
	st, err := js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		return fmt.Errorf("create stream %s: %w", s.Name, err)
	}
	s.stream = st
	return nil
}

// Bind opens an existing stream without creating it, for a process that only reads.
func (s *Stream) Bind(ctx context.Context) error {
	if s.Name == "" {
		s.Name = DefaultStream
	}
	js, err := jetstream.New(s.Conn)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	s.JS = js
	st, err := js.Stream(ctx, s.Name)
	if err != nil {
		return fmt.Errorf("stream %s: %w", s.Name, err)
	}
	p, err := recordedPartitions(st.CachedInfo().Config)
	if err != nil {
		return err
	}
	s.stream, s.partitions = st, max(p, 1)
	return nil
}

// Info returns the stream's current info.
func (s *Stream) Info(ctx context.Context) (*jetstream.StreamInfo, error) {
	return s.stream.Info(ctx)
}

// Projects lists the projects that have scan events on the stream.
func (s *Stream) Projects(ctx context.Context) ([]string, error) {
	info, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(Prefix+".*.ctl.scan"))
	if err != nil {
		return nil, err
	}
	var out []string
	for subj := range info.State.Subjects {
		p, err := ProjectOf(subj)
		if err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// DocState is what the stream says of one document: its latest event, without content.
type DocState struct {
	Path   string
	Op     Op
	Size   int64
	Mtime  time.Time
	Inode  uint64
	Hash   string
	Status Status
	Seq    uint64
}

// State is what an event says of its document, as the stream's current state.
func (e *Event) State(seq uint64) DocState {
	return DocState{Path: e.Path, Op: e.Op, Size: e.Size, Mtime: e.Mtime, Inode: e.Inode,
		Hash: e.Hash, Status: e.Status, Seq: seq}
}

// ID identifies a stream incarnation: a stream deleted and created again under the same
// name is a different stream, and whatever was derived from the old one is discarded.
func ID(info *jetstream.StreamInfo) string {
	return info.Config.Name + "@" + strconv.FormatInt(info.Created.UnixNano(), 10)
}

// Current calls fn with the latest event of every document of a project, headers only,
// and returns the stream sequence it read up to: every event up to it is reflected in what
// fn was given. fn keeps what it needs: a million documents' states are read this way.
func (s *Stream) Current(ctx context.Context, project string, fn func(DocState)) (uint64, error) {
	upTo, err := s.documents(ctx, project, jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy}, fn)
	if err != nil {
		return 0, fmt.Errorf("read current state: %w", err)
	}
	return upTo, nil
}

// Since calls fn, in stream order, with every document event of a project after the
// sequence after, headers only, and returns the stream sequence it read up to: the latest
// event of each document that fn is given is what a state known at after needs to become
// the current one.
func (s *Stream) Since(ctx context.Context, project string, after uint64, fn func(DocState)) (uint64, error) {
	upTo, err := s.documents(ctx, project, jetstream.ConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: after + 1}, fn)
	if err != nil {
		return 0, fmt.Errorf("read events after %d: %w", after, err)
	}
	return max(upTo, after), nil
}

// documents calls fn with the document events of a project that cfg delivers, in stream
// order. The stream's last sequence is read before the consumer is made, so every event up
// to it is delivered: that is the sequence the answer covers, at least.
func (s *Stream) documents(ctx context.Context, project string, cfg jetstream.ConsumerConfig, fn func(DocState)) (uint64, error) {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return 0, err
	}
	upTo := info.State.LastSeq
	if cfg.DeliverPolicy == jetstream.DeliverByStartSequencePolicy && cfg.OptStartSeq > upTo {
		return upTo, nil // nothing after: no consumer needed
	}
	cfg.FilterSubjects = []string{NewSubjects(project).Documents()}
	cons, release, err := s.headers(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer release()
	ci := cons.CachedInfo()
	if ci == nil {
		return 0, fmt.Errorf("no consumer info")
	}
	// Fetch exactly what is pending: a fetch of more waits for its timeout.
	remaining := ci.NumPending
	for remaining > 0 {
		batch, err := cons.Fetch(int(min(remaining, 10000)), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			return 0, err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return 0, err
			}
			e, err := Decode(m.Subject(), m.Headers(), nil)
			if err != nil {
				return 0, err
			}
			fn(e.State(md.Sequence.Stream))
			upTo = max(upTo, md.Sequence.Stream)
			remaining = md.NumPending
		}
		if err := batch.Error(); err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, fmt.Errorf("the server sent nothing, %d pending", remaining)
		}
	}
	return upTo, nil
}

// headers creates a consumer for one read of event headers (no content, no acks), and
// release, which deletes it. A consumer left for the server to expire would count against
// the server's limit on consumers for minutes: a query process reading on every call
// would reach the limit, and then no replica could create the consumer it follows with.
// So the consumer is named here, before it exists, and its creation is not cut short by
// the caller's context: a caller that gives up while the server creates it (a client
// timing out under load) would otherwise leave one whose name nobody knows. If creation
// fails, the name is deleted all the same, in case the server made it. The inactivity
// threshold only bounds the life of one whose release never reached the server.
func (s *Stream) headers(ctx context.Context, cfg jetstream.ConsumerConfig) (jetstream.Consumer, func(), error) {
	if len(cfg.FilterSubjects) == 1 {
		// Older servers know one filter as FilterSubject only (with deliver-last-per-
		// subject, they refuse FilterSubjects).
		cfg.FilterSubject, cfg.FilterSubjects = cfg.FilterSubjects[0], nil
	}
	cfg.Name = "read-" + nuid.Next()
	cfg.HeadersOnly = true
	cfg.AckPolicy = jetstream.AckNonePolicy
	cfg.MemoryStorage = true
	cfg.Replicas = 1
	cfg.InactiveThreshold = 30 * time.Second
	release := func() {
		// The read's context may have ended: the deletion must still reach the server.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.stream.DeleteConsumer(ctx, cfg.Name)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	cons, err := s.stream.CreateConsumer(cctx, cfg)
	if err == nil {
		err = ctx.Err() // the caller gave up meanwhile: the consumer exists, release it
	}
	if err != nil {
		release()
		return nil, nil, err
	}
	return cons, release, nil
}

// Latest returns the latest event of one document, with its content.
func (s *Stream) Latest(ctx context.Context, project, path string) (Event, error) {
	subj, err := s.Subjects(project).Document(path)
	if err != nil {
		return Event{}, err
	}
	return s.latest(ctx, subj)
}

// LatestScan returns the latest scan event of a project.
func (s *Stream) LatestScan(ctx context.Context, project string) (Event, error) {
	return s.latest(ctx, NewSubjects(project).Scan())
}

// LatestConfig returns the latest config event of a project, and false when it has none.
func (s *Stream) LatestConfig(ctx context.Context, project string) (Event, bool, error) {
	e, err := s.latest(ctx, NewSubjects(project).Config())
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Event{}, false, nil
	}
	return e, err == nil, err
}

// latest reads the last event on one subject, with its content and stream sequence.
func (s *Stream) latest(ctx context.Context, subject string) (Event, error) {
	raw, err := s.stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return Event{}, err
	}
	e, err := Decode(raw.Subject, raw.Header, raw.Data)
	e.Seq, e.Time = raw.Sequence, raw.Time
	return e, err
}

// PublishAckWait bounds the wait for one publish's ack; a publish that gets none is
// retried (the message id makes a late duplicate harmless), then reported as failed.
const PublishAckWait = 15 * time.Second

// Publisher publishes events asynchronously with a bounded number awaiting an ack, and
// reports every failure on Flush. Retries reuse the message id, so the server drops
// duplicates.
type Publisher struct {
	s       *Stream
	mu      sync.Mutex
	pending []pendingPub
	acked   []Ack
	failed  []error
}

type pendingPub struct {
	ev  *Event
	msg *nats.Msg
	fut jetstream.PubAckFuture
}

// Ack pairs a published event with the sequence the stream gave it.
type Ack struct {
	// State is what the event says of its document (Op alone for a scan or configuration
	// event): acks wait in the publisher until taken (TakeAcks, Flush), so they hold no
	// copy of the event, whose content and other fields a million files make gigabytes of.
	State     DocState
	Seq       uint64
	Duplicate bool
}

// Subjects names the subjects of project on this stream: on a stream of P > 1 partitions,
// document subjects carry their partition (Subjects).
func (s *Stream) Subjects(project string) Subjects {
	subj := NewSubjects(project)
	subj.Partitions = s.PartitionCount()
	return subj
}

// Msg encodes e as a message on its subject on this stream (Event.Msg).
func (s *Stream) Msg(e *Event) (*nats.Msg, error) { return e.msgOn(s.Subjects(e.Project)) }

// EventSubject is the subject of a document event on this stream (Event.Subject).
func (s *Stream) EventSubject(e *Event) (string, error) { return e.subject(s.Subjects(e.Project)) }

// describe writes the record's share of a document's content into its event's headers
// (Event.Describe) on a partitioned stream, where replicas of other partitions read the
// event headers-only; on a stream of one partition events stay as they always were.
func (s *Stream) describe(e *Event) {
	if s.PartitionCount() > 1 {
		e.Describe()
	}
}

// Publisher returns a new publisher on the stream.
func (s *Stream) Publisher() *Publisher { return &Publisher{s: s} }

// Publish queues an event; it blocks while MaxPending publishes await their acks.
func (p *Publisher) Publish(ctx context.Context, e *Event) error {
	p.s.describe(e)
	m, err := p.s.Msg(e)
	if err != nil {
		return fmt.Errorf("event for %q: %w", e.Path, err)
	}
	fut, err := p.publish(ctx, m)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.pending = append(p.pending, pendingPub{ev: e, msg: m, fut: fut})
	n := len(p.pending)
	p.mu.Unlock()
	if n >= p.s.MaxPending {
		return p.collect(ctx)
	}
	return nil
}

func (p *Publisher) publish(ctx context.Context, m *nats.Msg) (jetstream.PubAckFuture, error) {
	for {
		fut, err := p.s.JS.PublishMsgAsync(m, jetstream.WithStallWait(30*time.Second))
		if err == nil {
			return fut, nil
		}
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			return nil, fmt.Errorf("publish %s: %w", m.Subject, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// collect waits for the acks of queued publishes, retrying failed ones a few times.
func (p *Publisher) collect(ctx context.Context) error {
	p.mu.Lock()
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	for _, pp := range pending {
		var ack *jetstream.PubAck
		var err error
		retry := backoff.Backoff{Initial: 50 * time.Millisecond}
		for attempt := 0; ; attempt++ {
			select {
			case ack = <-pp.fut.Ok():
				err = nil
			case err = <-pp.fut.Err():
			case <-ctx.Done():
				return ctx.Err()
			}
			if err == nil || attempt == 4 {
				break
			}
			if werr := retry.Wait(ctx); werr != nil {
				return werr
			}
			if pp.fut, err = p.publish(ctx, pp.msg); err != nil {
				break
			}
		}
		p.mu.Lock()
		if err != nil {
			p.failed = append(p.failed, fmt.Errorf("publish %q: %w", pp.ev.Path, err))
		} else {
			p.acked = append(p.acked, Ack{State: pp.ev.State(ack.Sequence), Seq: ack.Sequence, Duplicate: ack.Duplicate})
		}
		p.mu.Unlock()
	}
	return nil
}

// TakeAcks returns the acks collected so far, without waiting for those still to come,
// and forgets them: a scan of a million files that takes them as it goes holds none
// until its end (Flush returns the rest).
func (p *Publisher) TakeAcks() []Ack {
	p.mu.Lock()
	defer p.mu.Unlock()
	acks := p.acked
	p.acked = nil
	return acks
}

// Flush waits until every queued event is acknowledged, then returns the acks and an
// error for the publishes that failed after retries: the first, and how many more.
func (p *Publisher) Flush(ctx context.Context) ([]Ack, error) {
	if err := p.collect(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	acks, failed := p.acked, p.failed
	p.acked, p.failed = nil, nil
	switch len(failed) {
	case 0:
		return acks, nil
	case 1:
		return acks, failed[0]
	}
	// One line: a full disk fails every publish, and each would say the same.
	return acks, fmt.Errorf("%w (and %d more publishes failed)", failed[0], len(failed)-1)
}

// DocKey names a document of either kind: a tree document (Session "") or a session
// document (Session its session's token, Path its file name).
type DocKey struct {
	Session string
	Path    string
}

// ID is the key's one-string form, used as the catalog's record key and the index's
// document id: the path for a tree document; NUL, the session token, NUL and the file name
// for a session document, which no path can be.
func (k DocKey) ID() string {
	if k.Session == "" {
		return k.Path
	}
	return "\x00" + k.Session + "\x00" + k.Path
}

// ParseDocKey reverses DocKey.ID. An id that starts with NUL but has no second NUL is
// not one ID writes.
func ParseDocKey(id string) (DocKey, error) {
	rest, ok := strings.CutPrefix(id, "\x00")
	if !ok {
		return DocKey{Path: id}, nil
	}
	i := strings.IndexByte(rest, 0)
	if i < 0 {
		return DocKey{}, fmt.Errorf("document id %q: a session id needs two NULs", id)
	}
	return DocKey{Session: rest[:i], Path: rest[i+1:]}, nil
}

// Unapplied reads, headers only, the document events of project above the sequence after
// (what the stream holds that a projection at that checkpoint has not applied yet), and
// returns the latest of them per document (operation, status and sequence), and upTo, the
// stream sequence the answer covers: every event of the project up to it was read. It
// reads at most limit events; complete is false when more remained. It costs one round
// trip when nothing is pending.
func (s *Stream) Unapplied(ctx context.Context, project string, after uint64, limit int) (ev map[DocKey]DocState, upTo uint64, complete bool, err error) {
	out := map[DocKey]DocState{}
	info, err := s.stream.Info(ctx)
	if err != nil {
		return nil, 0, false, err
	}
	if info.State.LastSeq <= after {
		return out, max(after, info.State.LastSeq), true, nil
	}
	subj := NewSubjects(project)
	cons, release, err := s.headers(ctx, jetstream.ConsumerConfig{
		FilterSubjects: []string{subj.Documents(), subj.Sessions()},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    after + 1,
	})
	if err != nil {
		return nil, 0, false, fmt.Errorf("read unapplied events: %w", err)
	}
	defer release()
	ci := cons.CachedInfo()
	if ci == nil {
		return nil, 0, false, fmt.Errorf("read unapplied events: no consumer info")
	}
	// The consumer was created after the stream's info was read: reading all it holds
	// covers the stream up to that last sequence at least.
	upTo = after
	remaining := ci.NumPending
	read := 0
	for remaining > 0 && read < limit {
		batch, err := cons.Fetch(int(min(remaining, uint64(limit-read), 500)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, 0, false, fmt.Errorf("read unapplied events: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return nil, 0, false, err
			}
			e, err := Decode(m.Subject(), m.Headers(), nil)
			if err != nil {
				return nil, 0, false, err
			}
			out[DocKey{Session: e.Session, Path: e.Path}] = e.State(md.Sequence.Stream)
			upTo = max(upTo, md.Sequence.Stream)
			remaining = md.NumPending
		}
		read += n
		if err := batch.Error(); err != nil {
			return nil, 0, false, fmt.Errorf("read unapplied events: %w", err)
		}
		if n == 0 {
			break
		}
	}
	if remaining == 0 {
		upTo = max(upTo, info.State.LastSeq)
	}
	return out, upTo, remaining == 0, nil
}

// LatestSession returns the latest event of one session document, with its content.
func (s *Stream) LatestSession(ctx context.Context, project, token, name string) (Event, error) {
	subj, err := s.Subjects(project).SessionDocument(token, name)
	if err != nil {
		return Event{}, err
	}
	return s.latest(ctx, subj)
}

// PublishSync publishes one event and waits for the stream's ack: for a caller that must
// know the event's sequence before it answers (a session document being attached).
func (s *Stream) PublishSync(ctx context.Context, e *Event) (uint64, error) {
	s.describe(e)
	m, err := s.Msg(e)
	if err != nil {
		return 0, fmt.Errorf("event for %q: %w", e.Path, err)
	}
	ack, err := s.JS.PublishMsg(ctx, m)
	if err != nil {
		return 0, fmt.Errorf("publish %s: %w", m.Subject, err)
	}
	return ack.Sequence, nil
}

// Forget purges a document's subject of its events below sequence before, so that the
// content of a deleted session document does not linger in the stream's history. What
// came at or after before (the delete itself, or a later attach of the same name) stays,
// whenever the purge runs.
func (s *Stream) Forget(ctx context.Context, subject string, before uint64) error {
	if err := s.stream.Purge(ctx, jetstream.WithPurgeSubject(subject), jetstream.WithPurgeSequence(before)); err != nil {
		return fmt.Errorf("purge %s: %w", subject, err)
	}
	return nil
}
