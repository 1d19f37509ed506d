package projection

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/binrec"
)

// The bodies of the catalog's documents live in a file of their own, beside catalog.db:
// each body packed (see appendContent), appended after the last. The content bucket maps a
// content hash to where its body lies (a location), so catalog.db holds only records and
// stays small: opening it touches a few tens of megabytes at 100k documents rather than
// the whole of the text, and the bodies are read with pread, never mapped, so they do not
// count in the process's resident set.
//
// Consistency with the records, at any kill: a batch appends its new bodies past the
// committed end, then commits its records, locations and the new end in one bbolt
// transaction. A process killed in between leaves bytes past the committed end, which the
// next open cuts off. Removed bodies stay in the file, counted as dead, until a compaction
// copies the live ones into the next generation's file and commits their new locations;
// the file of the generation the state does not name is removed at open.

// bodyFileName is the body file of generation gen.
func bodyFileName(gen uint64) string { return "bodies." + strconv.FormatUint(gen, 10) }

// bodyState is where the body file stands, as committed with the records.
type bodyState struct {
	gen  uint64 // the generation of the current file: bodies.<gen>
	end  int64  // bytes of the file the records account for
	live int64  // bytes of those that a location points at
}

func (b bodyState) encode() []byte {
	v := make([]byte, 24)
	binary.BigEndian.PutUint64(v, b.gen)
	binary.BigEndian.PutUint64(v[8:], uint64(b.end))
	binary.BigEndian.PutUint64(v[16:], uint64(b.live))
	return v
}

func decodeBodyState(v []byte) (bodyState, error) {
	if v == nil {
		return bodyState{}, nil
	}
	if len(v) != 24 {
		return bodyState{}, errors.New("corrupt body file state")
	}
	return bodyState{gen: binary.BigEndian.Uint64(v), end: int64(binary.BigEndian.Uint64(v[8:])),
		live: int64(binary.BigEndian.Uint64(v[16:]))}, nil
}

// location is where a packed body lies: in which generation's file, at which offset.
type location struct {
	gen uint64
	off int64
	n   int64
}

func (l location) encode() []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, l.gen)
	b = binary.AppendUvarint(b, uint64(l.off))
	return binary.AppendUvarint(b, uint64(l.n))
}

func decodeLocation(v []byte) (location, error) {
	r := binrec.NewReader(string(v))
	l := location{gen: r.Uvarint(), off: int64(r.Uvarint()), n: int64(r.Uvarint())}
	if r.Err != nil || r.Len() != 0 || l.off < 0 || l.n <= 0 {
		return location{}, damagedf("a content location cannot be read")
	}
	return l, nil
}

