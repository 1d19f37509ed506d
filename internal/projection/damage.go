package projection

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// A projection's files are derived data: one found damaged — cut short, scribbled over,
// zeroed, gone — is never read as if it were whole. It is detected where it is read
// (checksums of ours on every record and state value, the content hash of every body,
// bbolt's structure walked and checked at open, a panic or a fault of a mapped page
// turned into an error), reported in the log and the status, and rebuilt from the stream.
// An error of the environment rather than the file (too many open files, permission
// denied, a full disk) is no damage: it is reported as it is, and the file kept.

// ErrDamaged marks an error that says a file of a projection is damaged.
var ErrDamaged = errors.New("damaged")

// damagedf is an error saying a file is damaged.
func damagedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDamaged, fmt.Sprintf(format, args...))
}

// Guard runs fn with a fault on a mapped page (SIGBUS past the end of a file cut short,
// SIGSEGV at a wild offset) turned into a panic of this goroutine, and any panic turned
// into an error wrapping ErrDamaged: bbolt reads its file through a mapping, trusts the
// offsets it finds there, and panics on a page that is not what it expects.
func Guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &faultError{p}
		}
	}()
	return fn()
}

// faultError is a panic or a fault recovered by Guard. The code that panicked may have
// left its locks held: whatever it belongs to is dropped, never called again (bbolt's
// Close, for one, would wait forever).
type faultError struct{ p any }

func (e *faultError) Error() string { return fmt.Sprintf("damaged: %v", e.p) }

// Is makes a fault an ErrDamaged.
func (e *faultError) Is(target error) bool { return target == ErrDamaged }

// Faulted reports whether err is a panic or a fault that Guard recovered.
func Faulted(err error) bool {
	var f *faultError
	return errors.As(err, &f)
}

// Environmental reports whether err comes from the environment — the process's limits,
// permissions, a full or read-only disk — rather than from what a file holds: rebuilding
// would not help, and would throw away a good file.
func Environmental(err error) bool {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return slices.Contains(environmental, errno)
	}
	// Some libraries format the error they met rather than wrap it.
	msg := err.Error()
	for _, e := range environmental {
		if strings.Contains(msg, e.Error()) {
			return true
		}
	}
	return false
}

// environmental are the errors of the environment (see Environmental).
var environmental = []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EACCES, syscall.EPERM, syscall.ENOMEM,
	syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO, syscall.EAGAIN, syscall.EBUSY, syscall.EINTR}

// castagnoli is the table of the checksums of records and state values.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// seal returns v followed by its checksum (4 bytes, big-endian).
func seal(v []byte) []byte {
	out := make([]byte, len(v), len(v)+4)
	copy(out, v)
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(v, castagnoli))
}

// unseal returns the value a sealed one holds, or an error when its checksum does not match.
func unseal(v []byte) ([]byte, error) {
	if len(v) < 4 {
		return nil, damagedf("a value of %d bytes, shorter than its checksum", len(v))
	}
	body := v[:len(v)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(v[len(v)-4:]) {
		return nil, damagedf("a value does not match its checksum")
	}
	return body, nil
}

// Repair is a damaged file a projection found, and what it did about it: what the status
// resource lists under "repairs".
type Repair struct {
	Projection string    `json:"projection"`
	File       string    `json:"file"`
	Problem    string    `json:"problem"`
	Action     string    `json:"action"`
	At         time.Time `json:"at"`
}

// maxRepairs bounds the repairs a projection remembers: the latest.
const maxRepairs = 8

// Repairs is the list of a projection's latest repairs, safe for concurrent use.
type Repairs struct {
	mu   sync.Mutex
	list []Repair
}

// Add records a repair, the oldest forgotten past maxRepairs.
func (r *Repairs) Add(x Repair) {
	if x.At.IsZero() {
		x.At = time.Now().UTC()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, x)
	if len(r.list) > maxRepairs {
		r.list = append(r.list[:0], r.list[len(r.list)-maxRepairs:]...)
	}
}

// List returns the repairs recorded, oldest first.
func (r *Repairs) List() []Repair {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Repair(nil), r.list...)
}

// CheckBolt checks a bbolt file another component opens (the search index's root.bolt)
// as the catalog checks its own (verify): read-only, with a panic or a fault an error
// wrapping ErrDamaged. A file another process holds gives bbolt's ErrTimeout.
func CheckBolt(file string) error {
	var db *bolt.DB
	err := Guard(func() error {
		var err error
		db, err = bolt.Open(file, 0o644, &bolt.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
		if err != nil {
			if !errors.Is(err, bolterrors.ErrTimeout) && !Environmental(err) {
				err = fmt.Errorf("%w: %w", ErrDamaged, err)
			}
			return err
		}
		return verify(file)
	})
	if db != nil && !Faulted(err) {
		_ = db.Close()
	}
	return err
}
