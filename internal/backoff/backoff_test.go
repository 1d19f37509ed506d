package backoff

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name string
		b    Backoff
		want []time.Duration
	}{
		{"Defaults", Backoff{}, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms}},
		{"Capped", Backoff{Initial: time.Second, Max: 5 * time.Second},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}},
		{"InitialOverMax", Backoff{Initial: time.Second, Max: 300 * ms}, []time.Duration{300 * ms, 300 * ms}},
		{"Factor3", Backoff{Initial: ms, Factor: 3, Max: 20 * ms}, []time.Duration{ms, 3 * ms, 9 * ms, 20 * ms}},
		{"Uncapped", Backoff{Initial: 50 * ms}, []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []time.Duration
			for range tc.want {
				got = append(got, tc.b.Next())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("delays %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResetStartsAgain(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 30 * time.Second}
	b.Next()
	b.Next()
	b.Reset()
	if d := b.Next(); d != time.Second {
		t.Errorf("after Reset: %v, want 1s", d)
	}
}

func TestJitterShortensWithinBounds(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: time.Second, Jitter: 0.5}
	for range 100 {
		if d := b.Next(); d < 500*time.Millisecond || d > time.Second {
			t.Fatalf("delay %v outside [500ms, 1s]", d)
		}
	}
}

func TestWaitUsesTheClock(t *testing.T) {
	var asked []time.Duration
	b := Backoff{Initial: time.Hour, After: func(d time.Duration) <-chan time.Time {
		asked = append(asked, d)
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}}
	for range 2 {
		if err := b.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if want := []time.Duration{time.Hour, 2 * time.Hour}; !slices.Equal(asked, want) {
		t.Errorf("waited %v, want %v", asked, want)
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(time.Duration) <-chan time.Time
	}{
		{"InjectedClock", func(time.Duration) <-chan time.Time { return nil }},
		{"RealClock", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			b := Backoff{Initial: time.Hour, After: tc.after}
			if err := b.Wait(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("Wait: %v, want context.Canceled", err)
			}
		})
	}
}