// openBodies opens the body file the state names, cuts off what a killed process appended
// past the committed end, and removes the files of other generations (a compaction or a
// reset that stopped half way). A file shorter than the records say is lost data: an error,
// and the catalog is rebuilt.
func (c *Catalog) openBodies(st bodyState) error {
	c.closeBodies()
	f, err := os.OpenFile(filepath.Join(c.Dir, bodyFileName(st.gen)), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < st.end {
		err = fmt.Errorf("body file %s holds %d bytes, the records account for %d", f.Name(), fi.Size(), st.end)
	}
	if err == nil && fi.Size() > st.end {
		err = f.Truncate(st.end)
	}
	if err != nil {
		f.Close()
		return err
	}
	c.files = map[uint64]*os.File{st.gen: f}
	c.body = st
	c.removeStaleBodies()
	return nil
}

// removeStaleBodies removes the body files of generations other than the current one.
func (c *Catalog) removeStaleBodies() {
	entries, _ := os.ReadDir(c.Dir)
	for _, e := range entries {
		gen, ok := strings.CutPrefix(e.Name(), "bodies.")
		if !ok {
			continue
		}
		if g, err := strconv.ParseUint(gen, 10, 64); err == nil && c.files[g] != nil {
			continue
		}
		if err := os.Remove(filepath.Join(c.Dir, e.Name())); err != nil {
			c.Logger.Warn("catalog: removing a stale body file", "file", e.Name(), "err", err)
		}
	}
}

func (c *Catalog) closeBodies() {
	for g, f := range c.files {
		c.retire(f)
		delete(c.files, g)
	}
}

// pin keeps f open for a body read after its snapshot ended (Snapshot.KeepBody).
func (c *Catalog) pin(f *os.File) {
	c.pinMu.Lock()
	defer c.pinMu.Unlock()
	if c.pins == nil {
		c.pins, c.retired = map[*os.File]int{}, map[*os.File]bool{}
	}
	c.pins[f]++
}

// unpin ends a pin, and closes f if it was retired meanwhile and this was its last.
func (c *Catalog) unpin(f *os.File) {
	c.pinMu.Lock()
	defer c.pinMu.Unlock()
	if c.pins[f]--; c.pins[f] > 0 {
		return
	}
	delete(c.pins, f)
	if c.retired[f] {
		delete(c.retired, f)
		f.Close()
	}
}

// retire closes a body file no longer in use by the catalog, or leaves it to the last
// pin's end: a kept body's reader may still read it (an unlinked file stays readable).
func (c *Catalog) retire(f *os.File) {
	c.pinMu.Lock()
	defer c.pinMu.Unlock()
	if c.pins[f] > 0 {
		c.retired[f] = true
		return
	}
	f.Close()
}

// appendBodies is a batch's new bodies, written past the committed end before the batch's
// records are committed.
type appendBodies struct {
	st  bodyState // the state once the batch is committed
	buf []byte
}

// maxKeptBodyBuf bounds the buffer of packed bodies a catalog keeps for its next batch.
const maxKeptBodyBuf = 16 << 20

// add packs body and returns its location.
func (a *appendBodies) add(body []byte) location {
	before := len(a.buf)
	a.buf = appendContent(a.buf, body)
	l := location{gen: a.st.gen, off: a.st.end, n: int64(len(a.buf) - before)}
	a.st.end += l.n
	a.st.live += l.n
	return l
}

// drop accounts for the removal of the body at v.
func (a *appendBodies) drop(v []byte) {
	if l, err := decodeLocation(v); err == nil && l.gen == a.st.gen {
		a.st.live -= l.n
	}
}

// compactMinDead is how many bytes of removed bodies the file holds before a compaction is
// worth it (Catalog.compactMinDead changes it for a test); a compaction runs once dead
// bytes also outnumber live ones, so the file stays under twice the live bodies and a
// compaction copies at most the bytes removed since the last one.
const compactMinDead int64 = 32 << 20

// bodyStep calls the catalog's afterBodyStep, when a test set one, at a step of writing
// bodies.
func (c *Catalog) bodyStep(step string) {
	if c.afterBodyStep != nil {
		c.afterBodyStep(step)
	}
}

// compactIfWorth copies the live bodies into the next generation's file when removed ones
// take more room than they do. The caller holds applying.
func (c *Catalog) compactIfWorth() error {
	least := compactMinDead
	if c.compactMinDead > 0 {
		least = c.compactMinDead
	}
	dead := c.body.end - c.body.live
	if dead < least || dead <= c.body.live {
		return nil
	}
	return c.compact()
}

// compact writes the live bodies into bodies.<gen+1>, commits their new locations, then
// removes the old file. Readers go on meanwhile: a location names its file's generation,
// and both files stay open until no reader can hold an old location.
func (c *Catalog) compact() error {
	type entry struct {
		key string
		loc location
	}
	var live []entry
	err := c.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketContent).ForEach(func(k, v []byte) error {
			l, err := decodeLocation(v)
			if err != nil {
				return fmt.Errorf("content %s: %w", k, err)
			}
			live = append(live, entry{string(k), l})
			return nil
		})
	})
	if err != nil {
		return err
	}
	slices.SortFunc(live, func(a, b entry) int { return cmp.Compare(a.loc.off, b.loc.off) })
	old := c.body
	next := bodyState{gen: old.gen + 1}
	nf, err := os.OpenFile(filepath.Join(c.Dir, bodyFileName(next.gen)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	abandon := func(err error) error {
		nf.Close()
		os.Remove(nf.Name())
		return err
	}
	w := bufio.NewWriterSize(nf, 1<<20)
	var buf []byte
	for i := range live {
		e := &live[i]
		src := c.files[e.loc.gen]
		if src == nil {
			return abandon(fmt.Errorf("content %s: in no open body file (generation %d)", e.key, e.loc.gen))
		}
		buf = slices.Grow(buf[:0], int(e.loc.n))[:e.loc.n]
		if _, err := src.ReadAt(buf, e.loc.off); err != nil {
			return abandon(fmt.Errorf("content %s: %w", e.key, err))
		}
		if _, err := w.Write(buf); err != nil {
			return abandon(err)
		}
		e.loc = location{gen: next.gen, off: next.end, n: e.loc.n}
		next.end += e.loc.n
	}
	if err := w.Flush(); err != nil {
		return abandon(err)
	}
	next.live = next.end
	c.bodyStep("compaction written")
	c.mu.Lock()
	c.files[next.gen] = nf
	c.mu.Unlock()
	err = c.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketContent)
		for _, e := range live {
			if err := b.Put([]byte(e.key), e.loc.encode()); err != nil {
				return err
			}
		}
		return putState(tx.Bucket(bucketState), keyBodies, next.encode())
	})
	if err != nil {
		c.mu.Lock()
		delete(c.files, next.gen)
		c.mu.Unlock()
		return abandon(err)
	}
	c.bodyStep("compaction committed")
	// Once the write lock is held, no reader holds a location in the old file.
	c.mu.Lock()
	of := c.files[old.gen]
	delete(c.files, old.gen)
	c.body = next
	c.mu.Unlock()
	c.retire(of)
	if err := os.Remove(of.Name()); err != nil {
		c.Logger.Warn("catalog: removing the old body file", "file", of.Name(), "err", err)
	}
	c.Logger.Debug("catalog: body file compacted", "live_bytes", next.end, "dead_bytes", old.end-old.live)
	return nil
}

