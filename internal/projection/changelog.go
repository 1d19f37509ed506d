package projection

// The change log: a copy, in catalog.db, of what the stream's Window returns of each
// document event (its headers, never its content), keyed by stream sequence, so that
// changes reads the events after a cursor without a NATS message for each (docs/design.md,
// "Reading the changes"). It is written in the transaction that writes the checkpoint, so
// that it always stands where the catalog does, kill -9 or not. It keeps what the stream
// keeps: the last Kept events of each document (MaxMsgsPerSubject), a list per path of the
// sequences it keeps naming the one to drop when one more comes (stored only where the
// document's record does not say it: see writeLog). A log that starts at a
// sequence from (an older catalog, or the stream's history setting changed) holds every
// event the stream keeps above from: for a path with events on both sides, the stream's
// last Kept events that lie above from are the last Kept of those above from.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/binrec"
	"github.com/guide/guide/internal/events"
)

var (
	bucketLog      = []byte("log")      // stream sequence (8 bytes, big-endian) → log entry
	bucketLogPaths = []byte("logpaths") // document path → the sequences the log keeps of it, oldest first, where its record does not say it (writeLog)
	keyLog         = []byte("log")      // where the log stands (logState)
)

// logEntryVersion is the first byte of a log entry; 2: content hashes as bytes (appendHash).
const logEntryVersion = 2

// logState is where the change log stands.
type logState struct {
	// kept is how many events of each document the log keeps, as the stream does; -1 for
	// all of them; 0 when the catalog keeps no log (it has not been told how many the
	// stream keeps, or the log it had is not its own: see load).
	kept int64
	from uint64 // the log holds every document event the stream keeps above from
	seq  uint64 // the checkpoint the log was written with: a log is the catalog's own only when it is State.Seq
}

func (l logState) encode() []byte {
	b := binary.AppendVarint(nil, l.kept)
	b = binary.AppendUvarint(b, l.from)
	return binary.AppendUvarint(b, l.seq)
}

func decodeLogState(v []byte) (logState, error) {
	r := binrec.NewReader(string(v))
	l := logState{kept: r.Varint(), from: r.Uvarint(), seq: r.Uvarint()}
	if r.Err != nil || r.Len() != 0 {
		return logState{}, fmt.Errorf("%w: the change log's state cannot be read", ErrDamaged)
	}
	return l, nil
}

// loadLog reads where the log stands, at load. A log written with another checkpoint than
// the catalog's was left behind by a program that kept none (an older one, which went on
// applying batches without it): it is not the catalog's, and is dropped, to start again
// when the runner says how many events the stream keeps (KeepHistory). The caller holds
// the load's write transaction.
func (c *Catalog) loadLog(tx *bolt.Tx, st *bolt.Bucket) error {
	c.log = logState{}
	v, err := getState(st, keyLog)
	if err != nil {
		return fmt.Errorf("state %s: %w", keyLog, err)
	}
	if v != nil {
		l, err := decodeLogState(v)
		if err != nil {
			return err
		}
		if l.kept != 0 && l.seq == c.state.Seq {
			c.log = l
		}
	}
	if c.log.kept == 0 {
		return emptyLog(tx, st)
	}
	return nil
}

