// Package partition serves the partitions of a project to each other over NATS, so that
// any query replica answers for the whole project while folding some partitions alone.
//
// Every replica runs one nats.go/micro service (Service) with two endpoints per partition
// it folds: search, which answers a step of a search (search.PartRequest), and bodies,
// which returns documents' content. Their subjects name the project and the partition,
//
//	guidepart.<project>.<k>.search
//	guidepart.<project>.<k>.bodies
//
// (outside the stream's subjects, guide.>, which would store every request),
// and every endpoint is in the queue group "guide", so the replicas of one partition share
// its requests and a replica that is gone is no longer asked. A Client asks one replica of
// every partition (its own from its own index), retries a request that went unanswered on
// another replica, and reports the partitions none answered for: the search then answers
// from the others, marked partial, never with an error.
package partition

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
)

// QueueGroup is the queue group of every partition endpoint.
const QueueGroup = "guide"

// Subject is the subject of an endpoint (op: "search" or "bodies") of partition k of
// project. It is outside the stream's subjects (events.Prefix), which would store requests.
func Subject(project string, k int, op string) string {
	return SubjectPrefix + "." + events.EncodeToken(project) + "." + strconv.Itoa(k) + "." + op
}

// SubjectPrefix begins the subjects of the partition services.
const SubjectPrefix = "guidepart"

// Index is what a partition's search is asked of (index.Index).
type Index interface {
	Part(context.Context, search.PartRequest) (search.PartReply, error)
}

// Catalog gives snapshots of the catalog (projection.Catalog).
type Catalog interface {
	Read(func(*projection.Snapshot) error) error
}

// reply is what a search endpoint answers: the step's answer, and the partitions of the
// index that answered (a replica of several answers for all of them at once).
type reply struct {
	Parts []int            `json:"parts"`
	Reply search.PartReply `json:"reply"`
	Error string           `json:"error,omitempty"`
	// Kind of the error: "invalid" and "too_broad" are the search's own, which every
	// partition would answer alike; anything else is this replica's, and another is asked.
	Kind string `json:"kind,omitempty"`
}

// Key names a document whose body is asked for.
type Key struct {
	Session string `json:"s,omitempty"`
	Path    string `json:"p"`
}

// Service serves the partitions a replica folds.
type Service struct {
	Conn    *nats.Conn
	Project string
	Set     events.PartitionSet
	Index   Index
	Catalog Catalog
	Logger  *slog.Logger
	// MaxReply bounds the bytes of bodies one answer carries; 0 means what the
	// connection's largest message holds (replyRoom).
	MaxReply int

	svc  micro.Service
	busy chan struct{} // bounds the requests answered at once
}

// Start adds the service and its endpoints.
func (s *Service) Start() error {
	s.busy = make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	svc, err := micro.AddService(s.Conn, micro.Config{
		Name:        "guide-partitions",
		Version:     "1.0.0",
		Description: "the partitions of a guide project this replica folds",
		QueueGroup:  QueueGroup,
		Metadata:    map[string]string{"project": s.Project, "partitions": s.Set.String(), "of": strconv.Itoa(s.Set.Count)},
	})
	if err != nil {
		return fmt.Errorf("partition service: %w", err)
	}
	s.svc = svc
	for _, k := range s.Set.Served() {
		for op, h := range map[string]micro.HandlerFunc{"search": s.search, "bodies": s.bodies} {
			if err := svc.AddEndpoint(op+"-"+strconv.Itoa(k), s.async(h), micro.WithEndpointSubject(Subject(s.Project, k, op))); err != nil {
				_ = svc.Stop()
				return fmt.Errorf("partition service: %w", err)
			}
		}
	}
	return nil
}

// Stop removes the service: its requests go to the partitions' other replicas.
func (s *Service) Stop() {
	if s.svc != nil {
		_ = s.svc.Stop()
	}
}

// async answers a request on a goroutine of its own: micro calls a handler on its
// subscription's, and one slow search must not hold up the next.
func (s *Service) async(h micro.HandlerFunc) micro.HandlerFunc {
	return func(r micro.Request) {
		s.busy <- struct{}{}
		go func() {
			defer func() { <-s.busy }()
			h(r)
		}()
	}
}

