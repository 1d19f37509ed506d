// Package owner makes one process per machine the owner of a project's data directory: the
// only one that opens its JetStream store and its projections. The others find the owner
// through a record in that directory and use it: its MCP endpoint on a unix socket (Server;
// package bridge is the client's side), its NATS server on loopback with a token.
//
// Ownership is an OS lock (flock) on a file in the data directory. The kernel releases it
// when its process dies, however it dies, so a lock left by a killed owner is taken over at
// once and never trusted on the strength of a file's existence. An owner started for
// clients runs as a daemon (StartDaemon), and stops when none has been attached for a while.
//
// It imports only the standard library and this module's small packages: the bridge binary
// links it.
package owner

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// File names inside a project's data directory.
const (
	lockFile   = "owner.lock"
	recordFile = "owner.json"
	socketFile = "owner.sock"
	logFile    = "owner.log"
	startFile  = "start.lock"
)

// ErrHeld is returned by Acquire when another live process owns the directory.
var ErrHeld = errors.New("the project is owned by another process")

// Lock is the ownership of a data directory, held until Release or the process's death.
type Lock struct {
	Dir string
	mu  sync.Mutex // guards f: Lost may run while Release does
	f   *os.File
}

// Acquire takes the ownership of dir without waiting, creating dir (mode 0700) if needed.
// It returns ErrHeld, wrapped with what the record says of the owner, when a live process
// holds it.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if r, rerr := Read(dir); rerr == nil {
				return nil, fmt.Errorf("%w (pid %d, %s)", ErrHeld, r.PID, r.Role)
			}
			return nil, ErrHeld
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	// A record left by a dead owner names a server that is gone.
	if err := os.Remove(filepath.Join(dir, recordFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		f.Close()
		return nil, err
	}
	return &Lock{Dir: dir, f: f}, nil
}

// RaceWait is how long an owner daemon tries for the lock before it leaves the project to
// the process holding it: a bridge holds the lock for a moment each time it checks it
// (Held) while it elects.
const RaceWait = time.Second

// AcquireWait takes the ownership of dir as Acquire does, trying again for up to wait while
// another process holds it; then it returns what Acquire returned (ErrHeld, wrapped).
func AcquireWait(ctx context.Context, dir string, wait time.Duration) (*Lock, error) {
	deadline := time.Now().Add(wait)
	for {
		l, err := Acquire(dir)
		if !errors.Is(err, ErrHeld) || time.Now().After(deadline) {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Held reports whether a live process owns dir, without taking it.
func Held(dir string) bool {
	held, _ := Probe(dir)
	return held
}

// Probe reports whether a live process owns dir, without taking it, and why nothing can
// own it: dir or its lock file cannot be created or opened (permission denied, a file in
// the way).
func Probe(dir string) (held bool, err error) {
	l, err := Acquire(dir)
	switch {
	case errors.Is(err, ErrHeld):
		return true, nil
	case err != nil:
		return false, err
	}
	l.Release()
	return false, nil
}

// Publish writes the owner's record, atomically and readable by this user only.
func (l *Lock) Publish(r Record) error {
	r.PID = os.Getpid()
	r.Started = time.Now().UTC()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(l.Dir, recordFile+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(l.Dir, recordFile))
}

// Release gives the ownership up; the record stays, and says nothing without the lock.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}

// ErrLost is returned by Lost and Watch when the lock no longer guards its directory.
var ErrLost = errors.New("the project's data directory was removed or its lock file replaced")

// Lost returns ErrLost, wrapped, when the lock file this lock holds is no longer the one at
// its path: the data directory was deleted (rm -rf) or the file replaced. The flock then
// guards nothing, since the next process locks a new file, and an owner that went on would
// serve deleted files beside a second owner. nil while the lock holds, or once released.
func (l *Lock) Lost() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	held, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLost, err)
	}
	path := filepath.Join(l.Dir, lockFile)
	now, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s is gone", ErrLost, path)
	case err != nil:
		return nil // unreadable for a moment (EACCES, EIO): not proof of another owner
	case !os.SameFile(held, now):
		return fmt.Errorf("%w: %s is another file now", ErrLost, path)
	}
	return nil
}

// LostCheck is how often an owner checks that its lock still guards its directory.
const LostCheck = time.Second

// Watch checks the lock every interval, and returns what Lost returned once it is lost, or
// nil when ctx ends first.
func (l *Lock) Watch(ctx context.Context, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := l.Lost(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Record is what the owner tells the other processes of the project.
type Record struct {
	PID     int       `json:"pid"`
	Role    string    `json:"role"`             // "guide-mcp" or "indexer"
	Socket  string    `json:"socket,omitempty"` // MCP Streamable HTTP, endpoint /mcp
	NATSURL string    `json:"nats_url,omitempty"`
	Token   string    `json:"nats_token,omitempty"`
	Started time.Time `json:"started"`
}

// Await returns the record of dir's owner once it has published one, while a live process
// holds the lock; ErrNoOwner when none does.
func Await(ctx context.Context, dir string) (Record, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := Read(dir)
		if !Held(dir) {
			return r, ErrNoOwner
		}
		if err == nil && r.NATSURL != "" {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("waiting for the owner's record in %s: %w", dir, ctx.Err())
		case <-tick.C:
		}
	}
}

// ErrNoOwner is returned by Await when no process owns the directory.
var ErrNoOwner = errors.New("the project has no owner")

// Read returns the record of dir's owner, which is only worth trusting while Held(dir).
func Read(dir string) (Record, error) {
	var r Record
	b, err := os.ReadFile(filepath.Join(dir, recordFile))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

// Socket is where the owner of dir serves MCP. A unix socket's path is limited to about
// a hundred bytes, so a deep data directory gets one in the temporary directory, named
// after a hash of dir.
func Socket(dir string) string {
	p := filepath.Join(dir, socketFile)
	if len(p) < 100 {
		return p
	}
	abs, _ := filepath.Abs(dir)
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.TempDir(), "guide-"+hex.EncodeToString(sum[:8])+".sock")
}

// IsDataDir reports whether dir is a project's data directory, as guide-mcp's --data
// names it: one an owner has locked, now or before.
func IsDataDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, lockFile))
	return err == nil && st.Mode().IsRegular()
}

// Log is the file the owner's daemon writes its log to.
func Log(dir string) string { return filepath.Join(dir, logFile) }

// Listen opens the owner's unix socket, readable and writable by this user only. Only the
// lock's holder calls it, so a socket file left by a dead owner is removed first.
func (l *Lock) Listen() (net.Listener, error) {
	path := Socket(l.Dir)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	// The socket file stays when the owner stops: the next owner removes it, under the
	// lock, and an owner that outlived its directory cannot remove its successor's.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, os.Chmod(path, 0o600)
}

// NewToken returns a random secret for the owner's NATS server.
func NewToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StartLock takes the lock a bridge holds while it starts dir's owner, without waiting:
// nil when another bridge holds it. The kernel releases it if that bridge dies.
func StartLock(dir string) *os.File {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, startFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil
	}
	return f
}
