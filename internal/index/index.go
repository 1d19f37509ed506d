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
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index/schema"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/text"
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

func seqBytes(seq uint64) []byte {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], seq)
	return v[:]
}

// closeWait bounds how long Close waits for scorch to persist the last batches; what it
// does not persist is replayed from the stream on the next start.
const closeWait = 30 * time.Second

// persistence follows scorch's persister: Close waits for it to reach the checkpoint,
// so that a clean restart replays nothing.
type persistence struct {
	seq   atomic.Uint64 // checkpoint of the last batch written to disk
	begun atomic.Bool   // the first batch (the mapping version and identity) is on disk
	ch    chan struct{} // receives, without blocking, after every persisted batch
}

func newPersistence(begun bool) *persistence {
	p := &persistence{ch: make(chan struct{}, 1)}
	p.begun.Store(begun)
	return p
}

// onPersisted makes batch b record seq as persisted once scorch has written it.
func (x *Index) onPersisted(b *bleve.Batch, seq uint64) {
	p := x.disk
	b.SetPersistedCallback(func(err error) {
		if err != nil {
			return
		}
		p.begun.Store(true)
		for s := p.seq.Load(); s < seq && !p.seq.CompareAndSwap(s, seq); s = p.seq.Load() {
		}
		select {
		case p.ch <- struct{}{}:
		default:
		}
	})
}

// Flush waits until scorch has written every batch applied to disk, or closeWait passes,
// holding off Close and Reset meanwhile.
func (x *Index) Flush() {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.idx != nil {
		x.flush()
	}
}

