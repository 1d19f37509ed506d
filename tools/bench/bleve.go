package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"

	"github.com/guide/guide/tools/report"
)

// bleveBatch is the documents of one batch of the Bleve baseline, as guide's own batches.
const bleveBatch = 1000

// bleveBaseline times Bleve alone — the engine guide's search index is built on — indexing
// the corpus in this process, in its cheapest form: one text field of the standard
// analyzer with no positions (FTS5 keeps them; guide's index keeps them and more fields),
// nothing stored, batches that return before they are written (as guide's), and the time
// taken until the last document is on disk. Nothing of guide runs: it is the floor of any
// index built with Bleve on this machine, beside FTS5 in the same run.
func bleveBaseline(ctx context.Context, c *report.Corpus, dir string) report.IndexRun {
	r := report.IndexRun{Kind: report.RunBleve, What: "baseline: Bleve v2 alone (one text field, standard analyzer, no positions, this process), start to persisted", Bytes: c.Bytes}
	if err := os.RemoveAll(dir); err != nil {
		r.Err = err.Error()
		return r
	}
	defer func() {
		_ = os.RemoveAll(dir)
		debug.FreeOSMemory() // what the baseline held is not counted against what follows
	}()
	m := bleve.NewIndexMapping()
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	text := bleve.NewTextFieldMapping()
	text.Analyzer = standard.Name
	text.Store, text.IncludeInAll, text.DocValues, text.IncludeTermVectors = false, false, false, false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("content", text)
	m.DefaultMapping = doc

	start := time.Now()
	idx, err := bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore,
		map[string]any{"unsafe_batch": true})
	if err != nil {
		r.Err = err.Error()
		return r
	}
	fail := func(err error) report.IndexRun {
		r.Err = err.Error()
		_ = idx.Close()
		return r
	}
	b := idx.NewBatch()
	flush := func() error {
		if b.Size() == 0 {
			return nil
		}
		err := idx.Batch(b)
		b.Reset()
		return err
	}
	for _, rel := range c.Files {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		data, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(rel)))
		if err != nil {
			continue
		}
		body := ""
		if utf8.Valid(data) {
			body = string(data)
		}
		if err := b.Index(rel, map[string]any{"content": body}); err != nil {
			return fail(err)
		}
		r.Docs++
		if b.Size() >= bleveBatch {
			if err := flush(); err != nil {
				return fail(err)
			}
		}
	}
	if err := flush(); err != nil {
		return fail(err)
	}
	// Scorch's Close does not write what is still in memory: wait until its persister has
	// written a snapshot at least as new as the one the last batch made.
	last := epoch(idx, "CurRootEpoch")
	deadline := time.Now().Add(10 * time.Minute)
	for epoch(idx, "LastPersistedEpoch") < last {
		if time.Now().After(deadline) {
			return fail(errors.New("the index was not persisted within 10 minutes"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.Duration = time.Since(start)
	if err := idx.Close(); err != nil {
		r.Err = err.Error()
		return r
	}
	size := dirSize(dir)
	r.Disk = size
	r.Note = fmt.Sprintf("index %.0f MB on disk (%.2f× the text)", float64(size)/1e6, float64(size)/float64(max(c.Bytes, 1)))
	return r
}

// epoch reads one of scorch's snapshot epochs from the index's statistics.
func epoch(idx bleve.Index, name string) uint64 {
	s, _ := idx.StatsMap()["index"].(map[string]any)
	n, _ := s[name].(uint64)
	return n
}
