// Package index is the full-text projection: a Bleve (scorch) index folded from the event
// stream — each document analyzed into the fields package schema names, the checkpoint
// in the same batch, the segments merged once it is idle — and the entry to the searches
// over it, which package search runs (its query language is package querylang). It knows
// the events; it knows nothing of MCP or of the catalog.
package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/segment"
	"github.com/guide/guide/internal/text"
)

// MappingVersion changes whenever the mapping, an analyzer, the derivation of a field or
// the segment format changes. An index of another version is deleted and rebuilt from the stream rather than
// searched with terms it was not built with.
const MappingVersion = "index/9"

// Internal keys, written in the same batch as the documents they describe.
var (
	keySeq     = []byte("guide.seq")
	keyStream  = []byte("guide.stream")
	keyProject = []byte("guide.project")
	keyMapping = []byte("guide.mapping")
)

// ErrLocked is returned when another process has the index open.
var ErrLocked = errors.New("index is in use by another process")

// ErrClosed is returned by Open after Close: an open that a closing process began late
// must not leave the index open, and its directory locked, behind it.
var ErrClosed = errors.New("index is closed")

// Index is the full-text projection in a directory of its own. One goroutine applies
// batches; any number search.
type Index struct {
	Dir    string
	Logger *slog.Logger
	// Holds, when set, says which documents the index folds: a replica of some partitions
	// indexes theirs alone. nil folds every document.
	Holds func(events.DocKey) bool
	// Fanout, when set, makes Search a search of every partition of the project, this
	// index answering for its own through Part.
	Fanout *search.Fanout
	// IdleMerge is how long the index has had no batch before it merges its segments
	// (merge.go); 0 means defaultIdleMerge.
	IdleMerge time.Duration
	// Markdown, when set, hands the documents the catalog parses to the search index of
	// the same process, which then parses none of them again (text.MarkdownHandoff).
	Markdown *text.MarkdownHandoff

	// mu guards the Bleve handle against Reset and Close while searches use it.
	mu     sync.RWMutex
	idx    bleve.Index
	closed bool // Close was called: Open refuses

	// Written by the applying goroutine; read by anyone.
	seq      atomic.Uint64
	identity atomic.Pointer[[2]string]
	lengths  atomic.Pointer[lengths] // of the documents applied, for BM25
	// disk is what scorch has persisted of the open Bleve index (one per open/create,
	// so that a callback of an index already replaced cannot touch it).
	disk *persistence
	// fault is what the open index's persister and merger fail to write (fault.go).
	fault atomic.Pointer[fault]
	// merger merges the open index's segments when it is idle (see mergeWhenIdle).
	merger atomic.Pointer[merger]
	// batches counts the batches applied; mergedAt is one more than the count the merger
	// last found the index idle at and left nothing to merge (0: never). The index is
	// merged while no batch has come since.
	batches  atomic.Uint64
	mergedAt atomic.Uint64
	idlePlan *mergeplan.MergePlanOptions // tests: the idle merge's plan (idleMergePlan)
	// behind says the last batch left more events in the stream: scorch's merger waits
	// (catchup.go); mergeWake wakes it to look again.
	behind   atomic.Bool
	scanning bool // a scan has begun and not ended, as far as the batches applied say (bulk)
	// loaded says a batch was applied in bulk since the merger last found the index idle:
	// the memory of the load is handed back then (mergeWhenIdle).
	loaded atomic.Bool
	// release hands the process's free memory back to the system (tests: counts the
	// calls); nil means debug.FreeOSMemory.
	release   func()
	mergeWake chan struct{}
	held      int // tests: how many segments a catch-up holds unmerged (heldSegments)

	// search is the engine of the searches over the index (searcher).
	search     *search.Engine
	searchOnce sync.Once

	// sums are the checksums of the open index's files (sums.go); sumsWake asks the
	// keeper to add the segments persisted since.
	sums     *sums
	sumsWake chan struct{}
	// repairs lists the damage found in the index's files; broken is set when a search
	// or a batch found them damaged while open (see Damaged), and poisoned when Bleve
	// panicked or faulted then: its locks may be held, so it is dropped, not closed.
	repairs   projection.Repairs
	broken    atomic.Pointer[error]
	poisoned  atomic.Bool
	damageMu  sync.Mutex
	damagedCh chan struct{}
}

