package watch

import (
	"errors"
	"testing"
	"time"
)

// TestErrorsNeverWaitForTheWatcher: the notifier sends some errors while it holds the lock
// every call to it takes (fsnotify's handling of a folder moved away whose watch cannot be
// removed), so a send must complete while the watcher is busy in such a call, not reading.
// Seen in the soak as a watcher stopped for good after a full disk slowed the indexer.
func TestErrorsNeverWaitForTheWatcher(t *testing.T) {
	in := make(chan error) // as the notifier's: unbuffered
	out := forwardErrors(in)
	for i := range 3 { // nobody reads out meanwhile
		select {
		case in <- errors.New("watch could not be removed"):
		case <-time.After(10 * time.Second):
			t.Fatalf("error %d waited for the watcher", i)
		}
	}
	close(in)
	n := 0
	for err := range out { // closed once the notifier's errors are
		if err == nil {
			t.Fatal("a nil error forwarded")
		}
		n++
	}
	if n == 0 || n > 3 {
		t.Fatalf("%d errors forwarded; want at least one (each means a rescan), at most the 3 sent", n)
	}
}
