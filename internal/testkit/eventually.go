package testkit

import (
	"testing"
	"time"
)

// Eventually polls cond until it holds, and fails the test with cond's last reason when it
// still does not after within. The first polls come quickly and then slow down to a tick
// of 50ms, so that a condition that holds at once costs nothing and an expensive one is not
// hammered. cond runs on the test's goroutine, so it may itself fail the test.
func Eventually(t testing.TB, within time.Duration, cond func() (ok bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.Millisecond
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not so after %s: %s", within, why)
		}
		time.Sleep(tick)
		tick = min(2*tick, 50*time.Millisecond)
	}
}