// Open opens the index, or creates it. An index that was built with another mapping or in
// another segment format, or whose files are damaged, is deleted and rebuilt from the
// stream: it is derived data. One that cannot be opened for another reason (permissions,
// too many open files) is an error, and kept, for the caller to try again.
func (x *Index) Open() error {
	// Under the lock: a query process opens its index in the background while it already
	// answers (search says the index is opening until this returns).
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return fmt.Errorf("%w: %s", ErrClosed, x.Dir)
	}
	if x.Logger == nil {
		x.Logger = slog.Default()
	}
	x.wakeable()
	x.identity.Store(&[2]string{})
	f := x.watchFaults()
	var idx bleve.Index
	err := x.check()
	if err == nil {
		err = projection.Guard(func() error {
			opened, err := bleve.OpenUsing(x.Dir, x.runtimeConfig())
			if err == nil {
				idx = opened
			}
			return err
		})
	}
	switch {
	case err == nil:
		x.sumsFrom(idx)
		v, gerr := idx.GetInternal(keyMapping)
		format := ownFormat(idx)
		if gerr == nil && string(v) == MappingVersion && format {
			x.idx = idx
			x.watching(idx, f)
			if err := projection.Guard(x.load); err != nil {
				x.idx = nil
				f.close()
				x.drop(idx, err)
				return x.rebuildDamaged(err)
			}
			return nil
		}
		n, _ := idx.DocCount()
		_ = idx.Close()
		f.close()
		switch {
		case gerr == nil && len(v) == 0 && n == 0:
			// Created, then killed before its first batch was persisted: new and empty,
			// not another mapping.
		case !format:
			x.Logger.Info("index written in another segment format; rebuilding it from the stream", "dir", x.Dir, "mapping", string(v))
		default:
			x.Logger.Info("index mapping changed; rebuilding it from the stream", "dir", x.Dir, "was", string(v), "now", MappingVersion)
		}
	case errors.Is(err, bleve.ErrorIndexPathDoesNotExist) || errors.Is(err, bleve.ErrorIndexMetaMissing):
	case errors.Is(err, bolterrors.ErrTimeout):
		f.close()
		return fmt.Errorf("%w: %s", ErrLocked, x.Dir)
	case projection.Environmental(err) && !errors.Is(err, projection.ErrDamaged):
		f.close()
		return fmt.Errorf("opening the index %s: %w", x.Dir, err)
	default:
		f.close()
		if idx != nil {
			x.drop(idx, err)
		}
		if oerr := openable(filepath.Join(x.Dir, "store")); oerr != nil {
			said, _, _ := strings.Cut(err.Error(), "\n")
			return fmt.Errorf("opening the index %s: %w (Bleve: %s)", x.Dir, oerr, said)
		}
		return x.rebuildDamaged(err)
	}
	return x.create(projection.State{})
}

// openable opens every file of the index's store at once, as scorch holds them while it
// loads a snapshot, and returns the first error of the environment (too many open files)
// it meets. Scorch passes over a snapshot it cannot load, whatever the reason, and opens
// the index as if it held nothing; what then looks like damage is damage only if every
// file can be opened.
func openable(store string) error {
	entries, err := os.ReadDir(store)
	if err != nil {
		if projection.Environmental(err) {
			return err
		}
		return nil
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
	}()
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(store, e.Name()))
		if err != nil {
			if projection.Environmental(err) {
				return err
			}
			continue
		}
		files = append(files, f)
	}
	return nil
}

// rebuildDamaged reports an index that cannot be read — damaged, or written in another
// segment format — and starts it anew, to be rebuilt from the stream.
func (x *Index) rebuildDamaged(err error) error {
	x.Logger.Error("index unreadable (damaged, or written in another segment format); deleting it and rebuilding it from the stream", "dir", x.Dir, "err", err)
	x.repairs.Add(projection.Repair{Projection: "index", File: filepath.Base(x.Dir), Problem: err.Error(), Action: "deleted and rebuilt from the stream"})
	return x.create(projection.State{})
}

