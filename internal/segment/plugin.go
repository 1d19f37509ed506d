// Package segment is guide's segment format: the files a scorch index keeps its
// documents in, written for what guide's mapping and searches use — text fields with
// term frequencies and lengths, positions where the mapping asks for them, the impacts
// of each chunk of postings (for block-max), and each document's identifier — and
// nothing else. It plugs into Bleve's scorch as a segment plugin (Register), chosen by
// an index's runtime configuration (RuntimeConfig). toc.go lists a file's sections.
//
// What it leaves out, for guide does not use it: a field stored other than _id (building
// such a segment is an error); doc values (scorch reads a field's terms from its postings
// when a search sorts or facets by it); a token's byte offsets and array positions (its
// position alone is kept: Location.Start and End are 0); the field a location of a
// composite field came from (the composite's name is given); vectors and synonyms.
//
// A postings iterator reads the impacts of its chunks (PostingsIterator.Impacts) for
// searches that pass over whole chunks of postings (block-max), and a posting gives the
// field's length in its document as NormUint64.
package segment

import (
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	api "github.com/blevesearch/scorch_segment_api/v2"
)

// Type and Version name the format to scorch, which records them in an index and opens
// the index's segments with the plugin of the same name and version.
const (
	Type           = "guide"
	Version uint32 = 2
)

// Plugin is the format as a scorch segment plugin.
type Plugin struct{}

var register sync.Once

// Register makes the format one scorch can write and read. An index uses it when its
// runtime configuration says so (RuntimeConfig); scorch's default stays as it is.
func Register() {
	register.Do(func() { scorch.RegisterSegmentPlugin(&Plugin{}, false) })
}

// RuntimeConfig is what an index's runtime configuration sets for scorch to build its
// segments in this format; it registers the format first.
func RuntimeConfig() map[string]any {
	Register()
	return map[string]any{"forceSegmentType": Type, "forceSegmentVersion": int(Version)}
}

// Type is the format's name.
func (*Plugin) Type() string { return Type }

// Version is the format's version, as scorch records it.
func (*Plugin) Version() uint32 { return Version }

// New builds an in-memory segment of the analyzed documents, numbered in their order, and
// returns it and its size in bytes.
func (*Plugin) New(results []index.Document) (api.Segment, uint64, error) {
	s, err := build(results)
	if err != nil {
		return nil, 0, err
	}
	return inMemory{s}, uint64(len(s.data)), nil
}

// NewUsing is New; the format has no settings.
func (p *Plugin) NewUsing(results []index.Document, _ map[string]any) (api.Segment, uint64, error) {
	return p.New(results)
}

// Open opens a segment file (segment.Open).
func (*Plugin) Open(path string) (api.Segment, error) {
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	return inFile{s}, nil
}

// OpenUsing is Open; the format has no settings.
func (p *Plugin) OpenUsing(path string, _ map[string]any) (api.Segment, error) {
	return p.Open(path)
}

// Merge writes the documents of segments, less those of drops, to a new segment file at
// path, in the order of the segments; it returns each old document's new number
// (dropped: math.MaxUint64) and the file's size. It stops with api.ErrClosed when
// closeCh is closed.
func (*Plugin) Merge(segments []api.Segment, drops []*roaring.Bitmap, path string, closeCh chan struct{}, s api.StatsReporter) ([][]uint64, uint64, error) {
	return merge(segments, drops, path, closeCh, s)
}

// MergeUsing is Merge; the format has no settings.
func (p *Plugin) MergeUsing(segments []api.Segment, drops []*roaring.Bitmap, path string, closeCh chan struct{}, s api.StatsReporter, _ map[string]any) ([][]uint64, uint64, error) {
	return p.Merge(segments, drops, path, closeCh, s)
}

// Written reports whether s is a segment of this format (as scorch holds it): an index
// whose segments are not was written in another format.
func Written(s api.Segment) bool {
	switch s.(type) {
	case inMemory, inFile, *Segment:
		return true
	}
	return false
}
