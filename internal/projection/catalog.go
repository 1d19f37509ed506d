package projection

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/klauspost/compress/s2"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/guide/guide/internal/binrec"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/guideyaml"
	"github.com/guide/guide/internal/text"
)

// catalogFormat changes whenever the stored layout or the derivation of a record changes;
// a catalog of another format is rebuilt from the stream rather than misread.
const catalogFormat = "catalog/8" // 2: session documents, summaries; 3: content compressed; 4: bodies in their own file; 5: titles and summaries read as the index reads them (text.ParseMarkdown); 6: records and state values checksummed; 7: records without their key, hashes as bytes (records and change log); 8: the change log in blocks

var (
	bucketDocs    = []byte("docs")    // path → record
	bucketContent = []byte("content") // content hash → the location of its body (see bodies.go)
	bucketState   = []byte("state")   // checkpoint and stream identity

	keyFormat  = []byte("format")
	keySeq     = []byte("seq")
	keyStream  = []byte("stream")
	keyProject = []byte("project")
	keyScan    = []byte("scan")
	keyConfig  = []byte("config")  // canonical JSON of the project configuration, absent for the default
	keyBodies  = []byte("bodies")  // the body file's generation, committed end and live bytes
	keyOrphans = []byte("orphans") // content hashes the last batch left unreferenced
	keyRecords = []byte("records") // how many records the docs bucket holds, to size maps at load
)

// ErrLocked is returned when another process has the catalog open.
var ErrLocked = errors.New("catalog is in use by another process")

// State is how far the catalog has followed the stream.
type State struct {
	Project  string       `json:"project"`
	StreamID string       `json:"stream_id"` // identifies the stream the catalog was built from
	Seq      uint64       `json:"applied_seq"`
	Scan     *events.Scan `json:"last_scan,omitempty"` // the last completed scan
	ScanSeq  uint64       `json:"last_scan_seq,omitempty"`
	// ConfigSource is the file the configuration in force came from, "" for the default.
	ConfigSource string `json:"config_source,omitempty"`
}

// Catalog is the path → document projection, persisted in a bbolt file under Dir, with the
// folder tree in memory, and the documents' bodies in a file beside it (see bodies.go).
// One goroutine applies batches; any number read snapshots.
type Catalog struct {
	Dir    string
	Logger *slog.Logger
	// BodyRead, when set, is called before each body is read from its file: tests make
	// reads slow with it.
	BodyRead func()
	// Holds, when set, says whose bodies the catalog keeps: a replica of some partitions
	// keeps the record of every document, and the bodies of its partitions' alone. nil
	// keeps every body.
	Holds func(events.DocKey) bool
	// Fetch, when set, fetches bodies the catalog does not keep, from where they are kept:
	// by content hash, checked against it here. Read calls it between two runs of its
	// function, never under the lock (see Read).
	Fetch func(ctx context.Context, docs []*Document) map[string][]byte
	// Partition, when set, names the partition that keeps a document's body, for the
	// answers that say which is missing (ElsewhereError).
	Partition func(events.DocKey) int
	// ReleaseEvery is how much the catalog file grows between two releases of its pages
	// mapped into the process while batches are applied (Release): a cold index of 100k
	// documents otherwise leaves the whole file resident, 120 MB, until it is caught up.
	// Zero is DefaultReleaseEvery; negative releases nothing while applying.
	ReleaseEvery int64
	// Markdown, when set, hands the documents the catalog parses to the search index of
	// the same process, which then parses none of them again (text.MarkdownHandoff).
	Markdown *text.MarkdownHandoff

	db *bolt.DB
	// releasedAt is the file's size at its last release while applying; under applying.
	releasedAt int64

	// Lock order: applying, mu, then a bbolt transaction.
	// applying is held while a batch is written and installed, and while the body file
	// compacts: one writer of the files at a time.
	applying sync.Mutex
	mu       sync.RWMutex
	docs     map[string]*Document
	tree     *tree
	// sessions holds the session documents, by session token then file name; they are
	// in no folder, so never in the tree.
	sessions map[string]map[string]*Document
	// sessionBytes is the size of every session document, together; totals publishes it
	// with the sequence it stands at, for readers that take no lock (SessionTotals).
	sessionBytes int64
	totals       atomic.Pointer[SessionTotals]
	state        State
	// config is the project configuration in force; nil for the default, derived from
	// the tree on read.
	config *guideyaml.Config
	// log is where the change log stands (changelog.go), changed with the checkpoint.
	log logState

	// Writer-only: how many documents reference each content hash, and hashes no longer
	// referenced, deleted by the next batch (a reader of the previous state may still
	// read them until then); the orphans are stored with the batch that made them, so that
	// a process stopped before the next one leaves nothing to look for at open.
	refs    map[string]int
	orphans map[string]struct{}
	records int // records in the docs bucket, the tree's and the sessions'

	// files are the open body files by generation: the current one, and the next during a
	// compaction. Readers use them under mu; the writer changes the map under the write lock.
	files map[uint64]*os.File
	// pins counts, by body file, the bodies kept past their snapshot (KeepBody) and not
	// released; a file retired meanwhile (compacted away, reset, closed) is closed by the
	// last release. Both under pinMu.
	pinMu   sync.Mutex
	pins    map[*os.File]int
	retired map[*os.File]bool
	// body is where the current body file stands, as committed; writer-only.
	body bodyState
	// bodyBuf is the last batch's buffer of packed bodies, kept for the next; writer-only.
	bodyBuf []byte

	scanMu  sync.Mutex
	scanned chan struct{} // closed once the catalog holds a complete scan

	// Options for this package's tests, set when the catalog is built.
	// compactMinDead, when above 0, replaces the package's compactMinDead.
	compactMinDead int64
	// afterBodyStep, when set, is called at each step of writing bodies, by name, so that
	// a test can kill the process there.
	afterBodyStep func(step string)

	// repairs lists the damage found in the catalog's files, and what was done about it.
	repairs Repairs
	// stream is where a damaged body is read again from (UseStream); nil until connected.
	stream atomic.Pointer[events.Stream]
	// broken is set when catalog.db is found damaged while in use: the catalog then
	// refuses batches and says it was built from no stream, so that the runner resets it,
	// which starts a new file. damaged is closed then, to wake the runner.
	broken    atomic.Pointer[error]
	poisoned  atomic.Bool // bbolt panicked or faulted: its locks may be held, it is never called again
	damageMu  sync.Mutex
	damagedCh chan struct{}

	// Bodies read again from the stream, by content hash, waiting to be written back
	// (repairBodies); repairMu is a leaf.
	repairMu     sync.Mutex
	toRepair     map[string][]byte
	repairing    bool
	repairClosed bool
	repairWG     sync.WaitGroup
}

