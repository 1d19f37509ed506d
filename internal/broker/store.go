package broker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/guide/guide/internal/backoff"
)

// storeCheck is how often the embedded server's store is checked for a write error.
const storeCheck = time.Second

// The embedded server's file store latches its first write error (a full disk): from then
// on the stream takes no message, answers no publish, and says so only in its own log,
// until JetStream starts again. watchStore checks for that, reports it (Err), and starts
// JetStream again, with backoff, once a file can be written beside the store: the stream
// is recovered from its files, without the message that failed, which its publisher, never
// acknowledged, publishes again.
type storeWatch struct {
	mu    sync.Mutex
	err   error
	since time.Time
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// Err says why the embedded server's stream store cannot be written now; nil while it
// can, and always for a server elsewhere.
func (b *Broker) Err() error {
	if b.store == nil {
		return nil
	}
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	return b.store.err
}

func (b *Broker) watchStore() {
	w := &storeWatch{stop: make(chan struct{}), done: make(chan struct{})}
	b.store = w
	go func() {
		defer close(w.done)
		retry := backoff.Backoff{Initial: storeCheck, Max: 10 * time.Second}
		t := time.NewTimer(storeCheck)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			next := storeCheck
			if err := b.storeErr(); err != nil {
				b.setStoreErr(err)
				if rerr := b.restartJetStream(); rerr != nil {
					b.Logger.Warn("the stream's store still cannot be written", "err", rerr)
					next = retry.Next()
				} else {
					retry.Reset()
				}
			} else {
				b.setStoreErr(nil)
			}
			t.Reset(next)
		}
	}()
}

func (b *Broker) stopWatch() {
	if w := b.store; w != nil {
		w.once.Do(func() { close(w.stop) })
		<-w.done
	}
}

// storeErr asks the embedded server whether a stream has latched a write error. Only
// that: its health check fails for passing reasons too (not ready for connections within
// a millisecond under load), which no restart should follow.
func (b *Broker) storeErr() error {
	ns := b.current()
	if !ns.Running() {
		return errors.New("stream store: the embedded NATS server is not running")
	}
	h := ns.Healthz(&server.HealthzOptions{Details: true})
	if h == nil {
		return nil
	}
	var msgs []string
	for _, e := range h.Errors {
		if e.Type == server.HealthzErrorStream && strings.Contains(e.Error, " write error: ") {
			msgs = append(msgs, e.Error)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("stream store: %s", strings.Join(msgs, "; "))
}

func (b *Broker) setStoreErr(err error) {
	w := b.store
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil && w.err == nil:
		w.since = time.Now()
		b.Logger.Error("the stream's store cannot be written; publishing stops until it can", "err", err)
	case err == nil && w.err != nil:
		b.Logger.Info("the stream's store takes writes again", "failed_for", time.Since(w.since).Round(time.Millisecond))
	}
	w.err = err
}

// maxStore is the embedded server's limit of stored bytes: none but the disk's.
const maxStore = 1 << 50

// probeSize is what must be writable beside the store before JetStream starts again.
const probeSize = 1 << 20

// restartJetStream starts the embedded server again, on the same store and port, once
// probeSize bytes can be written in the store's folder: its streams are recovered from
// their files, and every client reconnects (the broker's own connection to the new server,
// through InProcessConn). Not JetStream alone: enabling it again while clients call its
// API races inside the server.
func (b *Broker) restartJetStream() error {
	probe := filepath.Join(b.StoreDir, ".space-probe")
	err := os.WriteFile(probe, make([]byte, probeSize), 0o600)
	_ = os.Remove(probe)
	if err != nil {
		return err
	}
	b.Logger.Info("starting the embedded NATS server again, to recover its store")
	old := b.current()
	so := b.opts.Clone()
	if !so.DontListen {
		if a, ok := old.Addr().(*net.TCPAddr); ok {
			so.Port = a.Port // where the project's other processes (and the owner's record) look
		}
	}
	old.Shutdown()
	old.WaitForShutdown()
	ns, err := startServer(so)
	if err != nil {
		return fmt.Errorf("%w again (store %s)", err, b.StoreDir)
	}
	b.serverMu.Lock()
	b.cur = ns
	b.serverMu.Unlock()
	return errors.Join(b.storeErr())
}