func (s *Service) search(r micro.Request) {
	var req search.PartRequest
	out := reply{Parts: s.Set.Served()}
	if err := json.Unmarshal(r.Data(), &req); err != nil {
		out.Error, out.Kind = err.Error(), "invalid"
	} else if out.Reply, err = s.Index.Part(context.Background(), req); err != nil {
		out.Error, out.Kind = err.Error(), errorKind(err)
	}
	_ = r.RespondJSON(out)
}

func errorKind(err error) string {
	switch {
	case errors.Is(err, search.ErrInvalidRequest):
		return "invalid"
	case errors.Is(err, search.ErrTooBroad):
		return "too_broad"
	}
	return ""
}

// bodiesRequest asks for the bodies of Keys this replica keeps, from Keys[From] at byte
// Offset: a body larger than an answer can carry comes in pieces, one answer after another.
type bodiesRequest struct {
	Keys   []Key `json:"keys"`
	From   int   `json:"from,omitempty"`
	Offset int   `json:"offset,omitempty"`
}

// piece is a part of a body: Data from byte Offset of the body of hash Hash, Size bytes
// long in all.
type piece struct {
	Hash   string `json:"h"`
	Offset int    `json:"o,omitempty"`
	Size   int    `json:"n"`
	Data   []byte `json:"d"`
}

// bodiesReply is an answer to a bodiesRequest: the pieces that fit, and where to ask on
// from (Next, Offset) unless Done.
type bodiesReply struct {
	Pieces []piece `json:"pieces"`
	Next   int     `json:"next,omitempty"`
	Offset int     `json:"offset,omitempty"`
	Done   bool    `json:"done,omitempty"`
}

// replyRoom is the bytes of bodies an answer carries: the connection's largest message,
// less room for the envelope, as base64 (JSON's []byte) takes 4 bytes for 3.
func (s *Service) replyRoom() int {
	if s.MaxReply > 0 {
		return s.MaxReply
	}
	return max(4<<10, int(s.Conn.MaxPayload()-16<<10)/4*3)
}

// bodies answers the content of the documents asked for that this replica keeps, as much
// as one answer carries.
func (s *Service) bodies(r micro.Request) {
	var req bodiesRequest
	out := bodiesReply{Done: true}
	if err := json.Unmarshal(r.Data(), &req); err == nil {
		room := s.replyRoom()
		_ = s.Catalog.Read(func(snap *projection.Snapshot) error {
			out = bodiesReply{Done: true}
			used := 0
			for i := max(req.From, 0); i < len(req.Keys); i++ {
				k := req.Keys[i]
				from := 0
				if i == req.From {
					from = req.Offset
				}
				if !s.Set.Holds(events.DocKey{Session: k.Session, Path: k.Path}) {
					continue // asking for it would ask the others (Catalog.Fetch)
				}
				var d *projection.Document
				var ok bool
				if k.Session != "" {
					d, ok = snap.SessionDocument(k.Session, k.Path)
				} else {
					d, ok = snap.Document(k.Path)
				}
				if !ok || !d.Readable() {
					continue
				}
				b, err := snap.Content(d)
				if err != nil || from > len(b) {
					continue
				}
				if used >= room {
					out.Next, out.Offset, out.Done = i, from, false
					return nil
				}
				take := min(len(b)-from, room-used)
				out.Pieces = append(out.Pieces, piece{Hash: d.Hash, Offset: from, Size: len(b), Data: slices.Clone(b[from : from+take])})
				used += take
				if from+take < len(b) {
					out.Next, out.Offset, out.Done = i, from+take, false
					return nil
				}
			}
			return nil
		})
	}
	_ = r.RespondJSON(out)
}

// Client asks the partitions of a project, its own of its own index.
type Client struct {
	Set   events.PartitionSet // the partitions of the stream, and those folded here
	Local Index               // the index of the partitions folded here
	// Attempt bounds one request to one replica before another is asked; 0 means
	// DefaultAttempt. Deadline bounds a step over every partition; 0 means DefaultDeadline.
	Attempt, Deadline time.Duration
	Logger            *slog.Logger

	conn    atomic.Pointer[conn]
	serving atomic.Bool // Local has caught up, and is served to the others
	// bodies keeps the bodies fetched last, by hash: the snippets of a search asked
	// again come from them, without asking the partitions. A body is named by its
	// content's hash, so one kept is never stale.
	bodies bodyCache
}

// conn is a connection, and the project whose partitions it asks.
type conn struct {
	nc      *nats.Conn
	project string
}