// check verifies the index's files against their checksums before Bleve reads them
// (sums.go). An index without checksums (written by an older version of this program, or
// the list deleted) has them computed once it is open, as it stands: rebuilding a large
// index for the lack of them would cost minutes.
func (x *Index) check() error {
	x.sums = nil
	s, err := readSums(x.Dir)
	if errors.Is(err, os.ErrNotExist) {
		if _, merr := os.Stat(filepath.Join(x.Dir, "index_meta.json")); merr == nil {
			x.Logger.Info("the index's files have no checksums; recording them", "dir", x.Dir)
		}
		return nil
	}
	if err != nil {
		return err
	}
	x.sums = s
	return s.verify()
}

// sumsFrom starts the list of checksums of the index just opened: the one read, with the
// files of idx it lacks (a segment persisted just before a crash) added.
func (x *Index) sumsFrom(idx bleve.Index) {
	if x.sums == nil {
		x.sums = &sums{dir: x.Dir, files: map[string]fileSum{}}
	}
	if err := x.sums.add(persistedFiles(x.Dir, idx)); err != nil {
		x.Logger.Warn("index: recording its files' checksums", "err", err)
	}
}

// drop lets go of a Bleve index found damaged: closed, unless it panicked or faulted,
// when its locks may be held and a close could wait forever.
func (x *Index) drop(idx bleve.Index, err error) {
	if projection.Faulted(err) {
		return
	}
	_ = idx.Close()
}

func (x *Index) runtimeConfig() map[string]any {
	cfg := map[string]any{
		// A batch returns once it is searchable, before scorch has written it to disk:
		// waiting for every batch's fsync held indexing to ~500 documents/s. It is safe
		// because the checkpoint is in the same batch as its documents, so scorch
		// persists both in one snapshot or neither; a crash loses only whole batches
		// after the persisted checkpoint, which the runner replays. Scorch does not
		// persist on Close, so Close waits for the persister first (see Close).
		"unsafe_batch": true,
		// Another process holding the index makes Open fail, rather than wait forever.
		"bolt_timeout": "500ms",
		// What the persister and the merger fail to write is reported, and they wait
		// before trying again; a panic of either (a damaged segment) marks the index
		// damaged (fault.go).
		"eventCallbackName":      callbackName,
		"asyncErrorCallbackName": callbackName,
		// Merges of as many segments as a catch-up holds back (catchup.go).
		"scorchMergePlanOptions": map[string]any{"SegmentsPerMergeTask": mergePlanOptions.SegmentsPerMergeTask},
	}
	// Segments in guide's own format (package segment): scorch writes new segments and
	// merges in it, and opens an older index's segments with the format they were
	// written in — which MappingVersion's rebuild then replaces.
	maps.Copy(cfg, segment.RuntimeConfig())
	return cfg
}

// watching makes f, watching the index just opened, the one Err reports.
func (x *Index) watching(idx bleve.Index, f *fault) {
	if adv, err := idx.Advanced(); err == nil {
		if s, ok := adv.(*scorch.Scorch); ok {
			f.opened(s)
		}
	}
	if old := x.fault.Swap(f); old != nil && old != f {
		old.close()
	}
}

// ownFormat reports whether every segment of idx is in guide's segment format. Scorch
// opens an index's segments in the format recorded with them — upstream zap's included —
// so an index written before, by a build of another format, opens; it is rebuilt rather
// than kept in a format whose postings lack the impacts searches read.
func ownFormat(idx bleve.Index) bool {
	own := true
	withSnapshot(idx, func(snap *scorch.IndexSnapshot) {
		for _, s := range snap.Segments() {
			own = own && segment.Written(s.Segment())
		}
	})
	return own
}

