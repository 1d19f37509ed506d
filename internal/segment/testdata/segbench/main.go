// Command segbench measures building and merging segments of a tree of Markdown files
// (tools/cmd/corpus makes one) in guide's segment format and upstream's zap v16 and
// v17: time, allocations, peak memory (VmHWM) and bytes on disk. Each run measures one format, in a process of its
// own, so that its peak is its own:
//
//	go run ./internal/segment/testdata/segbench -corpus /tmp/corpus10k -format guide
//
// Documents are mapped and analyzed much as guide's index does (its fields, a word
// tokenizer giving positions and no offsets, folded, stemmed for the short fields), in
// batches, each built into a segment and written to a file; the segments are then merged
// ten at a time, as scorch's tiers merge them, until one is left. With -scorch the same
// batches go through a Bleve index instead (scorch's own persisting and merging), which
// is then merged into one segment.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
	index "github.com/blevesearch/bleve_index_api"
	api "github.com/blevesearch/scorch_segment_api/v2"
	zapv16 "github.com/blevesearch/zapx/v16"
	zapv17 "github.com/blevesearch/zapx/v17"

	"github.com/guide/guide/internal/segment"
)

func main() {
	corpus := flag.String("corpus", "", "tree of documents")
	format := flag.String("format", "guide", "guide, zap16 or zap17 (none: analyze alone)")
	batch := flag.Int("batch", 1000, "documents per segment")
	out := flag.String("out", "", "directory for the segments (default: a temporary one, removed)")
	viaScorch := flag.Bool("scorch", false, "index through a Bleve index rather than the plugin alone")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile")
	memProfile := flag.String("memprofile", "", "write an allocation profile")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			f, err := os.Create(*memProfile)
			if err != nil {
				log.Fatal(err)
			}
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}()
	}
	if *corpus == "" {
		log.Fatal("-corpus is required")
	}
	plugins := map[string]scorch.SegmentPlugin{"guide": &segment.Plugin{}, "zap16": &zapv16.ZapPlugin{}, "zap17": &zapv17.ZapPlugin{}}
	plugin, ok := plugins[*format]
	if !ok && *format != "none" {
		log.Fatalf("unknown format %q", *format)
	}
	dir := *out
	if dir == "" {
		d, err := os.MkdirTemp("", "segbench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	files, err := list(*corpus)
	if err != nil {
		log.Fatal(err)
	}
	m, err := newMapping()
	if err != nil {
		log.Fatal(err)
	}
	var r report
	r.Format, r.Docs, r.Batch = *format, len(files), *batch
	if *viaScorch {
		err = r.throughScorch(m, plugin, files, *corpus, dir, *batch)
	} else {
		err = r.plugin(m, plugin, files, *corpus, dir, *batch)
	}
	if err != nil {
		log.Fatal(err)
	}
	r.PeakRSS = peakRSS()
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

type report struct {
	Format        string  `json:"format"`
	Docs          int     `json:"docs"`
	Batch         int     `json:"batch"`
	TextBytes     int64   `json:"text_bytes"`
	AnalyzeSec    float64 `json:"analyze_s"`
	BuildSec      float64 `json:"build_s"` // New and Persist, or scorch's batches
	BuildAllocs   uint64  `json:"build_allocs"`
	BuildAllocMB  float64 `json:"build_alloc_mb"`
	Segments      int     `json:"segments"`
	SegmentsBytes int64   `json:"segments_bytes"`
	MergeSec      float64 `json:"merge_s"`
	MergeAllocs   uint64  `json:"merge_allocs"`
	MergeAllocMB  float64 `json:"merge_alloc_mb"`
	MergedBytes   int64   `json:"merged_bytes"`
	PeakRSS       int64   `json:"peak_rss_mb"`
}

// meter measures the time and allocations of what it is around.
type meter struct {
	start time.Time
	ms    runtime.MemStats
}

func begin() *meter {
	m := &meter{}
	runtime.ReadMemStats(&m.ms)
	m.start = time.Now()
	return m
}

func (m *meter) add(sec *float64, allocs *uint64, mb *float64) {
	d := time.Since(m.start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	*sec += d.Seconds()
	*allocs += ms.Mallocs - m.ms.Mallocs
	*mb += float64(ms.TotalAlloc-m.ms.TotalAlloc) / (1 << 20)
}

func (r *report) plugin(m mapping.IndexMapping, p scorch.SegmentPlugin, files []string, root, dir string, batch int) error {
	var paths []string
	for start := 0; start < len(files); start += batch {
		t := time.Now()
		docs, n, err := analyzed(m, root, files[start:min(start+batch, len(files))])
		if err != nil {
			return err
		}
		r.TextBytes += n
		r.AnalyzeSec += time.Since(t).Seconds()
		if p == nil {
			continue // the analysis alone
		}
		mt := begin()
		s, _, err := p.New(docs)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, fmt.Sprintf("b%06d", start))
		if err := s.(api.UnpersistedSegment).Persist(path); err != nil {
			return err
		}
		_ = s.Close()
		mt.add(&r.BuildSec, &r.BuildAllocs, &r.BuildAllocMB)
		paths = append(paths, path)
		r.SegmentsBytes += size(path)
	}
	r.Segments = len(paths)
	// Merged ten at a time, tier by tier, a tenth of each segment's documents dropped
	// (as replaced or deleted ones are).
	for tier := 0; len(paths) > 1; tier++ {
		var next []string
		for i := 0; i < len(paths); i += 10 {
			group := paths[i:min(i+10, len(paths))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			var segs []api.Segment
			var drops []*roaring.Bitmap
			for _, g := range group {
				s, err := p.Open(g)
				if err != nil {
					return err
				}
				segs = append(segs, s)
				d := roaring.New()
				if tier == 0 {
					for j := uint64(0); j < s.Count(); j += 10 {
						d.Add(uint32(j))
					}
				}
				drops = append(drops, d)
			}
			path := filepath.Join(dir, fmt.Sprintf("m%d-%06d", tier, i))
			mt := begin()
			if _, _, err := p.Merge(segs, drops, path, nil, nil); err != nil {
				return err
			}
			mt.add(&r.MergeSec, &r.MergeAllocs, &r.MergeAllocMB)
			for j, s := range segs {
				_ = s.Close()
				_ = os.Remove(group[j])
			}
			next = append(next, path)
		}
		paths = next
	}
	if len(paths) == 1 {
		r.MergedBytes = size(paths[0])
	}
	return nil
}

func (r *report) throughScorch(m *mapping.IndexMappingImpl, p scorch.SegmentPlugin, files []string, root, dir string, batch int) error {
	segment.Register()
	idx, err := bleve.NewUsing(filepath.Join(dir, "index"), m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, map[string]any{
		"forceSegmentType": p.Type(), "forceSegmentVersion": int(p.Version()), "unsafe_batch": true,
	})
	if err != nil {
		return err
	}
	mt := begin()
	for start := 0; start < len(files); start += batch {
		b := idx.NewBatch()
		for _, f := range files[start:min(start+batch, len(files))] {
			id, d, n, err := readDoc(root, f)
			if err != nil {
				return err
			}
			r.TextBytes += n
			if err := b.Index(id, d); err != nil {
				return err
			}
		}
		if err := idx.Batch(b); err != nil {
			return err
		}
	}
	// Persisted: every segment on disk.
	adv, _ := idx.Advanced()
	s := adv.(*scorch.Scorch)
	for {
		st := s.StatsMap()
		if v, ok := st["TotItemsToPersist"].(uint64); ok && v == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mt.add(&r.BuildSec, &r.BuildAllocs, &r.BuildAllocMB)
	r.Segments = segments(idx)
	r.SegmentsBytes = treeSize(filepath.Join(dir, "index"))
	mt = begin()
	if err := s.ForceMerge(context.Background(), nil); err != nil {
		return err
	}
	mt.add(&r.MergeSec, &r.MergeAllocs, &r.MergeAllocMB)
	if err := idx.Close(); err != nil {
		return err
	}
	// Closed, the index has removed the files of the segments merged.
	r.MergedBytes = treeSize(filepath.Join(dir, "index"))
	return nil
}

func segments(idx bleve.Index) int {
	adv, _ := idx.Advanced()
	rd, _ := adv.Reader()
	defer rd.Close()
	return len(rd.(*scorch.IndexSnapshot).Segments())
}

func size(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n += size(p)
		}
		return nil
	})
	return n
}

func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb >> 10
		}
	}
	return 0
}

