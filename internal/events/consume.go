package events

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Batch is a run of consecutive events of one project, as a consumer applies them.
type Batch struct {
	Events []Event
	// Pending is how many events of the project the stream held after the last one,
	// when it was delivered: the consumer's lag.
	Pending uint64
}

// Last returns the sequence of the last event in the batch.
func (b *Batch) Last() uint64 {
	if len(b.Events) == 0 {
		return 0
	}
	return b.Events[len(b.Events)-1].Seq
}

// Follow delivers the events of project with a sequence above after, in order, in batches
// of at most maxBatch, until ctx ends or apply fails. A message that breaks the contract
// stops it with an error: skipping it would make this projection differ from the others.
func (s *Stream) Follow(ctx context.Context, project string, after uint64, maxBatch int, apply func(Batch) error) error {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{NewSubjects(project).All()},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	}
	if after > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = after + 1
	}
	cons, err := s.stream.OrderedConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2 * maxBatch))
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	defer it.Stop()
	go func() { <-ctx.Done(); it.Stop() }()

	type item struct {
		m   jetstream.Msg
		err error
	}
	// A reader goroutine turns the blocking iterator into a channel, so that a batch can
	// take whatever is already buffered without waiting for more.
	ch := make(chan item, 2*maxBatch)
	go func() {
		defer close(ch)
		for {
			m, err := it.Next()
			select {
			case ch <- item{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	decode := func(m jetstream.Msg) (Event, uint64, error) {
		md, err := m.Metadata()
		if err != nil {
			return Event{}, 0, err
		}
		e, err := Decode(m.Subject(), m.Headers(), m.Data())
		if err != nil {
			return e, 0, fmt.Errorf("event %d: %w", md.Sequence.Stream, err)
		}
		e.Seq, e.Time = md.Sequence.Stream, md.Timestamp
		return e, md.NumPending, nil
	}
	var stopped error // an error met while draining, returned after applying the batch
	for {
		var b Batch
		select {
		case <-ctx.Done():
			return ctx.Err()
		case it, ok := <-ch:
			if !ok {
				return stopErr(ctx, false, nil)
			}
			if it.err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("consume: %w", it.err)
			}
			e, pending, err := decode(it.m)
			if err != nil {
				return err
			}
			b.Events, b.Pending = append(b.Events, e), pending
		}
	drain:
		for len(b.Events) < maxBatch {
			select {
			case it, ok := <-ch:
				if !ok || it.err != nil {
					stopped = stopErr(ctx, ok, it.err)
					break drain
				}
				e, pending, err := decode(it.m)
				if err != nil {
					return err
				}
				b.Events, b.Pending = append(b.Events, e), pending
			default:
				// Nothing buffered. While the server says more is pending, wait a moment
				// for it rather than applying a tiny batch.
				if b.Pending == 0 {
					break drain
				}
				select {
				case it, ok := <-ch:
					if !ok || it.err != nil {
						stopped = stopErr(ctx, ok, it.err)
						break drain
					}
					e, pending, err := decode(it.m)
					if err != nil {
						return err
					}
					b.Events, b.Pending = append(b.Events, e), pending
				case <-time.After(20 * time.Millisecond):
					break drain
				}
			}
		}
		if err := apply(b); err != nil {
			return err
		}
		if stopped != nil {
			return stopped
		}
	}
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