// readBody reads and unpacks the body at location l, into buf's memory when buf is set.
func (s *Snapshot) readBody(l location, buf *BodyBuffer) ([]byte, error) {
	f := s.c.files[l.gen]
	if f == nil {
		return nil, fmt.Errorf("body file of generation %d is not open", l.gen)
	}
	return s.c.readAt(f, l, buf)
}

// readAt reads and unpacks the body at l in f, into buf's memory when buf is set.
func (c *Catalog) readAt(f *os.File, l location, buf *BodyBuffer) ([]byte, error) {
	if c.BodyRead != nil {
		c.BodyRead()
	}
	if buf == nil {
		buf = &BodyBuffer{}
	}
	buf.packed = grown(buf.packed, int(l.n))
	if _, err := f.ReadAt(buf.packed, l.off); err != nil {
		return nil, err
	}
	body, err := unpackContent(buf.packed, buf.body[:cap(buf.body)])
	if err == nil && len(buf.packed) > 0 && buf.packed[0] == contentS2 {
		buf.body = body[:0]
	}
	return body, err
}

// BodyBuffer is the memory a body is read into (Body.ReadBuffered), used again by the
// next read: its stored form and, once unpacked, the body.
type BodyBuffer struct {
	packed, body []byte
}

// Size is the memory the buffer holds, in bytes.
func (b *BodyBuffer) Size() int { return cap(b.packed) + cap(b.body) }

// grown returns b's memory with length n, or new memory when b holds less.
func grown(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}