const (
	// DefaultAttempt is a search's own bound (search.Timeout) and a margin for the network.
	DefaultAttempt = search.Timeout + search.Timeout/4
	// DefaultDeadline leaves room for one retry after an attempt unanswered; it is well
	// within a page's bound over partitions (search.DefaultBudget).
	DefaultDeadline = 2*DefaultAttempt + search.Timeout/4
)

// Serve says that Local has caught up with the stream: from now on the client answers for
// its partitions from it. Until then it asks them of the other replicas like any other,
// since an index catching up would answer short, and silently.
func (c *Client) Serve() { c.serving.Store(true) }

// Serving reports whether the client answers for its partitions from Local (Serve).
func (c *Client) Serving() bool { return c.serving.Load() }

// maxTries bounds the replicas asked for one partition's answer.
const maxTries = 3

// Connect gives the client its connection and project, once the replica has them: until
// then, the other partitions are missing.
func (c *Client) Connect(nc *nats.Conn, project string) {
	c.conn.Store(&conn{nc: nc, project: project})
}

// Call asks every partition req (search.Fanout.Call): it returns the answers of one
// replica of each, and the partitions none answered for.
func (c *Client) Call(ctx context.Context, req search.PartRequest) ([]search.PartReply, []int, error) {
	ctx, cancel := context.WithTimeout(ctx, cmpOr(c.Deadline, DefaultDeadline))
	defer cancel()
	data, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	all := c.Set.All()
	answers := make([]*reply, len(all))
	var wg sync.WaitGroup
	local := false
	for _, k := range all {
		if c.Local != nil && c.serving.Load() && !c.Set.Whole() && c.Set.HoldsPartition(k) {
			if !local {
				local = true
				wg.Go(func() {
					out := &reply{Parts: c.Set.Served()}
					var err error
					if out.Reply, err = c.Local.Part(ctx, req); err != nil {
						out.Error, out.Kind = err.Error(), errorKind(err)
					}
					answers[k] = out
				})
			}
			continue
		}
		wg.Go(func() { answers[k] = c.ask(ctx, k, data) })
	}
	wg.Wait()
	// One answer for every partition: a replica of several answers for each it folds.
	// Those of most partitions first, so that a replica of {0,1} and one of {1} asked for
	// partitions 0 and 1 cover both, the second left out.
	answers = slices.DeleteFunc(answers, func(a *reply) bool { return a == nil })
	slices.SortStableFunc(answers, func(a, b *reply) int { return len(b.Parts) - len(a.Parts) })
	var replies []search.PartReply
	covered := map[int]bool{}
	for _, a := range answers {
		switch a.Kind {
		case "invalid":
			return nil, nil, fmt.Errorf("%w: %s", search.ErrInvalidRequest, a.Error)
		case "too_broad":
			return nil, nil, fmt.Errorf("%w: %s", search.ErrTooBroad, a.Error)
		}
		if a.Error != "" {
			continue
		}
		if slices.ContainsFunc(a.Parts, func(k int) bool { return covered[k] }) {
			continue // the same partitions again, or replicas whose sets overlap
		}
		for _, k := range a.Parts {
			covered[k] = true
		}
		a.Reply.Parts = a.Parts // whose sequence the reply's is (search.Fanout keeps statistics by it)
		replies = append(replies, a.Reply)
	}
	var missing []int
	for _, k := range all {
		if !covered[k] {
			missing = append(missing, k)
		}
	}
	return replies, missing, nil
}

// ask asks partition k, replica after replica, until one answers or ctx ends; nil when
// none did (no replica, or none answering in time).
func (c *Client) ask(ctx context.Context, k int, data []byte) *reply {
	cn := c.conn.Load()
	if cn == nil {
		return nil
	}
	nc, subj := cn.nc, Subject(cn.project, k, "search")
	for try := 0; try < maxTries && ctx.Err() == nil; try++ {
		actx, cancel := context.WithTimeout(ctx, cmpOr(c.Attempt, DefaultAttempt))
		msg, err := nc.RequestWithContext(actx, subj, data)
		cancel()
		if errors.Is(err, nats.ErrNoResponders) {
			return nil // no live replica of the partition
		}
		if err != nil {
			// Unanswered: the replica asked may have gone; the queue group asks another.
			c.log().Info("partition: a replica did not answer; asking again", "partition", k, "err", err)
			continue
		}
		var r reply
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			c.log().Warn("partition: an answer that is not one", "partition", k, "err", err)
			continue
		}
		if r.Error != "" && r.Kind == "" {
			c.log().Warn("partition: a replica could not answer; asking again", "partition", k, "err", r.Error)
			continue
		}
		return &r
	}
	return nil
}