// create deletes whatever is in Dir and makes an empty index for st.
func (x *Index) create(st projection.State) error {
	if err := os.RemoveAll(x.Dir); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	m, err := newMapping()
	if err != nil {
		return fmt.Errorf("index mapping: %w", err)
	}
	cfg := x.runtimeConfig()
	x.wakeable()
	f := x.watchFaults()
	idx, err := bleve.NewUsing(x.Dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	if err != nil {
		f.close()
		return fmt.Errorf("create index %s: %w", x.Dir, err)
	}
	x.watching(idx, f)
	b := idx.NewBatch()
	b.SetInternal(keyMapping, []byte(MappingVersion))
	b.SetInternal(keyStream, []byte(st.StreamID))
	b.SetInternal(keyProject, []byte(st.Project))
	b.SetInternal(keySeq, seqBytes(0))
	b.SetInternal(keyLengths, lengths{}.encode())
	x.disk = newPersistence(false)
	x.onPersisted(b, 0)
	if err := idx.Batch(b); err != nil {
		_ = idx.Close()
		return fmt.Errorf("create index %s: %w", x.Dir, err)
	}
	x.idx = idx
	x.seq.Store(0)
	x.lengths.Store(&lengths{})
	x.identity.Store(&[2]string{st.StreamID, st.Project})
	x.sums = &sums{dir: x.Dir, files: map[string]fileSum{}}
	if err := x.sums.add(persistedFiles(x.Dir, idx)); err != nil {
		return fmt.Errorf("create index %s: %w", x.Dir, err)
	}
	x.clearBroken()
	x.startMerger(idx)
	return nil
}

func (x *Index) load() error {
	get := func(k []byte) string {
		v, _ := x.idx.GetInternal(k)
		return string(v)
	}
	v, err := x.idx.GetInternal(keySeq)
	if err != nil {
		return fmt.Errorf("index checkpoint: %w", err)
	}
	if len(v) == 8 {
		x.seq.Store(binary.BigEndian.Uint64(v))
	}
	lb, _ := x.idx.GetInternal(keyLengths)
	l := decodeLengths(lb)
	x.lengths.Store(&l)
	x.disk = newPersistence(true)
	x.disk.seq.Store(x.seq.Load())
	x.identity.Store(&[2]string{get(keyStream), get(keyProject)})
	x.startMerger(x.idx)
	return nil
}

// Close persists the batches applied and closes the index. An Open after it fails.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	if x.idx == nil {
		return nil
	}
	x.stopMerger()
	if x.poisoned.Load() {
		x.idx = nil // its locks may be held: dropped, to be rebuilt at the next start
		return nil
	}
	x.flush()
	x.recordSums(x.idx)
	err := x.idx.Close()
	x.idx = nil
	return err
}

// abandon closes the index without waiting for the persister, as a crash would.
func (x *Index) abandon() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return nil
	}
	x.stopMerger()
	err := x.idx.Close()
	x.idx = nil
	return err
}

// Name names the projection in logs and status.
func (x *Index) Name() string { return "index" }

// Checkpoint is the sequence of the last event the index applied.
func (x *Index) Checkpoint() uint64 { return x.seq.Load() }

// Identity returns the stream and project the index was built from.
func (x *Index) Identity() (streamID, project string) {
	if x.broken.Load() != nil {
		return "", "" // to be reset, and rebuilt from the stream
	}
	id := x.identity.Load()
	return id[0], id[1]
}

// Reset deletes the index and starts an empty one for the stream st names. Deleting the
// directory is much faster than deleting every document.
func (x *Index) Reset(st projection.State) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx != nil {
		x.stopMerger()
		// The old index is deleted: nothing of it need reach the disk.
		if !x.poisoned.Load() {
			if err := x.idx.Close(); err != nil {
				x.Logger.Warn("closing the index before a reset", "err", err)
			}
		}
		x.idx = nil
	}
	return x.create(st)
}

// State is how far the index has followed the stream. Pending and AppliedAt are the
// runner's telemetry (projection.Runner.Lag): Index.State leaves them for its reader.
type State struct {
	AppliedSeq uint64 `json:"applied_seq"`
	Pending    uint64 `json:"pending"`
	Documents  uint64 `json:"documents"`
	Mapping    string `json:"mapping"`
	// Segments is how many segments the index is in: many after a first index or a
	// burst of edits, one per tier once it has been idle a few seconds (see merge.go).
	Segments int `json:"segments"`
	// Merged says the index has been idle long enough to merge and has done so: it will
	// not merge again until it changes. Segments is then what searches will read.
	Merged    bool       `json:"merged"`
	AppliedAt *time.Time `json:"applied_at,omitempty"`
}

// State reports the checkpoint, the mapping and the number of documents.
func (x *Index) State() State {
	st := State{AppliedSeq: x.seq.Load(), Mapping: MappingVersion}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.idx != nil {
		st.Documents, _ = x.idx.DocCount()
		st.Segments = segments(x.idx)
		st.Merged = x.mergedAt.Load() == x.batches.Load()+1
	}
	return st
}
