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
	"strings"
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

// SetSubject is the subject of the search endpoint of the replicas of exactly the
// partitions ks of project: guidepart.<project>.set.<k>-<k>….search.
func SetSubject(project string, ks []int) string {
	return SubjectPrefix + "." + events.EncodeToken(project) + ".set." + setName(ks) + ".search"
}

// setName is a set of partitions as a subject token: "0-2-3".
func setName(ks []int) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = strconv.Itoa(k)
	}
	return strings.Join(parts, "-")
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
	// The set's own endpoint: a client whose answers overlap asks a cover of sets that do
	// not (Client.cover), each of a replica of exactly that set.
	if err := svc.AddEndpoint("search-set", s.async(s.search), micro.WithEndpointSubject(SetSubject(s.Project, s.Set.Served()))); err != nil {
		_ = svc.Stop()
		return fmt.Errorf("partition service: %w", err)
	}
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

	setsMu sync.Mutex // the live sets of partitions (liveSets), found at setsAt
	sets   [][]int
	setsAt time.Time
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
	overlapped := false
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
			// The same partitions again, or replicas whose sets overlap.
			overlapped = overlapped || slices.ContainsFunc(a.Parts, func(k int) bool { return !covered[k] })
			continue
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
	if len(missing) > 0 && overlapped {
		// Replicas whose sets overlap answered, and no choice of their answers covers
		// every partition once: ask a cover of live sets that do not overlap, if any.
		if more, err := c.askCover(ctx, data); more != nil || err != nil {
			return more, nil, err
		}
	}
	return replies, missing, nil
}

// askCover asks one replica of each set of a cover of every partition by live sets that
// do not overlap (cover), this replica's own set answered from Local; nil when there is
// no such cover or one of its sets did not answer.
func (c *Client) askCover(ctx context.Context, data []byte) ([]search.PartReply, error) {
	cn := c.conn.Load()
	if cn == nil {
		return nil, nil
	}
	sets := c.liveSets(ctx, cn)
	if c.Local != nil && c.serving.Load() {
		sets = append(sets, c.Set.Served())
	}
	chosen := cover(c.Set.Count, sets)
	if chosen == nil {
		return nil, nil
	}
	answers := make([]*reply, len(chosen))
	var wg sync.WaitGroup
	for i, set := range chosen {
		if c.Local != nil && c.serving.Load() && slices.Equal(set, c.Set.Served()) {
			wg.Go(func() {
				var req search.PartRequest
				out := &reply{Parts: set}
				if err := json.Unmarshal(data, &req); err != nil {
					out.Error = err.Error()
				} else if out.Reply, err = c.Local.Part(ctx, req); err != nil {
					out.Error, out.Kind = err.Error(), errorKind(err)
				}
				answers[i] = out
			})
			continue
		}
		wg.Go(func() { answers[i] = c.askSubject(ctx, SetSubject(cn.project, set), set[0], data) })
	}
	wg.Wait()
	var replies []search.PartReply
	for i, a := range answers {
		if a == nil || a.Error != "" && a.Kind == "" || !slices.Equal(a.Parts, chosen[i]) {
			return nil, nil
		}
		switch a.Kind {
		case "invalid":
			return nil, fmt.Errorf("%w: %s", search.ErrInvalidRequest, a.Error)
		case "too_broad":
			return nil, fmt.Errorf("%w: %s", search.ErrTooBroad, a.Error)
		}
		a.Reply.Parts = a.Parts
		replies = append(replies, a.Reply)
	}
	return replies, nil
}

// cover chooses, of sets of partitions (each sorted), some that hold every partition of
// 0..p-1 exactly once; nil when none do. Sets are few (one a replica): a search that
// covers the lowest partition not yet covered by each set holding it, in turn.
func cover(p int, sets [][]int) [][]int {
	sets = slices.Clone(sets)
	slices.SortFunc(sets, func(a, b []int) int { // the largest first: the fewest requests
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return slices.Compare(a, b)
	})
	sets = slices.CompactFunc(sets, func(a, b []int) bool { return slices.Equal(a, b) })
	taken := make([]bool, p)
	var chosen [][]int
	var try func() bool
	try = func() bool {
		k := slices.Index(taken, false)
		if k < 0 {
			return true
		}
		for _, set := range sets {
			if !slices.Contains(set, k) || slices.ContainsFunc(set, func(j int) bool { return j >= p || taken[j] }) {
				continue
			}
			for _, j := range set {
				taken[j] = true
			}
			chosen = append(chosen, set)
			if try() {
				return true
			}
			chosen = chosen[:len(chosen)-1]
			for _, j := range set {
				taken[j] = false
			}
		}
		return false
	}
	if p <= 0 || !try() {
		return nil
	}
	return chosen
}

// setsFor is how long the live sets found are used before they are asked again.
const setsFor = 5 * time.Second

// liveSets returns the partition sets of the live replicas of the project, asked of every
// partition service (micro's PING) and kept for setsFor.
func (c *Client) liveSets(ctx context.Context, cn *conn) [][]int {
	c.setsMu.Lock()
	defer c.setsMu.Unlock()
	if time.Since(c.setsAt) < setsFor {
		return c.sets
	}
	subj, err := micro.ControlSubject(micro.PingVerb, "guide-partitions", "")
	if err != nil {
		return nil
	}
	inbox := cn.nc.NewRespInbox()
	sub, err := cn.nc.SubscribeSync(inbox)
	if err != nil {
		return nil
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := cn.nc.PublishRequest(subj, inbox, nil); err != nil {
		return nil
	}
	// Every live replica answers at once: collect until a moment passes with none.
	var sets [][]int
	wait := cmpOr(c.Attempt, DefaultAttempt) / 4
	for {
		wctx, cancel := context.WithTimeout(ctx, wait)
		m, err := sub.NextMsgWithContext(wctx)
		cancel()
		if err != nil {
			break
		}
		wait = 50 * time.Millisecond
		var ping struct {
			Metadata map[string]string `json:"metadata"`
		}
		if json.Unmarshal(m.Data, &ping) != nil || ping.Metadata["project"] != cn.project ||
			ping.Metadata["of"] != strconv.Itoa(c.Set.Count) {
			continue
		}
		if ks, err := events.ParsePartitions(ping.Metadata["partitions"]); err == nil && len(ks) > 0 {
			sets = append(sets, ks)
		}
	}
	c.sets, c.setsAt = sets, time.Now()
	return sets
}

// ask asks partition k, replica after replica, until one answers or ctx ends; nil when
// none did (no replica, or none answering in time).
func (c *Client) ask(ctx context.Context, k int, data []byte) *reply {
	cn := c.conn.Load()
	if cn == nil {
		return nil
	}
	return c.askSubject(ctx, Subject(cn.project, k, "search"), k, data)
}

// askSubject asks the search endpoint subj (of partition k, or of a set holding it),
// replica after replica, as ask does.
func (c *Client) askSubject(ctx context.Context, subj string, k int, data []byte) *reply {
	cn := c.conn.Load()
	if cn == nil {
		return nil
	}
	nc := cn.nc
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
