package events

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Batch is a run of consecutive events of one project, as a consumer applies them.
type Batch struct {
	Events []Event
	// Pending is how many events of the project the stream held after the last one,
	// when it was delivered: the consumer's lag.
	Pending uint64
	// Through, when above the last event's sequence, says that every event up to it has
	// been delivered: those after the last event are none of the follower's
	// (FollowOwn), and a projection's checkpoint passes them all the same.
	Through uint64
}

// Last returns the sequence the batch brings its follower to: its last event's, or
// Through when above it.
func (b *Batch) Last() uint64 {
	var last uint64
	if len(b.Events) > 0 {
		last = b.Events[len(b.Events)-1].Seq
	}
	return max(last, b.Through)
}

// Budget bounds a batch: at most Events events, and at most Bytes bytes of their
// messages' data (their content). A batch's memory grows with its bytes far more than
// with its count (the full-text index analyzes ten to twenty times a text's size in
// terms and positions), so a consumer that holds a batch or two in flight is bounded by
// Bytes whatever the documents. An event larger than Bytes is a batch of its own. Zero
// bounds nothing.
type Budget struct {
	Events int
	Bytes  int
}

// Follow delivers the events of project with a sequence above after, in order, in batches
// within max, until ctx ends or apply fails. A message that breaks the contract stops it
// with an error: skipping it would make this projection differ from the others.
func (s *Stream) Follow(ctx context.Context, project string, after uint64, max Budget, apply func(Batch) error) error {
	ch, stop, err := s.deliver(ctx, project, after, max.Events)
	if err != nil {
		return err
	}
	// The delivery's goroutines are this call's: they end before it returns, whatever the
	// caller's context, so that a caller retrying through an outage leaves none behind.
	defer stop()
	bs := &batcher{ch: ch, max: max}
	if s.slim() {
		bs.whole = s.wholeSize
		return s.followSlim(ctx, project, after, bs, apply) // slim.go
	}
	for {
		b, stopped, err := bs.next(ctx)
		if err != nil {
			return err
		}
		if err := apply(b); err != nil {
			return err
		}
		if stopped != nil {
			return stopped
		}
	}
}

// delivery is one message from the consumer, or the error that ended delivery.
type delivery struct {
	m   jetstream.Msg
	err error
}

// deliver starts an ordered consumer of project's events above after, and a reader
// goroutine that turns its blocking iterator into a channel, so that a batch can take
// whatever is already buffered without waiting for more. The channel closes after an
// error or when ctx ends; stop ends delivery, returns once both goroutines have ended,
// and deletes the consumer.
func (s *Stream) deliver(ctx context.Context, project string, after uint64, maxBatch int) (<-chan delivery, func(), error) {
	return s.deliverOf(ctx, []string{NewSubjects(project).All()}, s.slim(), after, maxBatch)
}