// Scanned is closed once the catalog holds the result of a complete scan of the tree.
func (c *Catalog) Scanned() <-chan struct{} {
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	if c.scanned == nil {
		c.scanned = make(chan struct{})
	}
	return c.scanned
}

func (c *Catalog) markScanned(done bool) {
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	if c.scanned == nil {
		c.scanned = make(chan struct{})
	}
	select {
	case <-c.scanned:
		if !done {
			c.scanned = make(chan struct{})
		}
	default:
		if done {
			close(c.scanned)
		}
	}
}

// Open opens or creates the catalog file, checks it and loads it. A file of another format,
// or damaged, is deleted and rebuilt from the stream: the catalog is derived data. A file
// that cannot be opened for another reason (permissions, too many open files, a full disk)
// is an error, and the file is kept.
func (c *Catalog) Open() error {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	file := c.file()
	err := c.openFile(file)
	if err == nil {
		// Every record's page was read once, and is kept in memory: the mapping need not be.
		c.Release()
		return nil
	}
	var old *oldFormatError
	switch {
	case errors.Is(err, ErrLocked):
		return err
	case errors.As(err, &old):
		// Nothing of it is kept: a new file, rather than the old one with its pages freed,
		// so that the disk an older layout took is handed back.
		c.Logger.Info("catalog format changed; rebuilding from the stream", "was", old.format, "now", catalogFormat)
	case Environmental(err) && !errors.Is(err, ErrDamaged):
		return fmt.Errorf("opening the catalog %s: %w", file, err)
	default:
		c.Logger.Error("catalog damaged; deleting it and rebuilding it from the stream", "file", file, "err", err)
		c.repairs.Add(Repair{Projection: "catalog", File: "catalog.db", Problem: err.Error(), Action: "deleted and rebuilt from the stream"})
	}
	if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := c.openFile(file); err != nil {
		return fmt.Errorf("creating the catalog %s: %w", file, err)
	}
	return nil
}

// file is the catalog's bbolt file.
func (c *Catalog) file() string { return filepath.Join(c.Dir, "catalog.db") }

// openFile opens the catalog file, checks it whole (verify) and loads it, with any panic
// or fault of bbolt's on a damaged file turned into an error; on failure nothing of it
// stays open.
func (c *Catalog) openFile(file string) error {
	var db *bolt.DB
	err := Guard(func() error {
		var err error
		if db, err = c.openDB(file); err != nil {
			return err
		}
		if err := verify(file); err != nil {
			return err
		}
		c.db = db
		if err := c.load(); err != nil {
			return err
		}
		// Populating the mapping served the load; a remap as the file grows would fault
		// the whole file in again, every page resident (120 MB at 100k documents) though
		// a batch touches a few of them.
		db.MmapFlags = 0
		return nil
	})
	if err != nil {
		c.closeBodies()
		if db != nil && !Faulted(err) {
			_ = db.Close()
		}
		c.db = nil
	}
	return err
}

// verify checks a bbolt file before anything is read from it: its structure, read as
// plain bytes (checkPages: every page within the file, reached once, none both used and
// free, every key and value within its page, keys in order), which is what bbolt trusts
// when it reads the file through its mapping. The records and state values carry
// checksums of their own, checked as they are loaded.
func verify(file string) error { return checkPages(file) }

// oldFormatError says that the catalog file holds another format than this program's.
type oldFormatError struct{ format string }

func (e *oldFormatError) Error() string { return "catalog format " + e.format }