// emptyLog empties the log's buckets and forgets its state.
func emptyLog(tx *bolt.Tx, st *bolt.Bucket) error {
	for _, b := range [][]byte{bucketLog, bucketLogPaths} {
		if tx.Bucket(b) != nil {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		if _, err := tx.CreateBucket(b); err != nil {
			return err
		}
	}
	return st.Delete(keyLog)
}

// KeepHistory tells the catalog how many events of each document the stream keeps
// (MaxMsgsPerSubject; 0 or less for all), for its change log to keep the same: the runner
// calls it each time it starts following the stream. A log kept with another number, or
// none, starts again from the checkpoint.
func (c *Catalog) KeepHistory(perDocument int64) error {
	if perDocument <= 0 {
		perDocument = -1
	}
	c.applying.Lock()
	defer c.applying.Unlock()
	if err := c.brokenErr(); err != nil {
		return err
	}
	c.mu.RLock()
	cur, seq := c.log, c.state.Seq
	c.mu.RUnlock()
	if cur.kept == perDocument {
		return nil
	}
	l := logState{kept: perDocument, from: seq, seq: seq}
	err := Guard(func() error {
		return c.db.Update(func(tx *bolt.Tx) error {
			st := tx.Bucket(bucketState)
			if err := emptyLog(tx, st); err != nil {
				return err
			}
			return putState(st, keyLog, l.encode())
		})
	})
	if err != nil {
		if errors.Is(err, ErrDamaged) {
			c.markBroken(err)
		}
		return fmt.Errorf("catalog: starting the change log: %w", err)
	}
	if cur.kept != 0 {
		c.Logger.Info("catalog: the stream keeps another number of events per document; the change log starts again",
			"was", cur.kept, "now", perDocument, "from", seq)
	}
	c.mu.Lock()
	c.log = l
	c.mu.Unlock()
	return nil
}

// logged reports whether the log keeps e: an upsert or a delete of a document of the tree.
func logged(e *events.Event) bool {
	return e.Session == "" && (e.Op == events.OpUpsert || e.Op == events.OpDelete)
}

// writeLog writes the batch's document events to the log, drops the events of their
// documents the stream no longer keeps, and the log's state. The caller holds the batch's
// write transaction, which writes the checkpoint too.
//
// A document's list of the sequences the log keeps of it is stored (logpaths) only when it
// is not what the document's record says: a document that exists and whose one event in
// the log is its last (its record's Seq, above from) has none stored — after a first scan,
// every document — so that logpaths holds the documents changed since, and the deleted.
func (c *Catalog) writeLog(tx *bolt.Tx, st *bolt.Bucket, f *folded) error {
	l := c.log
	if l.kept == 0 {
		return nil
	}
	entries, paths := tx.Bucket(bucketLog), tx.Bucket(bucketLogPaths)
	entries.FillPercent = 1 // keys come in order: pages filled whole
	paths.FillPercent = recordsFill
	var key [8]byte
	// The lists the batch changes, by path, in the order first met, and whether the
	// document exists after its last event of the batch.
	lists := make(map[string][]uint64)
	var order []string
	exists := make(map[string]bool)
	for _, e := range f.log {
		binary.BigEndian.PutUint64(key[:], e.Seq)
		// bbolt keeps the value, not a copy, until the transaction commits.
		if err := entries.Put(key[:], appendLogEntry(nil, e)); err != nil {
			return err
		}
		if l.kept < 0 {
			continue
		}
		seqs, seen := lists[e.Path]
		if !seen {
			var err error
			if seqs, err = c.logSeqs(paths, e.Path, l.from); err != nil {
				return err
			}
			order = append(order, e.Path)
		}
		seqs = append(seqs, e.Seq)
		for int64(len(seqs)) > l.kept {
			binary.BigEndian.PutUint64(key[:], seqs[0])
			if err := entries.Delete(key[:]); err != nil {
				return err
			}
			seqs = seqs[1:]
		}
		lists[e.Path] = seqs
		exists[e.Path] = e.Op == events.OpUpsert
	}
	for _, p := range order {
		seqs := lists[p]
		if exists[p] && len(seqs) == 1 {
			// What its record will say (its Seq, the batch's last event of it).
			if err := paths.Delete([]byte(p)); err != nil {
				return err
			}
			continue
		}
		v := make([]byte, 0, 8*len(seqs))
		for _, s := range seqs {
			v = binary.BigEndian.AppendUint64(v, s)
		}
		if err := paths.Put([]byte(p), seal(v)); err != nil {
			return err
		}
	}
	l.seq = f.seq
	return putState(st, keyLog, l.encode())
}

// logSeqs is the list of the sequences the log keeps of path before the batch: the one
// stored, or else its record's Seq when the document exists and the log holds that event
// (above from), or else none. Only the applying goroutine calls it (it reads the records
// without the lock).
func (c *Catalog) logSeqs(paths *bolt.Bucket, path string, from uint64) ([]uint64, error) {
	if v := paths.Get([]byte(path)); v != nil {
		body, err := unseal(v)
		if err != nil || len(body)%8 != 0 {
			return nil, damagedf("the change log's sequences of %s cannot be read", path)
		}
		seqs := make([]uint64, 0, len(body)/8+1)
		for i := 0; i < len(body); i += 8 {
			seqs = append(seqs, binary.BigEndian.Uint64(body[i:]))
		}
		return seqs, nil
	}
	if d, ok := c.docs[path]; ok && d.Seq > from {
		return []uint64{d.Seq}, nil
	}
	return nil, nil
}

// Log entries: the version, then the path (first, so that a window of a folder reads no
// further in the entries of other folders), the op, the stream's time, and for an upsert its
// size, mtime, hash, status, reason and inode; then the previous event's sequence and
// what it said (events.Prev), and a checksum of the rest.
const (
	logOpUpsert byte = 'u'
	logOpDelete byte = 'd'
	logNoPrev   byte = 0
	logPrev     byte = 1
)

// appendLogEntry appends e's entry to b.
func appendLogEntry(b []byte, e *events.Event) []byte {
	n := len(b)
	b = append(b, logEntryVersion)
	b = binrec.AppendString(b, e.Path)
	op := logOpDelete
	if e.Op == events.OpUpsert {
		op = logOpUpsert
	}
	b = binary.AppendUvarint(b, uint64(op))
	b = appendTime(b, e.Time)
	if op == logOpUpsert {
		b = binary.AppendVarint(b, e.Size)
		b = appendTime(b, e.Mtime)
		b = appendHash(b, e.Hash)
		b = binrec.AppendString(b, string(e.Status))
		b = binrec.AppendString(b, e.Reason)
		b = binary.AppendUvarint(b, e.Inode)
	}
	b = binary.AppendUvarint(b, e.PrevSeq)
	if p := e.Prev; p == nil {
		b = binary.AppendUvarint(b, uint64(logNoPrev))
	} else {
		b = binary.AppendUvarint(b, uint64(logPrev))
		b = binrec.AppendString(b, string(p.Op))
		b = binary.AppendVarint(b, p.Size)
		b = appendHash(b, p.Hash)
		b = binrec.AppendString(b, string(p.Status))
		b = binary.AppendUvarint(b, p.Inode)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[n:], castagnoli))
}