// deliverOf is deliver of the events of filters, headers-only or whole.
func (s *Stream) deliverOf(ctx context.Context, filters []string, headersOnly bool, after uint64, maxBatch int) (<-chan delivery, func(), error) {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: filters,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		HeadersOnly:    headersOnly,
	}
	if after > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = after + 1
	}
	cons, err := s.stream.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("consumer: %w", err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2 * maxBatch))
	if err != nil {
		return nil, nil, fmt.Errorf("consume: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { <-ctx.Done(); it.Stop() })
	ch := make(chan delivery, min(2*maxBatch, deliveryAhead))
	wg.Go(func() {
		defer close(ch)
		for {
			m, err := it.Next()
			select {
			case ch <- delivery{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	})
	stop := func() {
		cancel()
		wg.Wait()
		// An ordered consumer left behind lives on the server until its inactivity
		// threshold: one per retry would add up. The consumer may have been recreated
		// under another name since it started: delete the one it is now.
		if ci := cons.CachedInfo(); ci != nil {
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer dcancel()
			_ = s.stream.DeleteConsumer(dctx, ci.Name)
		}
	}
	return ch, stop, nil
}

// deliveryAhead is how many messages the reader goroutine hands on ahead of the batch
// being cut. The client's pull buffer already holds two batches' events behind it: a
// channel of as many again held that much more content for a projection that lags (some
// fourteen megabytes per projection at 100k documents of 3.4 kB each).
const deliveryAhead = 64

// batcher cuts the deliveries into batches within a budget. The delivery that would
// take a batch over its bytes is held for the next.
type batcher struct {
	ch   <-chan delivery
	max  Budget
	held *delivery
	// whole is the size of a message read headers-only, counting what it will be
	// filled with (Stream.wholeSize); nil when messages come whole.
	whole func(jetstream.Msg) int
}

// receive returns the delivery held back by the batch before, else waits for one.
func (bs *batcher) receive(ctx context.Context) (d delivery, ok bool, err error) {
	if bs.held != nil {
		d, bs.held = *bs.held, nil
		return d, true, nil
	}
	select {
	case <-ctx.Done():
		return d, false, ctx.Err()
	case d, ok = <-bs.ch:
		return d, ok, nil
	}
}

// next waits for one event, then takes what follows it within the budget (see more).
// stopped is why delivery ended after the batch's first event, to return once the batch
// is applied; err ends following at once (ctx ended, delivery ended before any event, or
// an event breaks the contract).
func (bs *batcher) next(ctx context.Context) (b Batch, stopped, err error) {
	asked := time.Now()
	d, ok, err := bs.receive(ctx)
	if err != nil {
		return b, nil, err
	}
	began := time.Now()
	streaming := began.Sub(asked) < gatherGap
	stop, err := b.take(ctx, d, ok)
	if stop != nil {
		return b, nil, stop
	}
	if err != nil {
		return b, nil, err
	}
	bytes := bs.size(d)
	for bs.max.Events <= 0 || len(b.Events) < bs.max.Events {
		d, ok, got := more(bs.ch, gather(b, streaming, began))
		if !got {
			break
		}
		if ok && d.err == nil && bs.max.Bytes > 0 && bytes+bs.size(d) > bs.max.Bytes {
			bs.held = &d
			break
		}
		bytes += bs.size(d)
		stop, err := b.take(ctx, d, ok)
		if err != nil {
			return b, nil, err
		}
		if stop != nil {
			return b, stop, nil
		}
	}
	return b, nil, nil
}

// size is what a delivery counts against a batch's bytes: its message's data, or for a
// message read headers-only, the data it will be filled with.
func (bs *batcher) size(d delivery) int {
	if d.m == nil {
		return 0
	}
	if bs.whole != nil {
		return bs.whole(d.m)
	}
	return len(d.m.Data())
}

// A batch is cut when no delivery is buffered behind it, unless more are on their way: the
// server says more are pending, or events are streaming in (the batch's first came at
// once, or within gatherGap of being asked for: a tree being scanned or a branch checked
// out while the follower keeps up with the publisher). A streaming batch then waits up to
// gatherGap for each next event, and is cut at burstWindow after its first. Cut as they
// came, a first index of 100k documents was folded by the catalog in some 2,400 batches of
// 40 events, each a transaction of its own, and by the search index in 240 to 330
// segments; gathered, in 220 to 330 and 170, for 5–10% less CPU in all. A save after a quiet
// moment is applied at once.
const (
	gatherGap   = 20 * time.Millisecond
	burstWindow = 250 * time.Millisecond
)

// gather is how long batch b, whose first event came at began, waits for its next event
// when none is buffered: 0 to be cut at once.
func gather(b Batch, streaming bool, began time.Time) time.Duration {
	if b.Pending > 0 {
		return gatherGap
	}
	if !streaming {
		return 0
	}
	return min(gatherGap, burstWindow-time.Since(began))
}

// more takes the next delivery already buffered. When none is, it waits up to wait for
// one (gather) rather than cut a small batch. got is false when no delivery came; ok is
// false when the channel is closed.
func more(ch <-chan delivery, wait time.Duration) (d delivery, ok, got bool) {
	select {
	case d, ok = <-ch:
		return d, ok, true
	default:
	}
	if wait <= 0 {
		return d, false, false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case d, ok = <-ch:
		return d, ok, true
	case <-t.C:
		return d, false, false
	}
}

// take appends a delivery's event to b: the one receive-decode-append step. stop is why
// delivery ended (channel closed, ok false, or the iterator failed); err is a message that
// breaks the contract.
func (b *Batch) take(ctx context.Context, d delivery, ok bool) (stop, err error) {
	if !ok || d.err != nil {
		return stopErr(ctx, ok, d.err), nil
	}
	e, pending, err := decodeMsg(d.m)
	if err != nil {
		return nil, err
	}
	b.Events, b.Pending = append(b.Events, e), pending
	return nil, nil
}

// decodeMsg decodes a stream message into its event, with the stream's sequence and time,
// and how many events of the project the stream held after it.
func decodeMsg(m jetstream.Msg) (Event, uint64, error) {
	md, err := m.Metadata()
	if err != nil {
		return Event{}, 0, err
	}
	data := m.Data()
	if len(data) == 0 {
		data = nil // read headers-only: the body comes later (Stream.fill)
	}
	e, err := Decode(m.Subject(), m.Headers(), data)
	if err != nil {
		return e, 0, fmt.Errorf("event %d: %w", md.Sequence.Stream, err)
	}
	e.Seq, e.Time = md.Sequence.Stream, md.Timestamp
	return e, md.NumPending, nil
}

func stopErr(ctx context.Context, open bool, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !open {
		return fmt.Errorf("consume: closed")
	}
	return fmt.Errorf("consume: %w", err)
}