// flush waits until scorch has persisted every batch applied, or closeWait passes.
func (x *Index) flush() {
	p := x.disk
	deadline := time.After(closeWait)
	for p.seq.Load() < x.seq.Load() || !p.begun.Load() {
		select {
		case <-p.ch:
		case <-deadline:
			x.Logger.Warn("closing the index before its last batches were persisted; they will be replayed",
				"persisted", p.seq.Load(), "applied", x.seq.Load())
			return
		}
	}
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

// document is what the mapping indexes for one file.
// Stemmed forms are not indexed: a search expands a word to the indexed words of the
// same stem (see wordQuery), which costs a dictionary look-up per search instead of a
// second analysis and a second set of postings of every text.
type document struct {
	Name       string   `json:"name"`
	Path       string   `json:"path,omitempty"`
	Title      string   `json:"title,omitempty"`
	Headings   string   `json:"headings,omitempty"`
	Meta       string   `json:"meta,omitempty"`
	Lead       string   `json:"lead,omitempty"`
	Content    string   `json:"content,omitempty"`
	ContentCJK string   `json:"content_cjk,omitempty"`
	Folders    []string `json:"folders,omitempty"`
	Dir        string   `json:"dir,omitempty"`
	Session    string   `json:"session"`
	Ext        string   `json:"ext,omitempty"`
}

// field returns the text of one of the ranked fields.
func (d *document) field(name string) string {
	switch name {
	case schema.Name:
		return d.Name
	case schema.Path:
		return d.Path
	case schema.Title:
		return d.Title
	case schema.Headings:
		return d.Headings
	case schema.Meta:
		return d.Meta
	case schema.Lead:
		return d.Lead
	case schema.Content:
		return d.Content
	}
	return ""
}

// newDocument derives the indexed fields of an upserted file. A file without readable
// content is still indexed by its name, so that it can be found.
func newDocument(e *events.Event) *document {
	name := path.Base(e.Path)
	name = strings.TrimSuffix(name, projection.TemplateExt)
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if stem == "" { // ".env": the name is the extension
		stem = name
	}
	d := &document{Ext: strings.ToLower(strings.TrimPrefix(ext, ".")), Session: schema.TreeSession}
	if e.Session != "" {
		d.Session = e.Session // a session document belongs to no folder of the tree
	} else {
		d.Folders, d.Dir = documentFolders(e.Path), schema.DirKey(path.Dir(e.Path))
		if dir := path.Dir(e.Path); dir != "." {
			d.Path = dir
		}
	}
	if e.Status == events.StatusOK && events.HashContent(e.Content) == e.Hash {
		d.Content = string(e.Content)
		if text.HasCJK(d.Content) {
			d.ContentCJK = d.Content
		}
		md := text.ParseMarkdown(e.Content)
		d.Title, d.Headings, d.Meta, d.Lead = text.PlainText(md.Title), headingsField(md.Headings), md.Meta, md.Lead
	}
	d.Name = stem
	return d
}

// maxHeadingsBytes bounds the headings field: a field is ranked on a few words, whatever
// the document.
const maxHeadingsBytes = 8000

// headingsField is the headings field of a document with headings hs: the plain text of
// each (text.PlainText), one a line, as many as fit in maxHeadingsBytes.
func headingsField(hs []text.Heading) string {
	var b strings.Builder
	for _, h := range hs {
		if t := text.PlainText(h.Text); b.Len()+len(t) < maxHeadingsBytes {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// documentFolders returns every folder above a document's path, outermost first, the root
// left out: "a/b/c.md" → ["a", "a/b"].
func documentFolders(p string) []string {
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// Apply folds a batch of events into the index, with the batch's last sequence as the new
// checkpoint in the same Bleve batch. Events at or below the checkpoint are skipped.
func (x *Index) Apply(b events.Batch) error { return x.Prepare(b)() }

// prepared is an upsert's document, mapped and analyzed ahead of its batch.
type prepared struct {
	d   *document
	doc *bdoc.Document
	err error
}

// Prepare maps every upsert of b to its Bleve document and analyzes its text fields
// (projection.Preparer): the part of Apply that needs nothing but the events, done while
// the batch before is built into its segment. The rest of Apply — the checkpoint, the
// lengths, the segment — is what it returns.
func (x *Index) Prepare(b events.Batch) func() error {
	docs := make([]prepared, len(b.Events))
	// The checkpoint only grows: an event at or below it now is skipped by apply too.
	seq := x.seq.Load()
	for i := range b.Events {
		e := &b.Events[i]
		if e.Op != events.OpUpsert || e.Seq <= seq {
			continue
		}
		p := &docs[i]
		p.d = newDocument(e)
		p.doc, p.err = x.mapDocument(events.DocKey{Session: e.Session, Path: e.Path}.ID(), p.d)
	}
	return func() error { return x.apply(b, docs) }
}

// apply is the rest of Apply once b's documents are prepared.
func (x *Index) apply(b events.Batch, docs []prepared) error {
	seq := x.seq.Load()
	batch := x.idx.NewBatch()
	applied := seq
	lens := x.lengths.Load().clone()
	for i := range b.Events {
		e := &b.Events[i]
		if e.Seq <= seq {
			continue
		}
		applied = e.Seq
		switch e.Op {
		case events.OpUpsert:
			p := docs[i]
			lens.add(p.d)
			err := p.err
			if err == nil {
				err = batch.IndexAdvanced(p.doc)
			}
			if err != nil {
				return fmt.Errorf("index %q: %w", e.Path, err)
			}
		case events.OpDelete:
			batch.Delete(events.DocKey{Session: e.Session, Path: e.Path}.ID())
		}
	}
	if applied == seq {
		return nil
	}
	batch.SetInternal(keySeq, seqBytes(applied))
	batch.SetInternal(keyLengths, lens.encode())
	x.onPersisted(batch, applied)
	if err := x.idx.Batch(batch); err != nil {
		return fmt.Errorf("index batch up to %d: %w", applied, err)
	}
	x.lengths.Store(&lens)
	x.seq.Store(applied)
	x.batchApplied()
	return nil
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

// mapDocument makes the Bleve document of d as the mapping does, with the fields of the
// word and parts analyzers analyzed by wordField, here rather than when scorch builds the
// batch (see Prepare).
func (x *Index) mapDocument(id string, d *document) (*bdoc.Document, error) {
	doc := bdoc.NewDocument(id)
	if err := x.idx.Mapping().MapDocument(doc, d); err != nil {
		return nil, err
	}
	for i, f := range doc.Fields {
		f = asWordField(f)
		if w, ok := f.(*wordField); ok {
			w.Analyze()
		}
		doc.Fields[i] = f
	}
	return doc, nil
}

func newMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := addAnalyzers(m); err != nil {
		return nil, err
	}
	// BM25 saturates repeated terms and normalises by length, so that one passing
	// mention in a long body weighs little against a name.
	m.ScoringModel = "bm25"
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	m.DefaultAnalyzer = schema.AnalyzerWord

	text := func(analyzer string, positions bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store = false
		f.IncludeInAll = false
		f.DocValues = false
		f.IncludeTermVectors = positions
		return f
	}
	doc := bleve.NewDocumentStaticMapping()
	for _, f := range schema.Ranked {
		a := schema.AnalyzerWord
		if f.Stemmed {
			a = schema.AnalyzerParts
		}
		doc.AddFieldMappingsAt(f.Name, text(a, f.Positions))
	}
	doc.AddFieldMappingsAt(schema.ContentCJK, text(schema.AnalyzerCJK, true))
	doc.AddFieldMappingsAt(schema.Folders, text(keyword.Name, false))
	doc.AddFieldMappingsAt(schema.Dir, text(keyword.Name, false))
	doc.AddFieldMappingsAt(schema.Session, text(keyword.Name, false))
	doc.AddFieldMappingsAt(schema.Ext, text(keyword.Name, false))
	m.DefaultMapping = doc
	return m, nil
}