// Fetch returns the bodies of docs another partition keeps, by hash, from one replica of
// each (projection.Catalog.Fetch); those none gave are left out.
func (c *Client) Fetch(ctx context.Context, docs []*projection.Document) map[string][]byte {
	cn := c.conn.Load()
	out := map[string][]byte{}
	if cn == nil {
		return out
	}
	nc := cn.nc
	byPart := map[int][]Key{}
	for _, d := range docs {
		if b, ok := c.bodies.get(d.Hash); ok {
			out[d.Hash] = b
			continue
		}
		k := c.Set.Of(d.Key())
		byPart[k] = append(byPart[k], Key{Session: d.Key().Session, Path: d.Key().Path})
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k, keys := range byPart {
		wg.Go(func() {
			got := c.fetchPart(ctx, nc, Subject(cn.project, k, "bodies"), keys)
			mu.Lock()
			defer mu.Unlock()
			for h, b := range got {
				if events.HashContent(b) != h {
					continue // the catalog would leave it out (projection.Catalog.Read)
				}
				out[h] = b
				c.bodies.put(h, b)
			}
		})
	}
	wg.Wait()
	return out
}

// fetchPart asks one partition's replicas for the bodies of keys, answer after answer
// until they are all given (a large body comes in pieces), each answer retried on
// another replica when unanswered; it returns the bodies it had whole.
func (c *Client) fetchPart(ctx context.Context, nc *nats.Conn, subj string, keys []Key) map[string][]byte {
	out := map[string][]byte{}
	req := bodiesRequest{Keys: keys}
	for ctx.Err() == nil {
		data, _ := json.Marshal(req)
		var got bodiesReply
		answered := false
		for try := 0; try < maxTries && ctx.Err() == nil && !answered; try++ {
			actx, cancel := context.WithTimeout(ctx, cmpOr(c.Attempt, DefaultAttempt))
			msg, err := nc.RequestWithContext(actx, subj, data)
			cancel()
			if errors.Is(err, nats.ErrNoResponders) {
				return out
			}
			answered = err == nil && json.Unmarshal(msg.Data, &got) == nil
		}
		if !answered {
			return out
		}
		for _, p := range got.Pieces {
			if p.Offset == 0 && len(p.Data) <= p.Size {
				b := make([]byte, 0, p.Size)
				out[p.Hash] = append(b, p.Data...)
			} else if have, ok := out[p.Hash]; ok && len(have) == p.Offset && p.Offset+len(p.Data) <= cap(have) {
				out[p.Hash] = append(have, p.Data...)
			}
		}
		if got.Done || got.Next < req.From || got.Next == req.From && got.Offset <= req.Offset {
			break // done, or an answer that does not move on
		}
		req.From, req.Offset = got.Next, got.Offset
	}
	for h, b := range out {
		if len(b) != cap(b) {
			delete(out, h) // a body not had whole
		}
	}
	return out
}

// BodyCacheBytes bounds the bodies a Client keeps (bodyCache).
const BodyCacheBytes = 8 << 20

// bodyCache keeps bodies by hash, the last used first, up to BodyCacheBytes together.
type bodyCache struct {
	mu    sync.Mutex
	m     map[string]*list.Element
	order list.List // of *kept, the last used at the front
	size  int
}

type kept struct {
	hash string
	body []byte
}

func (b *bodyCache) get(hash string) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[hash]
	if !ok {
		return nil, false
	}
	b.order.MoveToFront(e)
	return e.Value.(*kept).body, true
}

func (b *bodyCache) put(hash string, body []byte) {
	if len(body) > BodyCacheBytes/8 {
		return // a large body would push out many
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]*list.Element{}
	}
	if _, ok := b.m[hash]; ok {
		return
	}
	b.m[hash] = b.order.PushFront(&kept{hash: hash, body: body})
	b.size += len(body)
	for b.size > BodyCacheBytes {
		last := b.order.Back()
		k := last.Value.(*kept)
		b.order.Remove(last)
		delete(b.m, k.hash)
		b.size -= len(k.body)
	}
}

func (c *Client) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