func (c *Catalog) openDB(file string) (*bolt.DB, error) {
	db, err := bolt.Open(file, 0o644, &bolt.Options{
		Timeout: 500 * time.Millisecond,
		// The stream is the source of truth: after a crash that loses a write, the catalog
		// is behind its checkpoint, never ahead of it, or unreadable and rebuilt. A killed
		// process loses nothing, since the kernel still holds its writes.
		NoSync: true,
		// Nor does it grow the file ahead of its pages: bbolt otherwise extends it by 16 MB
		// past the last page each time it grows (and syncs it), a fifth of a partition
		// replica's catalog at 100k documents; the file then ends at its last page.
		NoGrowSync:     true,
		NoFreelistSync: false, // a persisted freelist: open need not walk every page (restart time)
		// Map the file in one go rather than fault each page in as the load first reads it
		// (openFile then maps without it).
		MmapFlags:    syscall.MAP_POPULATE,
		FreelistType: bolt.FreelistMapType,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s", ErrLocked, file)
	}
	return db, err
}

func (c *Catalog) load() error {
	// The load allocates what it keeps, 100k records and their maps at 100k documents: a
	// collection during it would find nothing to free, and took a third of its time.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	c.docs = make(map[string]*Document)
	c.sessions = make(map[string]map[string]*Document)
	c.sessionBytes = 0
	c.tree = newTree()
	c.refs = make(map[string]int)
	c.orphans = make(map[string]struct{})
	c.records = 0
	c.state = State{}
	c.config = nil
	var bodies bodyState
	err := c.db.Update(func(tx *bolt.Tx) error {
		st, err := tx.CreateBucketIfNotExists(bucketState)
		if err != nil {
			return err
		}
		if f := st.Get(keyFormat); f != nil && string(f) != catalogFormat {
			return &oldFormatError{string(f)}
		}
		if err := st.Put(keyFormat, []byte(catalogFormat)); err != nil {
			return err
		}
		for _, b := range [][]byte{bucketDocs, bucketContent, bucketLog, bucketLogPaths} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		var bad error // the first state value that fails its checksum
		get := func(k []byte) []byte {
			v, err := getState(st, k)
			if err != nil && bad == nil {
				bad = fmt.Errorf("state %s: %w", k, err)
			}
			return v
		}
		if v := get(keySeq); len(v) == 8 {
			c.state.Seq = binary.BigEndian.Uint64(v)
		}
		if bodies, err = decodeBodyState(get(keyBodies)); err != nil {
			return err
		}
		if v := get(keyRecords); len(v) == 8 {
			n := int(binary.BigEndian.Uint64(v))
			c.docs, c.refs = make(map[string]*Document, n), make(map[string]int, n)
		}
		if err := decodeOrphans(get(keyOrphans), c.orphans); err != nil {
			return err
		}
		c.state.StreamID = string(get(keyStream))
		c.state.Project = string(get(keyProject))
		scan, config := get(keyScan), get(keyConfig)
		if bad != nil {
			return bad
		}
		if err := c.loadLog(tx, st); err != nil {
			return err
		}
		if v := scan; v != nil {
			var s struct {
				Scan *events.Scan
				Seq  uint64
			}
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("scan state: %w", err)
			}
			c.state.Scan, c.state.ScanSeq = s.Scan, s.Seq
		}
		if v := config; v != nil {
			cfg, err := guideyaml.Decode(v)
			if err != nil {
				return fmt.Errorf("config state: %w", err)
			}
			c.setConfig(cfg)
		}
		return tx.Bucket(bucketDocs).ForEach(func(k, v []byte) error {
			d, err := decodeDocument(k, v)
			if err != nil {
				return fmt.Errorf("record %q: %w", k, err)
			}
			c.put(d)
			c.records++
			if d.Hash != "" && c.keeps(d) {
				c.refs[d.Hash]++
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	if err := c.openBodies(bodies); err != nil {
		return err
	}
	c.tree.settle()
	c.publishTotals()
	c.markScanned(c.state.Scan != nil)
	return nil
}

// DefaultReleaseEvery is the catalog file's growth between two releases of its mapped
// pages while batches are applied.
const DefaultReleaseEvery = 16 << 20

// releaseIfGrown releases the file's mapped pages once it has grown by ReleaseEvery since
// the last time. Called under applying.
func (c *Catalog) releaseIfGrown() {
	every := cmp.Or(c.ReleaseEvery, DefaultReleaseEvery)
	if every < 0 {
		return
	}
	var size int64
	_ = c.db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	if size-c.releasedAt >= every {
		c.releasedAt = c.release()
	}
}

// Release hands back the catalog file's pages mapped into the process, which a load or a
// catch-up leaves resident (150 MB at 100k documents): the records are in memory, and a
// page read again comes back from the page cache.
func (c *Catalog) Release() { c.release() }

// release is Release, returning the size of the file it released.
func (c *Catalog) release() (size int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.db == nil || c.poisoned.Load() {
		return 0
	}
	// Inside a transaction, so that bbolt cannot remap the file meanwhile.
	err := Guard(func() error {
		return c.db.View(func(tx *bolt.Tx) error {
			size = tx.Size()
			// Data is the address of bbolt's mapping of the file, outside the Go heap.
			info := c.db.Info()
			mapped := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&info.Data))), tx.Size())
			if err := syscall.Madvise(mapped, syscall.MADV_DONTNEED); err != nil {
				c.Logger.Debug("catalog: releasing the mapped file", "err", err)
			}
			return nil
		})
	})
	if err != nil {
		c.markBroken(err)
	}
	return size
}

// Close closes the catalog file.
func (c *Catalog) Close() error {
	c.repairMu.Lock()
	c.repairClosed = true
	c.repairMu.Unlock()
	c.repairWG.Wait()
	if c.db == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeBodies()
	var err error
	if !c.poisoned.Load() {
		err = c.db.Close()
	}
	c.db = nil
	return err
}

// Name names the projection in logs and status.
func (c *Catalog) Name() string { return "catalog" }

// Checkpoint is the sequence of the last event the catalog applied.
func (c *Catalog) Checkpoint() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state.Seq
}

