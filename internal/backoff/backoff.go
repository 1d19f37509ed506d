// Package backoff spaces the attempts of an operation that keeps failing: each wait is
// longer than the last, up to a cap, and a success starts again from the shortest.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is an exponential backoff. Set the fields, then call Next (or Wait) after each
// failure and Reset after a success. The zero value waits Initial's default every time.
// A Backoff is not safe for concurrent use.
type Backoff struct {
	// Initial is the first delay; default 100ms.
	Initial time.Duration
	// Max caps every delay; zero for no cap.
	Max time.Duration
	// Factor multiplies the delay after each attempt; default (and for any value up to 1) 2.
	Factor float64
	// Jitter, between 0 and 1, shortens each delay by a random fraction of at most
	// Jitter, so that processes failing together do not retry together.
	Jitter float64
	// After is the clock Wait uses; default time.After. Tests replace it so as not to sleep.
	After func(time.Duration) <-chan time.Time

	next time.Duration // the delay before jitter that Next returns; 0 before the first
}

// Next returns the delay before the next attempt and lengthens the one after it.
func (b *Backoff) Next() time.Duration {
	if b.next == 0 {
		b.next = b.Initial
		if b.next <= 0 {
			b.next = 100 * time.Millisecond
		}
	}
	d := b.next
	if b.Max > 0 {
		d = min(d, b.Max)
	}
	factor := b.Factor
	if factor <= 1 {
		factor = 2
	}
	b.next = time.Duration(float64(d) * factor)
	if b.Max > 0 {
		b.next = min(b.next, b.Max)
	}
	if b.Jitter > 0 {
		d -= time.Duration(rand.Float64() * min(b.Jitter, 1) * float64(d))
	}
	return d
}

// Reset starts again from Initial, after a success.
func (b *Backoff) Reset() { b.next = 0 }

// Wait waits for the next delay, or until ctx ends, and then returns ctx's error.
func (b *Backoff) Wait(ctx context.Context) error {
	d := b.Next()
	if b.After != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.After(d):
			return nil
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