func list(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// document is what guide's mapping indexes of a file.
type document struct {
	Name       string   `json:"name"`
	Path       string   `json:"path,omitempty"`
	Title      string   `json:"title,omitempty"`
	Headings   string   `json:"headings,omitempty"`
	Lead       string   `json:"lead,omitempty"`
	Content    string   `json:"content,omitempty"`
	ContentCJK string   `json:"content_cjk,omitempty"`
	Folders    []string `json:"folders,omitempty"`
	Dir        string   `json:"dir,omitempty"`
	Session    string   `json:"session"`
	Ext        string   `json:"ext,omitempty"`
}

func readDoc(root, rel string) (string, *document, int64, error) {
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return "", nil, 0, err
	}
	text := string(b)
	name := path.Base(rel)
	ext := path.Ext(name)
	d := &document{Name: strings.TrimSuffix(name, ext), Ext: strings.TrimPrefix(ext, "."), Session: "-", Content: text, Dir: path.Dir(rel)}
	if d.Dir != "." {
		d.Path = d.Dir
		for i := range len(rel) {
			if rel[i] == '/' {
				d.Folders = append(d.Folders, rel[:i])
			}
		}
	}
	var heads []string
	lead := ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
			h := strings.TrimSpace(strings.TrimLeft(l, "#"))
			if d.Title == "" {
				d.Title = h
			} else {
				heads = append(heads, h)
			}
		case lead == "" && len(l) > 40:
			lead = l
		}
	}
	d.Headings, d.Lead = strings.Join(heads, " "), lead
	if strings.ContainsFunc(text, func(r rune) bool {
		return unicode.In(r, unicode.Han, unicode.Hangul, unicode.Hiragana, unicode.Katakana)
	}) {
		d.ContentCJK = text
	}
	return rel, d, int64(len(b)), nil
}