// Identity returns the stream and project the catalog was built from.
func (c *Catalog) Identity() (streamID, project string) {
	if c.broken.Load() != nil {
		return "", "" // to be reset, and rebuilt from the stream
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state.StreamID, c.state.Project
}

// Reset empties the catalog and records the stream and project it will be built from.
func (c *Catalog) Reset(st State) error {
	c.applying.Lock()
	defer c.applying.Unlock()
	if c.broken.Load() != nil {
		if err := c.startOver(); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The bodies start over in the next generation's file; the old one goes once the
	// records that point into it are gone.
	next := bodyState{gen: c.body.gen + 1}
	log := logState{kept: c.log.kept} // the log starts again with the catalog, from the stream's start
	nf, err := os.OpenFile(filepath.Join(c.Dir, bodyFileName(next.gen)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	err = Guard(func() error {
		return c.db.Update(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketDocs, bucketContent, bucketState, bucketLog, bucketLogPaths} {
				if tx.Bucket(b) != nil {
					if err := tx.DeleteBucket(b); err != nil {
						return err
					}
				}
				if _, err := tx.CreateBucket(b); err != nil {
					return err
				}
			}
			s := tx.Bucket(bucketState)
			if err := s.Put(keyFormat, []byte(catalogFormat)); err != nil {
				return err
			}
			if err := putState(s, keyStream, []byte(st.StreamID)); err != nil {
				return err
			}
			if err := putState(s, keyBodies, next.encode()); err != nil {
				return err
			}
			if log.kept != 0 {
				if err := putState(s, keyLog, log.encode()); err != nil {
					return err
				}
			}
			return putState(s, keyProject, []byte(st.Project))
		})
	})
	if errors.Is(err, ErrDamaged) {
		c.markBroken(err)
	}
	if err != nil {
		nf.Close()
		os.Remove(nf.Name())
		return err
	}
	c.closeBodies()
	c.files = map[uint64]*os.File{next.gen: nf}
	c.body = next
	c.removeStaleBodies()
	c.docs = make(map[string]*Document)
	c.sessions = make(map[string]map[string]*Document)
	c.sessionBytes = 0
	c.tree = newTree()
	c.refs = make(map[string]int)
	c.orphans = make(map[string]struct{})
	c.records = 0
	c.state = State{StreamID: st.StreamID, Project: st.Project}
	c.config = nil
	c.log = log
	c.publishTotals()
	c.markScanned(false)
	return nil
}

type change struct {
	doc  *Document // nil: deleted
	sum  Summary
	body []byte
}

// recordKey is a document's key in the docs bucket: its DocKey's ID.
func recordKey(k events.DocKey) []byte { return []byte(k.ID()) }

func (c *Catalog) lookup(k events.DocKey) (*Document, bool) {
	if k.Session == "" {
		d, ok := c.docs[k.Path]
		return d, ok
	}
	d, ok := c.sessions[k.Session][k.Path]
	return d, ok
}

// put inserts or replaces a record in memory; the caller holds mu or owns c.
func (c *Catalog) put(d *Document) {
	if d.Session != "" {
		m := c.sessions[d.Session]
		if m == nil {
			m = make(map[string]*Document)
			c.sessions[d.Session] = m
		}
		if old, ok := m[d.Path]; ok {
			c.sessionBytes -= old.Size
		}
		m[d.Path] = d
		c.sessionBytes += d.Size
		return
	}
	_, existed := c.docs[d.Path]
	c.docs[d.Path] = d
	c.tree.put(d, !existed)
}

// drop removes a record from memory; the caller holds mu.
func (c *Catalog) drop(k events.DocKey) {
	if k.Session != "" {
		if m := c.sessions[k.Session]; m != nil {
			if old, ok := m[k.Path]; ok {
				c.sessionBytes -= old.Size
			}
			delete(m, k.Path)
			if len(m) == 0 {
				delete(c.sessions, k.Session)
			}
		}
		return
	}
	if _, ok := c.docs[k.Path]; ok {
		delete(c.docs, k.Path)
		c.tree.remove(k.Path)
	}
}

// Apply folds a batch of events into the catalog. Events at or below the checkpoint are
// skipped, so applying a batch twice changes nothing.
func (c *Catalog) Apply(b events.Batch) error {
	f := c.fold(b)
	if f.seq == c.state.Seq {
		return nil
	}
	c.applying.Lock()
	defer c.applying.Unlock()
	if err := c.brokenErr(); err != nil {
		return err
	}
	delta := c.refDelta(f)
	if err := Guard(func() error { return c.write(f, delta) }); err != nil {
		if errors.Is(err, ErrDamaged) {
			c.markBroken(err)
		}
		return fmt.Errorf("catalog: %w", err)
	}
	c.install(f, delta)
	c.releaseIfGrown()
	if err := Guard(c.compactIfWorth); err != nil {
		// The bodies stay where they are, readable; the next batch tries again.
		c.Logger.Error("catalog: compacting the body file", "err", err)
		if errors.Is(err, ErrDamaged) {
			c.markBroken(err)
		}
	}
	return nil
}

// folded is what a batch changes in the catalog, each document's last change kept.
type folded struct {
	seq        uint64 // the last sequence applied
	changes    map[events.DocKey]change
	order      []events.DocKey // the documents changed, in the order first met
	scan       *events.Scan
	scanSeq    uint64
	cfgChanged bool
	cfg        *guideyaml.Config // the configuration in force after the batch, nil for the default
	cfgRaw     []byte
	log        []*events.Event // the events for the change log, in order
}

func (f *folded) set(k events.DocKey, ch change) {
	if _, seen := f.changes[k]; !seen {
		f.order = append(f.order, k)
	}
	f.changes[k] = ch
}

// fold reads a batch, events at or below the checkpoint skipped, into what it changes.
// Only the applying goroutine calls it, so it may read the state without the lock.
func (c *Catalog) fold(b events.Batch) *folded {
	f := &folded{seq: c.state.Seq, changes: make(map[events.DocKey]change),
		order: make([]events.DocKey, 0, len(b.Events)), scan: c.state.Scan, scanSeq: c.state.ScanSeq}
	for i := range b.Events {
		e := &b.Events[i]
		if e.Seq <= f.seq {
			continue
		}
		f.seq = e.Seq
		if c.log.kept != 0 && logged(e) {
			f.log = append(f.log, e)
		}
		switch e.Op {
		case events.OpUpsert:
			ch := record(c.Markdown, e)
			if !c.keeps(ch.doc) {
				// Another partition's document: its record, slim; its summary is
				// derived from its body, fetched when asked for (Snapshot.Summary).
				ch.sum = Summary{}
			}
			f.set(ch.doc.Key(), ch)
		case events.OpDelete:
			f.set(events.DocKey{Session: e.Session, Path: e.Path}, change{})
		case events.OpScanEnd:
			f.scan, f.scanSeq = e.Scan, e.Seq
		case events.OpConfig:
			next, err := guideyaml.Decode(e.Config)
			if err != nil {
				// The indexer validated it; a body this program cannot read keeps the
				// last good configuration, as a broken file does.
				c.Logger.Error("config event not applied", "seq", e.Seq, "source", e.Source, "err", err)
				continue
			}
			next.Source = e.Source
			f.cfgChanged = true
			if e.Source == "" {
				f.cfg, f.cfgRaw = nil, nil
			} else {
				f.cfg, f.cfgRaw = next, next.Canonical()
			}
		}
	}
	return f
}

// record is the document an upsert event describes, with its summary, and its body when
// readable; content that does not match its hash is recorded as unreadable.
func record(md *text.MarkdownHandoff, e *events.Event) change {
	d := &Document{Path: e.Path, Session: e.Session, Size: e.Size, Mtime: e.Mtime.UTC(), Hash: e.Hash,
		Status: e.Status, Reason: e.Reason, Seq: e.Seq}
	var body []byte
	var sum Summary
	if d.Status == events.StatusOK && e.Slim {
		// Read headers-only, another partition's: the record from what they describe.
		d.Words, d.Title = e.Words, e.Title
	} else if d.Status == events.StatusOK {
		if events.HashContent(e.Content) != e.Hash {
			d.Status, d.Reason = events.StatusUnreadable, "content does not match its hash"
		} else {
			body = e.Content
			d.Words, d.Title, sum = describe(md.Put(e.Seq, e.Hash, body), body)
		}
	}
	return change{doc: d, sum: sum, body: body}
}

// refDelta is how the batch changes each content hash's reference count, to know which
// content to write and which to drop.
func (c *Catalog) refDelta(f *folded) map[string]int {
	delta := make(map[string]int)
	for _, p := range f.order {
		if old, ok := c.lookup(p); ok && c.keeps(old) {
			delta[old.Hash]--
		}
		if d := f.changes[p].doc; d != nil && c.keeps(d) {
			delta[d.Hash]++
		}
	}
	return delta
}

// newOrphans are the hashes the batch leaves unreferenced.
func (c *Catalog) newOrphans(delta map[string]int) []string {
	var out []string
	for h, n := range delta {
		if n < 0 && c.refsAfter(delta, h) <= 0 {
			out = append(out, h)
		}
	}
	return out
}

// recordsAfter is how many records the catalog holds once the batch is applied.
func (c *Catalog) recordsAfter(f *folded) int {
	n := c.records
	for _, p := range f.order {
		_, existed := c.lookup(p)
		switch {
		case f.changes[p].doc == nil && existed:
			n--
		case f.changes[p].doc != nil && !existed:
			n++
		}
	}
	return n
}

func encodeOrphans(hs []string) []byte {
	var b []byte
	for _, h := range hs {
		b = binrec.AppendString(b, h)
	}
	return b
}

func decodeOrphans(v []byte, into map[string]struct{}) error {
	r := binrec.NewReader(string(v))
	for r.Err == nil && r.Len() > 0 {
		into[r.String()] = struct{}{}
	}
	if r.Err != nil {
		return fmt.Errorf("orphans: %w", errRecord)
	}
	return nil
}

// refsAfter is the reference count of content h once delta is applied.
func (c *Catalog) refsAfter(delta map[string]int, h string) int { return c.refs[h] + delta[h] }

// recordsFill is how full bbolt fills the pages it splits in the bucket of records. Its
// default, half, suits keys inserted at random, as the content's hashes are (filled
// fuller, their pages split into a full one and a nearly empty one: 24 MB of pages for
// 8 MB instead of 12 at 100k). A scan inserts its records in the order of their paths,
// each batch a run of keys past the last, so the half pages a split left behind were never
// filled again: the records of 100k documents took 123 MB of pages for 53 MB of keys and
// values, 64 MB filled to nine tenths. A record rewritten in place (an edit) keeps its page.
const recordsFill = 0.9

// write stores the batch's changes in one bbolt transaction: orphaned content dropped,
// records put or deleted, new content's locations put, then the checkpoint, configuration
// and scan. The new bodies are appended to the body file before the transaction commits.
func (c *Catalog) write(f *folded, delta map[string]int) error {
	a := appendBodies{st: c.body, buf: c.bodyBuf[:0]}
	defer func() {
		if cap(a.buf) <= maxKeptBodyBuf {
			c.bodyBuf = a.buf[:0] // the next batch's, rather than grown again from nothing
		}
	}()
	err := c.db.Update(func(tx *bolt.Tx) error {
		docs, content, st := tx.Bucket(bucketDocs), tx.Bucket(bucketContent), tx.Bucket(bucketState)
		docs.FillPercent = recordsFill
		for h := range c.orphans {
			if c.refsAfter(delta, h) <= 0 {
				if v := content.Get([]byte(h)); v != nil {
					a.drop(v)
				}
				if err := content.Delete([]byte(h)); err != nil {
					return err
				}
			}
		}
		for _, p := range f.order {
			ch := f.changes[p]
			if ch.doc == nil {
				if err := docs.Delete(recordKey(p)); err != nil {
					return err
				}
				continue
			}
			k := recordKey(p)
			if err := docs.Put(k, encodeDocument(k, ch.doc, ch.sum)); err != nil {
				return err
			}
			if ch.body != nil && c.keeps(ch.doc) && c.refs[ch.doc.Hash] <= 0 && content.Get([]byte(ch.doc.Hash)) == nil {
				if err := content.Put([]byte(ch.doc.Hash), a.add(ch.body).encode()); err != nil {
					return err
				}
			}
		}
		if err := putState(st, keyBodies, a.st.encode()); err != nil {
			return err
		}
		if err := putState(st, keyOrphans, encodeOrphans(c.newOrphans(delta))); err != nil {
			return err
		}
		if err := putState(st, keyRecords, binary.BigEndian.AppendUint64(nil, uint64(c.recordsAfter(f)))); err != nil {
			return err
		}
		if err := c.writeLog(tx, st, f); err != nil {
			return err
		}
		if err := c.writeState(st, f); err != nil {
			return err
		}
		if len(a.buf) > 0 {
			if _, err := c.files[a.st.gen].WriteAt(a.buf, c.body.end); err != nil {
				return fmt.Errorf("appending bodies: %w", err)
			}
		}
		c.bodyStep("bodies written")
		return nil
	})
	if err != nil {
		return err
	}
	c.body = a.st
	return nil
}

// writeState stores the checkpoint, and the configuration and scan when the batch
// changed them.
func (c *Catalog) writeState(st *bolt.Bucket, f *folded) error {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], f.seq)
	if err := putState(st, keySeq, v[:]); err != nil {
		return err
	}
	if f.cfgChanged {
		var err error
		if f.cfgRaw == nil {
			err = st.Delete(keyConfig)
		} else {
			err = putState(st, keyConfig, f.cfgRaw)
		}
		if err != nil {
			return err
		}
	}
	if f.scanSeq != c.state.ScanSeq {
		raw, _ := json.Marshal(struct {
			Scan *events.Scan
			Seq  uint64
		}{f.scan, f.scanSeq})
		if err := putState(st, keyScan, raw); err != nil {
			return err
		}
	}
	return nil
}

