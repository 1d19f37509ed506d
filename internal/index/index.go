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
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
)

// MappingVersion changes whenever the mapping, an analyzer or the derivation of a field
// changes. An index of another version is deleted and rebuilt from the stream rather than
// searched with terms it was not built with.
const MappingVersion = "index/8"

// Internal keys, written in the same batch as the documents they describe.
var (
	keySeq     = []byte("guide.seq")
	keyStream  = []byte("guide.stream")
	keyProject = []byte("guide.project")
	keyMapping = []byte("guide.mapping")
)

// ErrLocked is returned when another process has the index open.
var ErrLocked = errors.New("index is in use by another process")

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

	// mu guards the Bleve handle against Reset and Close while searches use it.
	mu  sync.RWMutex
	idx bleve.Index

	// Written by the applying goroutine; read by anyone.
	seq      atomic.Uint64
	identity atomic.Pointer[[2]string]
	lengths  atomic.Pointer[lengths] // of the documents applied, for BM25
	// disk is what scorch has persisted of the open Bleve index (one per open/create,
	// so that a callback of an index already replaced cannot touch it).
	disk *persistence
	// merger merges the open index's segments when it is idle (see mergeWhenIdle).
	merger atomic.Pointer[merger]
	// batches counts the batches applied; mergedAt is one more than the count the merger
	// last found the index idle at and left nothing to merge (0: never). The index is
	// merged while no batch has come since.
	batches  atomic.Uint64
	mergedAt atomic.Uint64
	idlePlan *mergeplan.MergePlanOptions // tests: the idle merge's plan (idleMergePlan)

	// search is the engine of the searches over the index (searcher).
	search     *search.Engine
	searchOnce sync.Once
}

// Open opens the index, or creates it. An index that cannot be opened, or was built with
// another mapping, is deleted and rebuilt from the stream: it is derived data.
func (x *Index) Open() error {
	// Under the lock: a query process opens its index in the background while it already
	// answers (search says the index is opening until this returns).
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.Logger == nil {
		x.Logger = slog.Default()
	}
	x.identity.Store(&[2]string{})
	idx, err := bleve.OpenUsing(x.Dir, x.runtimeConfig())
	switch {
	case err == nil:
		v, gerr := idx.GetInternal(keyMapping)
		if gerr == nil && string(v) == MappingVersion {
			x.idx = idx
			return x.load()
		}
		n, _ := idx.DocCount()
		_ = idx.Close()
		if gerr == nil && len(v) == 0 && n == 0 {
			// Created, then killed before its first batch was persisted: new and empty,
			// not another mapping.
			break
		}
		x.Logger.Info("index mapping changed; rebuilding it from the stream", "dir", x.Dir, "was", string(v), "now", MappingVersion)
	case errors.Is(err, bleve.ErrorIndexPathDoesNotExist) || errors.Is(err, bleve.ErrorIndexMetaMissing):
	case errors.Is(err, bolterrors.ErrTimeout):
		return fmt.Errorf("%w: %s", ErrLocked, x.Dir)
	default:
		x.Logger.Warn("index unreadable (written in another segment format, or damaged); rebuilding it from the stream", "dir", x.Dir, "err", err)
	}
	return x.create(projection.State{})
}

func (x *Index) runtimeConfig() map[string]any {
	return map[string]any{
		// A batch returns once it is searchable, before scorch has written it to disk:
		// waiting for every batch's fsync held indexing to ~500 documents/s. It is safe
		// because the checkpoint is in the same batch as its documents, so scorch
		// persists both in one snapshot or neither; a crash loses only whole batches
		// after the persisted checkpoint, which the runner replays. Scorch does not
		// persist on Close, so Close waits for the persister first (see Close).
		"unsafe_batch": true,
		// Another process holding the index makes Open fail, rather than wait forever.
		"bolt_timeout": "500ms",
	}
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
	idx, err := bleve.NewUsing(x.Dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	if err != nil {
		return fmt.Errorf("create index %s: %w", x.Dir, err)
	}
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

// Close persists the batches applied and closes the index.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return nil
	}
	x.stopMerger()
	x.flush()
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
		if err := x.idx.Close(); err != nil {
			x.Logger.Warn("closing the index before a reset", "err", err)
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
