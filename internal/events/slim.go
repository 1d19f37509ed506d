package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A replica of some partitions (Stream.Folds) reads every event headers-only: on a
// partitioned stream the publisher writes what a document's record needs of its content
// (HdrWords, HdrTitle) in headers, so another partition's document is folded from them (a
// Slim event). The whole of the events it needs it reads with a second consumer, filtered
// to its own partitions' subjects and the control subjects (Subjects.PartitionFilters),
// in step with the first: its own documents' events and scan and configuration events.
// Events whose subject carries no partition (an older publisher's) it asks of the server
// in one batch request per batch (a multi-last direct get of their subjects up to the
// batch's last sequence), and one by one for what that did not give (an older server, or a
// document changed again within the batch).

// slim reports whether the follower reads events headers-only (Folds).
func (s *Stream) slim() bool { return !s.Folds.Whole() }

// followSlim is Follow's loop for a follower of some partitions: batches are cut and
// filled (fill) on a goroutine of their own, the next while the one before is applied.
func (s *Stream) followSlim(ctx context.Context, project string, after uint64, bs *batcher, apply func(Batch) error) error {
	type filled struct {
		b       Batch
		stopped error
		err     error
	}
	ctx, cancel := context.WithCancel(ctx)
	var z *zipper
	if s.PartitionCount() > 1 {
		ch, stop, err := s.deliverOf(ctx, s.Subjects(project).PartitionFilters(s.Folds.Served()), false, after, bs.max.Events)
		if err != nil {
			cancel()
			return err
		}
		defer stop()
		z = &zipper{ch: ch}
	}
	out := make(chan filled, 1)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() {
		defer close(out)
		for {
			b, stopped, err := bs.next(ctx)
			if err == nil {
				err = s.fill(ctx, &b, z)
			}
			select {
			case out <- filled{b, stopped, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || stopped != nil {
				return
			}
		}
	})
	for f := range out {
		if f.err != nil {
			return f.err
		}
		if len(f.b.Events) > 0 { // else every event of it was removed since (fill)
			if err := apply(f.b); err != nil {
				return err
			}
		}
		if f.stopped != nil {
			return f.stopped
		}
	}
	return ctx.Err()
}

// needsWhole reports whether the follower needs e's whole message, having read its
// headers only (Stream.NeedsContent).
func (s *Stream) needsWhole(e *Event) bool {
	return s.wholeNeeded(e.Op, e.Status, e.Described, func() (DocKey, bool) {
		return DocKey{Session: e.Session, Path: e.Path}, true
	})
}

// wholeNeeded is the decision of needsWhole, from an event's op, status, whether its
// record travels in headers, and its document (key, asked only when it decides).
func (s *Stream) wholeNeeded(op Op, st Status, described bool, key func() (DocKey, bool)) bool {
	switch op {
	case OpDelete:
		return false
	case OpUpsert:
	default:
		return true // scan and configuration events carry their facts in their bodies
	}
	if st != StatusOK {
		return false
	}
	if !described {
		return true
	}
	k, ok := key()
	return !ok || s.Folds.Holds(k)
}

// wholeSize is what a message read headers-only counts against a batch's bytes: its size
// (Nats-Msg-Size) when its whole will be asked for, else nothing.
func (s *Stream) wholeSize(m jetstream.Msg) int {
	if !s.needsWholeMsg(m) {
		return 0
	}
	n, _ := strconv.Atoi(m.Headers().Get(nats.MsgSize))
	return n
}

// needsWholeMsg is needsWhole of a message read headers-only, before it is decoded.
func (s *Stream) needsWholeMsg(m jetstream.Msg) bool {
	h := m.Headers()
	return s.wholeNeeded(Op(h.Get(HdrOp)), Status(h.Get(HdrStatus)), h.Get(HdrWords) != "", func() (DocKey, bool) {
		project, err := ProjectOf(m.Subject())
		if err != nil {
			return DocKey{}, false
		}
		subj := NewSubjects(project)
		var k DocKey
		if k.Path, err = subj.ParseDocument(m.Subject()); err != nil {
			if k.Session, k.Path, err = subj.ParseSessionDocument(m.Subject()); err != nil {
				return DocKey{}, false
			}
		}
		return k, true
	})
}

// fill decodes again, from their whole messages, the events of b read headers-only whose
// content the follower needs (needsWhole): from the consumer of its own partitions' and
// the control subjects (z, nil on a stream of one partition) when the subject is one of
// those, else asked of the server. The others are marked Slim. An event whose message is
// gone since (the stream keeps a few events a subject, and forgets a detached session
// document's) is removed from b: a later event of its document follows.
func (s *Stream) fill(ctx context.Context, b *Batch, z *zipper) error {
	if !s.slim() || len(b.Events) == 0 {
		return nil
	}
	var want []int
	removed := map[int]bool{}
	for i := range b.Events {
		e := &b.Events[i]
		switch {
		case !s.needsWhole(e):
			if e.Op == OpUpsert && e.Status == StatusOK {
				e.Slim = true
			}
		case z != nil && s.inWhole(e):
			m, gone, err := z.take(ctx, e.Seq)
			if err != nil {
				return err
			}
			if gone {
				removed[i] = true
				continue
			}
			if err := redecode(e, m.Subject(), m.Headers(), m.Data()); err != nil {
				return err
			}
		default:
			want = append(want, i)
		}
	}
	if len(want) > 0 {
		if err := s.fetch(ctx, b, want, removed); err != nil {
			return err
		}
	}
	if len(removed) > 0 {
		kept := b.Events[:0]
		for i := range b.Events {
			if !removed[i] {
				kept = append(kept, b.Events[i])
			}
		}
		b.Events = kept
	}
	return nil
}

// inWhole reports whether e is among the events the consumer of whole events delivers:
// its own partitions' (a subject that carries the partition) and the control events.
func (s *Stream) inWhole(e *Event) bool {
	if e.Op != OpUpsert && e.Op != OpDelete {
		return true
	}
	return e.Partitioned && s.Folds.Holds(DocKey{Session: e.Session, Path: e.Path})
}

// zipper reads the consumer of whole events in step with the headers-only one.
type zipper struct {
	ch   <-chan delivery
	held jetstream.Msg
	seq  uint64 // held's
}

// take returns the whole message of sequence seq; gone when the consumer passed it (it
// was removed from the stream since its headers came).
func (z *zipper) take(ctx context.Context, seq uint64) (jetstream.Msg, bool, error) {
	for {
		if z.held != nil {
			switch {
			case z.seq == seq:
				m := z.held
				z.held = nil
				return m, false, nil
			case z.seq > seq:
				return nil, true, nil
			}
			z.held = nil // one the follower does not need whole (a delete, another status)
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case d, ok := <-z.ch:
			if !ok {
				return nil, false, fmt.Errorf("consume: the whole events' delivery ended")
			}
			if d.err != nil {
				return nil, false, fmt.Errorf("consume: %w", d.err)
			}
			md, err := d.m.Metadata()
			if err != nil {
				return nil, false, err
			}
			z.held, z.seq = d.m, md.Sequence.Stream
		}
	}
}

// fetch asks the server for the whole messages of the events want of b, and decodes
// them again; those gone since are added to removed.
func (s *Stream) fetch(ctx context.Context, b *Batch, want []int, removed map[int]bool) error {
	got := s.lastOf(ctx, b, want)
	var rest []int
	for _, i := range want {
		e := &b.Events[i]
		m, ok := got[e.Seq]
		if !ok {
			rest = append(rest, i)
			continue
		}
		if err := redecode(e, m.Subject, m.Header, m.Data); err != nil {
			return err
		}
	}
	// What the batch request did not give, one request each, a few at a time.
	errs := make([]error, len(rest))
	gone := make([]bool, len(rest))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(len(rest), 16) {
		wg.Go(func() {
			for j := range next {
				e := &b.Events[rest[j]]
				m, err := s.stream.GetMsg(ctx, e.Seq)
				switch {
				case errors.Is(err, jetstream.ErrMsgNotFound):
					gone[j] = true
				case err != nil:
					errs[j] = fmt.Errorf("event %d: %w", e.Seq, err)
				default:
					errs[j] = redecode(e, m.Subject, m.Header, m.Data)
				}
			}
		})
	}
	for j := range rest {
		next <- j
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for j, g := range gone {
		if g {
			removed[rest[j]] = true
		}
	}
	return nil
}

// redecode decodes e again from its whole message, keeping its sequence and time.
func redecode(e *Event, subject string, h nats.Header, data []byte) error {
	whole, err := Decode(subject, h, data)
	if err != nil {
		return fmt.Errorf("event %d: %w", e.Seq, err)
	}
	whole.Seq, whole.Time = e.Seq, e.Time
	*e = whole
	return nil
}

// maxMultiLast bounds the subjects of one batch request (the server answers at most 1024
// messages to one).
const maxMultiLast = 512

// wholeMsg is a message of a batch request's answer.
type wholeMsg struct {
	Subject string
	Header  nats.Header
	Data    []byte
}

// lastOf asks the server, in batch requests, for the last message of the subject of each
// of the events want of b up to b's last sequence, and returns those it gave by sequence.
// It gives up quietly (returning what it has) on any error, an older server's included:
// fill asks for the rest one by one.
func (s *Stream) lastOf(ctx context.Context, b *Batch, want []int) map[uint64]wholeMsg {
	out := map[uint64]wholeMsg{}
	var subjects []string
	seen := map[string]bool{}
	for _, i := range want {
		e := &b.Events[i]
		subj, err := s.eventSubject(e)
		if err != nil || seen[subj] {
			continue
		}
		seen[subj] = true
		subjects = append(subjects, subj)
	}
	upTo := b.Last()
	for len(subjects) > 0 && ctx.Err() == nil {
		chunk := subjects[:min(len(subjects), maxMultiLast)]
		subjects = subjects[len(chunk):]
		if !s.multiLast(ctx, chunk, upTo, out) {
			break
		}
	}
	return out
}

// eventSubject is the subject an event whose subject carries no partition was read from.
func (s *Stream) eventSubject(e *Event) (string, error) {
	switch e.Op {
	case OpUpsert, OpDelete:
		return e.Subject()
	case OpConfig:
		return NewSubjects(e.Project).Config(), nil
	}
	return NewSubjects(e.Project).Scan(), nil
}

// multiLast is one batch request: the last message of each of subjects up to sequence
// upTo, added to out by sequence. It reports whether the server answered it whole.
func (s *Stream) multiLast(ctx context.Context, subjects []string, upTo uint64, out map[uint64]wholeMsg) bool {
	req := map[string]any{"multi_last": subjects, "up_to_seq": upTo, "batch": len(subjects)}
	return s.directRaw(ctx, req, func(m *nats.Msg, seq uint64, _ time.Time) bool {
		out[seq] = wholeMsg{Subject: m.Header.Get(jetstream.SubjectHeader), Header: m.Header, Data: m.Data}
		return true
	}) == nil
}