// install makes the written batch visible to readers: reference counts, records, tree,
// checkpoint, scan and configuration, under the lock.
func (c *Catalog) install(f *folded, delta map[string]int) {
	c.mu.Lock()
	// The batch's write deleted the orphans still unreferenced; the others are referenced
	// again, and become orphans anew only in the batch that drops them, so that a reader of
	// the state before that batch still finds them.
	clear(c.orphans)
	c.records = c.recordsAfter(f)
	for h, n := range delta {
		c.refs[h] += n
		if c.refs[h] <= 0 {
			delete(c.refs, h)
			c.orphans[h] = struct{}{}
		}
	}
	for _, p := range f.order {
		if ch := f.changes[p]; ch.doc == nil {
			c.drop(p)
		} else {
			c.put(ch.doc)
		}
	}
	c.tree.settle()
	c.state.Seq = f.seq
	if c.log.kept != 0 {
		c.log.seq = f.seq
	}
	c.state.Scan, c.state.ScanSeq = f.scan, f.scanSeq
	if f.cfgChanged {
		c.setConfig(f.cfg)
	}
	c.publishTotals()
	c.mu.Unlock()
	c.markScanned(f.scan != nil)
}

// SessionTotals is the size of the session documents a catalog holds, of every session
// together, and the stream sequence the catalog had applied when it held them.
type SessionTotals struct {
	Bytes int64
	Seq   uint64
}