// analyzed maps and analyzes the files as scorch does before it builds a segment.
func analyzed(m mapping.IndexMapping, root string, files []string) ([]index.Document, int64, error) {
	var n int64
	out := make([]index.Document, 0, len(files))
	for _, f := range files {
		id, d, size, err := readDoc(root, f)
		if err != nil {
			return nil, 0, err
		}
		n += size
		doc := bdoc.NewDocument(id)
		if err := m.MapDocument(doc, d); err != nil {
			return nil, 0, err
		}
		doc.AddIDField()
		doc.VisitFields(func(f index.Field) {
			if f.Options().IsIndexed() {
				f.Analyze()
			}
		})
		out = append(out, doc)
	}
	return out, n, nil
}

const (
	wordTokenizerName = "segbench_word"
	analyzerWord      = "segbench_word"
	analyzerParts     = "segbench_parts"
)

func init() {
	registry.RegisterTokenizer(wordTokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return wordTokenizer{}, nil
	})
}

// wordTokenizer splits at every character that is not a letter, a digit or an
// underscore, giving positions and no offsets, as guide's does.
type wordTokenizer struct{}

func (wordTokenizer) Tokenize(b []byte) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, len(b)/6+1)
	start := -1
	for i, r := range string(b) {
		word := r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') ||
			r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
		if word && start < 0 {
			start = i
		} else if !word && start >= 0 {
			out = append(out, &analysis.Token{Term: b[start:i], Position: len(out) + 1, Type: analysis.AlphaNumeric})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, &analysis.Token{Term: b[start:], Position: len(out) + 1, Type: analysis.AlphaNumeric})
	}
	return out
}

func newMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := m.AddCustomAnalyzer(analyzerWord, map[string]any{
		"type": custom.Name, "tokenizer": wordTokenizerName, "token_filters": []any{lowercase.Name},
	}); err != nil {
		return nil, err
	}
	if err := m.AddCustomAnalyzer(analyzerParts, map[string]any{
		"type": custom.Name, "tokenizer": wordTokenizerName, "token_filters": []any{lowercase.Name, porter.Name},
	}); err != nil {
		return nil, err
	}
	m.ScoringModel = "bm25"
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	m.DefaultAnalyzer = analyzerWord
	doc := bleve.NewDocumentStaticMapping()
	for _, f := range []struct {
		name, analyzer string
		positions      bool
	}{
		{"name", analyzerWord, true}, {"path", analyzerParts, false}, {"title", analyzerParts, true},
		{"headings", analyzerParts, false}, {"lead", analyzerParts, false}, {"content", analyzerWord, true},
		{"content_cjk", "cjk", true}, {"folders", keyword.Name, false}, {"dir", keyword.Name, false},
		{"session", keyword.Name, false}, {"ext", keyword.Name, false},
	} {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer, fm.Store, fm.IncludeInAll, fm.DocValues, fm.IncludeTermVectors = f.analyzer, false, false, false, f.positions
		doc.AddFieldMappingsAt(f.name, fm)
	}
	m.DefaultMapping = doc
	return m, nil
}