// appendTime appends t as seconds and nanoseconds since 1970, which hold any time (the
// zero time too, which UnixNano does not).
func appendTime(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

var errLogEntry = fmt.Errorf("%w: a change log entry does not match its checksum or cannot be read", ErrDamaged)

// entryPath returns the path of the entry v, a view of its bytes, without checking it.
func entryPath(v []byte) (string, bool) {
	if len(v) < 5 || v[0] != logEntryVersion {
		return "", false
	}
	r := binrec.NewReader(unsafe.String(unsafe.SliceData(v[1:]), len(v)-5))
	p := r.String()
	return p, r.Err == nil
}

// decodeLogEntry reads the entry v, checked, into the event Window returns of it: the
// strings are slices of one copy of the entry.
func decodeLogEntry(v []byte) (events.Event, error) {
	body, err := unseal(v)
	if err != nil || len(body) == 0 || body[0] != logEntryVersion {
		return events.Event{}, errLogEntry
	}
	r := binrec.NewReader(string(body[1:]))
	var e events.Event
	e.Path = r.String()
	op := r.Uvarint()
	e.Time = time.Unix(r.Varint(), int64(r.Uvarint())) // in the local zone, as the stream's are read
	switch op {
	case uint64(logOpUpsert):
		e.Op = events.OpUpsert
		e.Size = r.Varint()
		e.Mtime = time.Unix(r.Varint(), int64(r.Uvarint())).UTC()
		e.Hash = readHash(r)
		e.Status = events.StatusOf(r.String())
		e.Reason = r.String()
		e.Inode = r.Uvarint()
	case uint64(logOpDelete):
		e.Op = events.OpDelete
	default:
		return events.Event{}, errLogEntry
	}
	e.PrevSeq = r.Uvarint()
	switch r.Uvarint() {
	case uint64(logNoPrev):
	case uint64(logPrev):
		p := &events.Prev{}
		switch r.String() {
		case string(events.OpUpsert):
			p.Op = events.OpUpsert
		case string(events.OpDelete):
			p.Op = events.OpDelete
		default:
			return events.Event{}, errLogEntry
		}
		p.Size = r.Varint()
		p.Hash = readHash(r)
		p.Status = events.StatusOf(r.String())
		p.Inode = r.Uvarint()
		e.Prev = p
	default:
		return events.Event{}, errLogEntry
	}
	if r.Err != nil || r.Len() != 0 {
		return events.Event{}, errLogEntry
	}
	return e, nil
}

// LogHorizon is what the change log answers for: Last, the sequence the catalog has
// applied, up to which the log holds every document event the stream keeps; Kept, the
// events it keeps of each document (-1: all); ID, the stream incarnation it was built
// from. It holds every event above from. ok is false when the catalog keeps no log (not
// told yet how many events the stream keeps, or not open, or damaged).
func (c *Catalog) LogHorizon() (h events.Horizon, from uint64, ok bool) {
	if c.broken.Load() != nil || c.poisoned.Load() {
		return h, 0, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.db == nil || c.log.kept == 0 || c.log.seq != c.state.Seq {
		return h, 0, false
	}
	return events.Horizon{Last: c.state.Seq, Kept: c.log.kept, ID: c.state.StreamID}, c.log.from, true
}

// LogWindow is the stream's Window (events.Stream.Window) read from the change log: the
// events of the project's documents below folder ("" for all) with a sequence in (after,
// h.Last], at most limit of them, without content, each with its Seq and Time; upTo is the
// sequence the read covers, and complete is false when some remained. The caller makes
// sure that the log answers for that window: h.Last at most what LogHorizon says, after at
// least its from.
func (c *Catalog) LogWindow(ctx context.Context, h events.Horizon, project, folder string, after uint64, limit int) (evs []events.Event, upTo uint64, complete bool, err error) {
	if h.Last <= after {
		return nil, max(after, h.Last), true, nil
	}
	prefix := ""
	if folder != "" {
		prefix = folder + "/"
	}
	c.mu.RLock()
	if c.db == nil || c.poisoned.Load() || c.log.kept == 0 || c.state.Seq < h.Last || project != c.state.Project {
		c.mu.RUnlock()
		return nil, 0, false, fmt.Errorf("the change log does not hold the events of %q up to %d", project, h.Last)
	}
	// The transaction is a snapshot: the lock is held only to begin it, so that a long
	// window holds back no batch.
	var tx *bolt.Tx
	err = Guard(func() error {
		var err error
		tx, err = c.db.Begin(false)
		return err
	})
	c.mu.RUnlock()
	if err != nil {
		return nil, 0, false, c.logFailed(err)
	}
	defer func() { _ = tx.Rollback() }()
	err = Guard(func() error {
		cur := tx.Bucket(bucketLog).Cursor()
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], after+1)
		n := 0
		for k, v := cur.Seek(key[:]); k != nil; k, v = cur.Next() {
			if len(k) != 8 {
				return errLogEntry
			}
			seq := binary.BigEndian.Uint64(k)
			if seq > h.Last {
				break
			}
			if n++; n%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if prefix != "" {
				p, ok := entryPath(v)
				if !ok {
					return errLogEntry
				}
				if !strings.HasPrefix(p, prefix) {
					continue
				}
			}
			if len(evs) == limit {
				upTo = seq - 1
				return nil
			}
			e, err := decodeLogEntry(v)
			if err != nil {
				return fmt.Errorf("sequence %d: %w", seq, err)
			}
			e.Project, e.Seq = project, seq
			evs = append(evs, e)
		}
		upTo, complete = h.Last, true
		return nil
	})
	if err != nil {
		return nil, 0, false, c.logFailed(err)
	}
	return evs, upTo, complete, nil
}

// logFailed marks the catalog broken when the log was found damaged, to be rebuilt, and
// returns the error.
func (c *Catalog) logFailed(err error) error {
	if errors.Is(err, ErrDamaged) {
		c.markBroken(fmt.Errorf("the change log: %w", err))
	}
	return fmt.Errorf("reading the change log: %w", err)
}