// SessionTotals returns the catalog's SessionTotals without taking its lock: a caller that
// holds a lock of its own (the session registry, counting what its sessions attached) may
// read it there.
func (c *Catalog) SessionTotals() SessionTotals {
	if t := c.totals.Load(); t != nil {
		return *t
	}
	return SessionTotals{}
}

// publishTotals publishes sessionBytes and the sequence; the caller holds mu or owns c.
func (c *Catalog) publishTotals() {
	c.totals.Store(&SessionTotals{Bytes: c.sessionBytes, Seq: c.state.Seq})
}

// setConfig installs the configuration in force; the caller holds mu or owns c.
func (c *Catalog) setConfig(cfg *guideyaml.Config) {
	c.config = cfg
	c.state.ConfigSource = ""
	if cfg != nil {
		c.state.ConfigSource = cfg.Source
	}
}

// Read calls fn with a consistent snapshot of the catalog. The snapshot, and anything it
// returns, is valid only during fn; fn must not block for long, since the writer waits.
// When fn asked for bodies kept elsewhere (another partition's), they are fetched once fn
// has returned and the lock is released, and fn runs again on a new snapshot with them:
// fn must do nothing but read.
func (c *Catalog) Read(fn func(*Snapshot) error) error {
	missing, err := c.read(fn, nil)
	if len(missing) == 0 || c.Fetch == nil {
		return err
	}
	// fn may stop at the first body missing: each run fetches those it asked for, until
	// it asks for none new or they are not to be had.
	ctx, cancel := context.WithTimeout(context.Background(), FetchTimeout)
	defer cancel()
	fetched := map[string][]byte{}
	for len(missing) > 0 && ctx.Err() == nil {
		got := c.Fetch(ctx, missing)
		for h, b := range got {
			if events.HashContent(b) != h {
				c.Logger.Warn("catalog: a fetched body does not match its hash; left out", "hash", h)
				delete(got, h)
			}
		}
		if len(got) == 0 {
			return err // as the last run found it: those bodies are not to be had
		}
		maps.Copy(fetched, got)
		missing, err = c.read(fn, fetched)
	}
	return err
}

// FetchTimeout bounds the fetching of bodies kept elsewhere, for one Read.
const FetchTimeout = 5 * time.Second

