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
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/binrec"
	"github.com/guide/guide/internal/events"
)

var (
	bucketLog      = []byte("log")      // stream sequence (8 bytes, big-endian) → the block of log entries from it
	bucketLogPaths = []byte("logpaths") // document path → the sequences the log keeps of it, oldest first, where its record does not say it (writeLog)
	keyLog         = []byte("log")      // where the log stands (logState)
)

// logBlockVersion is the first byte of a block of the log's entries; 2: content hashes as
// bytes (appendHash); 3: entries packed in blocks.
const logBlockVersion = 3

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
	if err := appendLog(entries, f.log); err != nil {
		return err
	}
	l.seq = f.seq
	if l.kept < 0 {
		return putState(st, keyLog, l.encode())
	}
	// The lists the batch changes, by path, in the order first met, whether the document
	// exists after its last event of the batch, and the events no longer kept.
	lists := make(map[string][]uint64)
	var order []string
	exists := make(map[string]bool)
	var drops []uint64
	for _, e := range f.log {
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
			drops = append(drops, seqs[0])
			seqs = seqs[1:]
		}
		lists[e.Path] = seqs
		exists[e.Path] = e.Op == events.OpUpsert
	}
	if err := dropLogEntries(entries, drops); err != nil {
		return err
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

// The log's entries are packed in blocks, each stored under the sequence of its first
// entry and sealed with one checksum: a version byte; the first entry's time, and its
// mtime (an upsert's, else 0), in seconds, as varints; then each entry as
//
//	uvarint  its sequence less the one before (the first: less the block's key, 0)
//	uvarint  how many bytes its path shares with the path before; string: the rest of it
//	uvarint  the length of the rest, then the rest: the op ('u' upsert, 'd' delete); the
//	         stream's time, its seconds less the block's (varint) and its nanoseconds;
//	         for an upsert the mtime likewise, size, hash, status, reason and inode; the
//	         previous event's sequence and what it said (events.Prev)
//
// so that a window of a folder passes an entry of another folder by its length, and the
// path, the key, the checksum and bbolt's header are not paid whole for every event: in
// entries of their own, in the order a scan publishes them, they took 147 bytes of pages
// an event, the log 15 MB of a replica at 100k documents (TestChangeLogPacksItsEntries).
const (
	logOpUpsert byte = 'u'
	logOpDelete byte = 'd'
	logNoPrev   byte = 0
	logPrev     byte = 1
)

// logBlockBytes bounds a block: it closes before an entry would take it past this many
// bytes, sealed, so that four fill one of bbolt's 4 KB pages (its header, and an element's
// header and key each).
const logBlockBytes = 990

// logBlock is a block being written: its entries encoded, and what the next is coded
// against.
type logBlock struct {
	b           []byte // the version, the times, then the entries; sealed when stored
	n           int    // entries
	first, last uint64 // sequences
	path        string // the last entry's
	sec, msec   int64  // the first entry's times, in seconds
	rest        []byte // scratch
}

// newLogBlock starts a block with e's entry.
func newLogBlock(e *events.Event) *logBlock {
	k := &logBlock{b: append(make([]byte, 0, logBlockBytes+64), logBlockVersion), first: e.Seq, last: e.Seq, sec: e.Time.Unix()}
	if e.Op == events.OpUpsert {
		k.msec = e.Mtime.Unix()
	}
	k.b = binary.AppendVarint(k.b, k.sec)
	k.b = binary.AppendVarint(k.b, k.msec)
	k.add(e, false)
	return k
}

// add appends e's entry, unless bounded and e's would take the block past logBlockBytes:
// then it reports false and the block is as it was.
func (k *logBlock) add(e *events.Event, bounded bool) bool {
	n := len(k.b)
	k.b = binary.AppendUvarint(k.b, e.Seq-k.last)
	shared := commonPrefix(k.path, e.Path)
	k.b = binary.AppendUvarint(k.b, uint64(shared))
	k.b = binrec.AppendString(k.b, e.Path[shared:])
	op := logOpDelete
	if e.Op == events.OpUpsert {
		op = logOpUpsert
	}
	r := append(k.rest[:0], op)
	r = binary.AppendVarint(r, e.Time.Unix()-k.sec)
	r = binary.AppendUvarint(r, uint64(e.Time.Nanosecond()))
	if op == logOpUpsert {
		r = binary.AppendVarint(r, e.Mtime.Unix()-k.msec)
		r = binary.AppendUvarint(r, uint64(e.Mtime.Nanosecond()))
		r = binary.AppendVarint(r, e.Size)
		r = appendHash(r, e.Hash)
		r = binrec.AppendString(r, string(e.Status))
		r = binrec.AppendString(r, e.Reason)
		r = binary.AppendUvarint(r, e.Inode)
	}
	r = binary.AppendUvarint(r, e.PrevSeq)
	if p := e.Prev; p == nil {
		r = append(r, logNoPrev)
	} else {
		r = append(r, logPrev)
		r = binrec.AppendString(r, string(p.Op))
		r = binary.AppendVarint(r, p.Size)
		r = appendHash(r, p.Hash)
		r = binrec.AppendString(r, string(p.Status))
		r = binary.AppendUvarint(r, p.Inode)
	}
	k.rest = r
	k.b = binrec.AppendString(k.b, string(r))
	if bounded && len(k.b)+4 > logBlockBytes {
		k.b = k.b[:n]
		return false
	}
	k.n++
	k.last, k.path = e.Seq, e.Path
	return true
}

// put stores the block under its first sequence; bbolt keeps the value until the
// transaction commits, and seal makes a copy.
func (k *logBlock) put(b *bolt.Bucket) error {
	var key [8]byte
	binary.BigEndian.PutUint64(key[:], k.first)
	return b.Put(key[:], seal(k.b))
}

// commonPrefix is how many bytes a and b share at their start.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// appendLog appends the entries of evs, in order of sequence and above every entry the log
// holds, to the log's last block and new ones after it.
func appendLog(b *bolt.Bucket, evs []*events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	var blk *logBlock
	if k, v := b.Cursor().Last(); k != nil {
		held, err := decodeLogBlock(k, v)
		if err != nil {
			return err
		}
		blk = newLogBlock(&held[0])
		for i := range held[1:] {
			blk.add(&held[1+i], false)
		}
	}
	for _, e := range evs {
		if blk != nil && e.Seq <= blk.last {
			return damagedf("the change log holds sequence %d, above the batch's %d", blk.last, e.Seq)
		}
		if blk == nil || !blk.add(e, true) {
			if blk != nil {
				if err := blk.put(b); err != nil {
					return err
				}
			}
			blk = newLogBlock(e)
		}
	}
	return blk.put(b)
}

// dropLogEntries removes the entries of seqs that the log holds, rewriting each block
// they lie in once.
func dropLogEntries(b *bolt.Bucket, seqs []uint64) error {
	slices.Sort(seqs)
	var key [8]byte
	for len(seqs) > 0 {
		binary.BigEndian.PutUint64(key[:], seqs[0])
		cur := b.Cursor() // a new one each time: the bucket changes under it
		k, v := cur.Seek(key[:])
		switch {
		case k == nil:
			k, v = cur.Last()
		case binary.BigEndian.Uint64(k) != seqs[0]:
			k, v = cur.Prev()
		}
		if k == nil {
			seqs = seqs[1:] // below the log's first block
			continue
		}
		held, err := decodeLogBlock(k, v)
		if err != nil {
			return err
		}
		// The drops up to the block's last entry are the block's, or not in the log.
		n, _ := slices.BinarySearch(seqs, held[len(held)-1].Seq+1)
		if n == 0 {
			seqs = seqs[1:] // between two blocks: not in the log
			continue
		}
		in := seqs[:n]
		seqs = seqs[n:]
		kept := slices.DeleteFunc(held, func(e events.Event) bool {
			_, found := slices.BinarySearch(in, e.Seq)
			return found
		})
		if len(kept) == len(held) {
			continue // none of them in the log
		}
		if err := b.Delete(k); err != nil {
			return err
		}
		if len(kept) == 0 {
			continue
		}
		blk := newLogBlock(&kept[0])
		for i := range kept[1:] {
			blk.add(&kept[1+i], false) // no bound: the block held them all
		}
		if err := blk.put(b); err != nil {
			return err
		}
	}
	return nil
}

// logReader reads the entries of one block in order.
type logReader struct {
	r         binrec.Reader
	seq       uint64
	entries   int    // read so far
	path      []byte // the entry's path; overwritten by the next
	sec, msec int64  // the block's times
}

// reset checks the block v stored under k and reads it from its first entry. The reader
// reads v in place (a view of bbolt's mapping, within its transaction): event copies what
// it returns.
func (lr *logReader) reset(k, v []byte) error {
	if len(k) != 8 {
		return errLogEntry
	}
	body, err := unseal(v)
	if err != nil || len(body) < 2 || body[0] != logBlockVersion {
		return errLogEntry
	}
	*lr = logReader{r: *binrec.NewReader(unsafe.String(&body[1], len(body)-1)), seq: binary.BigEndian.Uint64(k), path: lr.path[:0]}
	lr.sec, lr.msec = lr.r.Varint(), lr.r.Varint()
	if lr.r.Err != nil || lr.r.Len() == 0 {
		return errLogEntry
	}
	return nil
}

// next reads the next entry's sequence (lr.seq), its path (lr.path) and the rest; false
// at the block's end, or when it cannot be read (lr.r.Err).
func (lr *logReader) next() (rest string, ok bool) {
	if lr.r.Len() == 0 || lr.r.Err != nil {
		return "", false
	}
	// The block is stored under its first entry's sequence, and the others follow in order.
	d := lr.r.Uvarint()
	if (d == 0) != (lr.entries == 0) || lr.seq+d < lr.seq {
		lr.r.Fail("entries out of order")
		return "", false
	}
	lr.seq += d
	lr.entries++
	shared := lr.r.Uvarint()
	suffix := lr.r.String()
	if shared > uint64(len(lr.path)) {
		lr.r.Fail("a path shares more than the path before")
		return "", false
	}
	lr.path = append(lr.path[:shared], suffix...)
	rest = lr.r.String()
	return rest, lr.r.Err == nil
}

// event reads the entry whose rest next returned, at lr.seq and lr.path, into the event
// Window returns of it.
func (lr *logReader) event(rest string) (events.Event, error) {
	r := binrec.NewReader(strings.Clone(rest))
	e := events.Event{Seq: lr.seq, Path: string(lr.path)}
	op := r.Fixed(1)
	e.Time = time.Unix(lr.sec+r.Varint(), int64(r.Uvarint())) // in the local zone, as the stream's are read
	switch op {
	case string(logOpUpsert):
		e.Op = events.OpUpsert
		e.Mtime = time.Unix(lr.msec+r.Varint(), int64(r.Uvarint())).UTC()
		e.Size = r.Varint()
		e.Hash = readHash(r)
		e.Status = events.StatusOf(r.String())
		e.Reason = r.String()
		e.Inode = r.Uvarint()
	case string(logOpDelete):
		e.Op = events.OpDelete
	default:
		return events.Event{}, errLogEntry
	}
	e.PrevSeq = r.Uvarint()
	switch b := r.Fixed(1); {
	case b == string(logNoPrev):
	case b == string(logPrev):
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

// decodeLogBlock reads every entry of the block v stored under k.
func decodeLogBlock(k, v []byte) ([]events.Event, error) {
	lr := new(logReader)
	if err := lr.reset(k, v); err != nil {
		return nil, err
	}
	var out []events.Event
	for {
		rest, ok := lr.next()
		if !ok {
			break
		}
		e, err := lr.event(rest)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if lr.r.Err != nil || len(out) == 0 {
		return nil, errLogEntry
	}
	return out, nil
}

var errLogEntry = fmt.Errorf("%w: a change log block does not match its checksum or cannot be read", ErrDamaged)

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
		// From the block that holds after+1: the last that starts at or below it.
		cur := tx.Bucket(bucketLog).Cursor()
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], after+1)
		k, v := cur.Seek(key[:])
		switch {
		case k == nil:
			k, v = cur.Last()
		case len(k) == 8 && binary.BigEndian.Uint64(k) > after+1:
			if pk, pv := cur.Prev(); pk != nil {
				k, v = pk, pv
			} else {
				k, v = cur.First()
			}
		}
		n := 0
		lr := new(logReader)
		for ; k != nil; k, v = cur.Next() {
			if err := lr.reset(k, v); err != nil {
				return err
			}
			if lr.seq > h.Last {
				break
			}
			for {
				rest, ok := lr.next()
				if !ok {
					break
				}
				if lr.seq <= after {
					continue
				}
				if lr.seq > h.Last {
					upTo, complete = h.Last, true
					return nil
				}
				if n++; n%4096 == 0 && ctx.Err() != nil {
					return ctx.Err()
				}
				if prefix != "" && !bytes.HasPrefix(lr.path, []byte(prefix)) {
					continue
				}
				if len(evs) == limit {
					upTo = lr.seq - 1
					return nil
				}
				e, err := lr.event(rest)
				if err != nil {
					return fmt.Errorf("sequence %d: %w", lr.seq, err)
				}
				e.Project = project
				evs = append(evs, e)
			}
			if lr.r.Err != nil {
				return fmt.Errorf("the block of sequence %d: %w", binary.BigEndian.Uint64(k), errLogEntry)
			}
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