// ErrElsewhere is returned for the body of a document another partition keeps, when no
// replica of it gave it.
var ErrElsewhere = errors.New("content kept by another partition, and none of its replicas answered")

// ElsewhereError is ErrElsewhere for one document, with the partition that keeps its body
// (-1 when the catalog does not know: no Partition function).
type ElsewhereError struct {
	Path      string
	Partition int
}

func (e *ElsewhereError) Error() string {
	if e.Partition < 0 {
		return fmt.Sprintf("%s: %v", e.Path, ErrElsewhere)
	}
	return fmt.Sprintf("%s: %v (partition %d)", e.Path, ErrElsewhere, e.Partition)
}

func (e *ElsewhereError) Unwrap() error { return ErrElsewhere }

// keeps reports whether the catalog keeps d's body.
func (c *Catalog) keeps(d *Document) bool {
	return d.Readable() && (c.Holds == nil || c.Holds(d.Key()))
}

// read is one run of fn under the lock, with the bodies fetched before by hash; it
// returns the documents whose bodies fn asked for and neither the catalog nor fetched had.
func (c *Catalog) read(fn func(*Snapshot) error, fetched map[string][]byte) ([]*Document, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.db == nil {
		return nil, errors.New("catalog is closed")
	}
	s := &Snapshot{c: c, fetched: fetched}
	defer func() {
		if s.tx != nil {
			_ = s.tx.Rollback()
		}
	}()
	err := fn(s)
	return s.missing, err
}

// Snapshot is a consistent read-only view of the catalog.
type Snapshot struct {
	c  *Catalog
	tx *bolt.Tx
	// Bodies kept elsewhere: those fetched for this snapshot, by hash, and the documents
	// asked for that were not (see Catalog.Read).
	fetched map[string][]byte
	missing []*Document
}

// Document returns the document at path p.
func (s *Snapshot) Document(p string) (*Document, bool) {
	d, ok := s.c.docs[p]
	return d, ok
}

// Folder returns the folder at path p ("" is the root).
func (s *Snapshot) Folder(p string) (*Folder, bool) {
	f, ok := s.c.tree.folders[p]
	return f, ok
}

// Config is the project configuration in force: the last config event's, or the default
// derived from the tree's top-level folders when there is none.
func (s *Snapshot) Config() *guideyaml.Config {
	if s.c.config != nil {
		return s.c.config
	}
	var top []string
	for _, f := range s.c.tree.root.Folders() {
		top = append(top, f.Name())
	}
	return guideyaml.Default(top)
}

// SessionDocument returns the document name attached to the session token.
func (s *Snapshot) SessionDocument(token, name string) (*Document, bool) {
	d, ok := s.c.sessions[token][name]
	return d, ok
}

// SessionDocuments returns the documents attached to the session token, sorted by name.
func (s *Snapshot) SessionDocuments(token string) []*Document {
	m := s.c.sessions[token]
	out := make([]*Document, 0, len(m))
	for _, d := range m {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Document) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// SessionTokens returns the tokens of every session that has documents, sorted.
func (s *Snapshot) SessionTokens() []string {
	out := make([]string, 0, len(s.c.sessions))
	for t := range s.c.sessions {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Len is the number of documents of the tree (session documents are not counted).
func (s *Snapshot) Len() int { return len(s.c.docs) }

// State reports how far the catalog has followed the stream.
func (s *Snapshot) State() State {
	return s.c.state
}

// Content returns a document's bytes. They are valid only until the snapshot ends.
func (s *Snapshot) Content(d *Document) ([]byte, error) {
	b, err := s.Body(d)
	if err != nil {
		return nil, err
	}
	return b.Read()
}

// begin starts the snapshot's transaction, once: the records and bodies a snapshot reads
// are those of the documents it holds in memory, since the writer changes both under mu.
func (s *Snapshot) begin() (*bolt.Tx, error) {
	if s.c.poisoned.Load() {
		return nil, s.c.brokenErr()
	}
	if s.tx == nil {
		tx, err := s.c.db.Begin(false)
		if err != nil {
			return nil, err
		}
		s.tx = tx
	}
	return s.tx, nil
}

// Summary reads d's outline and first paragraph from its record, or for a document another
// partition keeps, from its body (Body: it may be fetched). Like Body, it is for one
// goroutine of the snapshot at a time. A record found damaged since the catalog was
// opened has its summary derived again from the document's content.
func (s *Snapshot) Summary(d *Document) (Summary, error) {
	if d.Readable() && !s.c.keeps(d) {
		// Another partition's document: its record is slim, its summary is its body's,
		// fetched from a replica of that partition (Catalog.Read runs fn again with it).
		body, err := s.Content(d)
		if err != nil {
			return Summary{}, err
		}
		_, _, sum := Describe(body)
		return sum, nil
	}
	var sum Summary
	err := Guard(func() error {
		tx, err := s.begin()
		if err != nil {
			return err
		}
		k := recordKey(d.Key())
		v := tx.Bucket(bucketDocs).Get(k)
		if v == nil {
			return damagedf("%s: record missing from the catalog", d.Path)
		}
		sum, err = decodeSummary(k, v)
		return err
	})
	if err == nil || !errors.Is(err, ErrDamaged) {
		return sum, err
	}
	s.c.markBroken(fmt.Errorf("the record of %s: %w", d.Path, err))
	if !d.Readable() {
		return Summary{}, nil
	}
	body, berr := s.Content(d)
	if berr != nil {
		return Summary{}, err
	}
	_, _, sum = Describe(body)
	return sum, nil
}

// Body is where a document's content is stored: Read reads and unpacks it, from any
// goroutine, while the snapshot it came from is open. Finding it (Snapshot.Body) takes the
// snapshot's transaction and is for one goroutine at a time; reading it, the costly part,
// is not. A body that does not match the document's content hash is never returned: it is
// read again from the stream (and written back), or the read fails.
type Body struct {
	s *Snapshot
	d *Document
	// where is the body's location; lost says why there is none (a damaged catalog).
	where location
	lost  error
	kept  *keptBody // set by KeepBody
	// held is the content itself, fetched from another partition (elsewhere).
	held      []byte
	elsewhere bool
}

// keptBody is a body read after its snapshot ended: its catalog, its location, and its
// file, pinned (none when the location is lost).
type keptBody struct {
	c    *Catalog
	file *os.File
	loc  location
}

// KeepBody is Body for a read after the snapshot ends: the caller reads it outside
// Catalog.Read, where a slow read (a large body, a cold page cache, many of them) holds
// back no writer, and so no reader queued behind a writer; then it calls Release. The
// body file it lies in stays open until then, even if a compaction replaces it.
func (s *Snapshot) KeepBody(d *Document) (Body, error) {
	b, err := s.Body(d)
	if err != nil || b.elsewhere {
		return b, err
	}
	kept := &keptBody{c: s.c, loc: b.where}
	if b.lost == nil {
		f := s.c.files[b.where.gen]
		if f == nil {
			return Body{}, fmt.Errorf("%s: body file of generation %d is not open", d.Path, b.where.gen)
		}
		s.c.pin(f)
		kept.file = f
	}
	return Body{d: d, lost: b.lost, kept: kept}, nil
}

// Release ends a body KeepBody returned; it does nothing for one Body returned.
func (b Body) Release() {
	if b.kept != nil && b.kept.file != nil {
		b.kept.c.unpin(b.kept.file)
	}
}

// Body finds where d's content is stored.
func (s *Snapshot) Body(d *Document) (Body, error) {
	if !d.Readable() {
		return Body{}, fmt.Errorf("%s: no content (%s)", d.Path, d.Status)
	}
	if !s.c.keeps(d) {
		if b, ok := s.fetched[d.Hash]; ok {
			return Body{s: s, d: d, held: b, elsewhere: true}, nil
		}
		s.missing = append(s.missing, d)
		k := -1
		if s.c.Partition != nil {
			k = s.c.Partition(d.Key())
		}
		return Body{}, &ElsewhereError{Path: d.Path, Partition: k}
	}
	b := Body{s: s, d: d}
	err := Guard(func() error {
		tx, err := s.begin()
		if err != nil {
			return err
		}
		v := tx.Bucket(bucketContent).Get([]byte(d.Hash))
		if v == nil {
			b.lost = fmt.Errorf("content %s missing from the catalog", d.Hash)
			return nil
		}
		b.where, b.lost = decodeLocation(v)
		return nil
	})
	if errors.Is(err, ErrDamaged) {
		s.c.markBroken(err)
		b.lost, err = err, nil
	}
	return b, err
}

// Read returns the content.
func (b Body) Read() ([]byte, error) {
	return b.ReadBuffered(nil)
}

// ReadBuffered returns the content, read into buf's memory when buf is set: it is valid
// until buf is used again. Reading many bodies one after the other into one buffer
// allocates once for the largest of them, not twice for each.
func (b Body) ReadBuffered(buf *BodyBuffer) ([]byte, error) {
	if b.elsewhere {
		return b.held, nil
	}
	c := b.catalog()
	problem := b.lost
	if problem == nil {
		var body []byte
		var err error
		if b.kept != nil {
			body, err = c.readAt(b.kept.file, b.kept.loc, buf)
		} else {
			body, err = b.s.readBody(b.where, buf)
		}
		if err == nil && matches(body, b.d.Hash) {
			return body, nil
		}
		problem = err
		if problem == nil {
			problem = errors.New("does not match its content hash")
		}
	}
	body, err := c.fromStream(b.d, problem)
	if err != nil {
		return nil, fmt.Errorf("%s: content %s: %w", b.d.Path, b.d.Hash, err)
	}
	return body, nil
}

// catalog is the catalog the body is stored in.
func (b Body) catalog() *Catalog {
	if b.kept != nil {
		return b.kept.c
	}
	return b.s.c
}

// matches reports whether body's content hash (events.HashContent) is hash.
func matches(body []byte, hash string) bool {
	sum := sha256.Sum256(body)
	var x [2 * sha256.Size]byte
	hex.Encode(x[:], sum[:])
	return string(x[:]) == hash
}

// How a body is stored: a byte naming the form, then the body in it. S2 roughly halves
// text and decodes at gigabytes a second, a few microseconds for a document a reader views.
const (
	contentRaw byte = 0 // as it is: compressing did not make it smaller
	contentS2  byte = 1 // an S2 block
)

// appendContent appends body in its stored form to dst.
func appendContent(dst, body []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 1+s2.MaxEncodedLen(len(body)))
	dst = append(dst, contentS2)
	dst = dst[:len(dst)+len(s2.Encode(dst[len(dst):cap(dst)], body))]
	if len(dst)-n >= 1+len(body) {
		return append(append(dst[:n], contentRaw), body...)
	}
	return dst
}

// unpackContent returns the body a stored value holds: v's own memory, or for a
// compressed body dst's when it is long enough, or new memory.
func unpackContent(v, dst []byte) ([]byte, error) {
	if len(v) == 0 {
		return nil, errors.New("empty stored content")
	}
	switch v[0] {
	case contentRaw:
		return v[1:], nil
	case contentS2:
		return s2.Decode(dst, v[1:])
	}
	return nil, fmt.Errorf("stored content of unknown form %d", v[0])
}
