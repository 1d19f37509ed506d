package query

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/index/querylang"
	"github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/text"
)

// SearchHit is one document found: metadata and a snippet, never the whole content.
type SearchHit struct {
	Path string `json:"path"`
	*Origin
	Name  string  `json:"name"`
	Title string  `json:"title,omitempty"`
	Words int     `json:"words"`
	Score float64 `json:"score"`
	// Section is the part of the document that matches best, for view(path, offset).
	Section *HitSection `json:"section,omitempty"`
	Snippet string      `json:"snippet,omitempty"`
}

// SearchResult is what search returns: a page of hits, best first.
type SearchResult struct {
	Query  string      `json:"query"`
	Folder string      `json:"folder"`
	Total  uint64      `json:"total"` // matching documents, on every page
	Hits   []SearchHit `json:"hits"`
	// NextCursor, when set, fetches the next page: pass it as cursor with the same query
	// and folder.
	NextCursor string `json:"next_cursor,omitempty"`
	// Truncated is set when the response size bound cut the page short.
	Truncated bool `json:"truncated,omitempty"`
	// Relaxed is set when no document held every word, and the hits hold some of them.
	Relaxed bool `json:"relaxed,omitempty"`
	// DidYouMean, when set, is the query searched instead: words no document holds
	// replaced by the nearest words that some do (Corrections lists them).
	DidYouMean  string              `json:"did_you_mean,omitempty"`
	Corrections []search.Correction `json:"corrections,omitempty"`
	Message     string              `json:"message,omitempty"`
	// Partial, when set, says the search index had not applied everything the catalog
	// holds (it catches up a moment after view and tree): some documents may be missing.
	Partial *SearchPartial `json:"partial,omitempty"`
	// WriteError, when set, says the process cannot write now (Status.WriteError, a full
	// disk): changes made since may be missing from the hits until it can again.
	WriteError string `json:"write_error,omitempty"`
}

// SearchPartial says how much of the project a search behind the catalog covered.
type SearchPartial struct {
	Searchable uint64 `json:"searchable"` // documents in the search index
	Documents  int    `json:"documents"`  // documents view and tree show
	Note       string `json:"note"`
	// MissingPartitions are the partitions of a partitioned project that no replica
	// answered for, and MissingDocuments the documents of the folder they hold.
	MissingPartitions []int `json:"missing_partitions,omitempty"`
	MissingDocuments  int   `json:"missing_documents,omitempty"`
}

// Catalog gives consistent snapshots of the catalog (projection.Catalog).
type Catalog interface {
	Read(func(*projection.Snapshot) error) error
}

// Searcher ranks documents by their words (index.Index).
type Searcher interface {
	Search(context.Context, search.Request) (search.Result, error)
	Stem(string) string
	Checkpoint() uint64
	State() index.State
}

// SearchArgs are the arguments of search.
type SearchArgs struct {
	Query  string
	Folder string
	Limit  int // 0: search.DefaultLimit
	Cursor string
	// Scope, when set, is the session's view: by default its focus set and its attached
	// documents, each hit marked with the context it came from. Without it (no sessions),
	// the search covers Folder.
	Scope *Scope
}

// Search finds the documents whose name or content holds the query's words, in the
// folder given ("" for everything), ranked by relevance, a page at a time. The index
// ranks; the catalog supplies metadata and the text the snippets come from. The index is
// searched between two reads of the catalog, never during one: a slow search must not
// hold the catalog's lock, which the writer waits for and every reader after it.
func Search(ctx context.Context, cat Catalog, x Searcher, a SearchArgs, l Limits) (*SearchResult, *Error) {
	l = l.orDefault()
	q, err := querylang.Parse(a.Query)
	if err != nil {
		return nil, searchError(err)
	}
	folder, perr := CleanPath(a.Folder)
	if perr != nil {
		return nil, perr
	}
	var qerr *Error
	if err := cat.Read(func(snap *projection.Snapshot) error {
		qerr = checkSearchFolder(snap, folder)
		return nil
	}); err != nil {
		return nil, Internal(ErrIO, err, "reading the catalog")
	}
	if qerr != nil {
		return nil, qerr
	}
	req := search.Request{Query: q, Folder: folder, Limit: a.Limit, Cursor: a.Cursor}
	if sc := a.Scope; sc != nil {
		sc.Folder = folder
		f := sc.Filter()
		req.Scope = &f
	}
	// What the index had applied when it was searched: everything up to it is in res.
	searched := x.Checkpoint()
	res, err := x.Search(ctx, req)
	if err != nil {
		return nil, searchError(err)
	}
	var page *hitPage
	behind, shown := false, 0
	if err := cat.Read(func(snap *projection.Snapshot) error {
		page = searchHits(snap, x, a, folder, q, req, res)
		if behind = snap.State().Seq > searched; behind {
			shown = snap.Len()
			for _, tok := range snap.SessionTokens() {
				shown += len(snap.SessionDocuments(tok))
			}
		}
		return nil
	}); err != nil {
		return nil, Internal(ErrIO, err, "reading the catalog")
	}
	out := page.finish(req, res, l) // reads the bodies once the catalog is free again
	if behind {
		n := x.State().Documents
		out.Partial = &SearchPartial{Searchable: n, Documents: shown,
			Note: fmt.Sprintf("partial: the search index is catching up (%d of %d documents searchable); search again in a moment for complete results", n, shown)}
	}
	if len(res.Missing) > 0 {
		missingPartitions(cat, out, folder, res)
	}
	return out, nil
}

// missingPartitions marks a result partial for the partitions no replica answered for,
// with the number of the folder's documents they hold (the catalog has every document's
// record).
func missingPartitions(cat Catalog, out *SearchResult, folder string, res search.Result) {
	n := 0
	_ = cat.Read(func(snap *projection.Snapshot) error {
		if f, ok := snap.Folder(folder); ok {
			f.EachDoc(func(d *projection.Document) {
				if slices.Contains(res.Missing, events.PartitionOf(d.Key(), res.Partitions)) {
					n++
				}
			})
		}
		return nil
	})
	if out.Partial == nil {
		out.Partial = &SearchPartial{}
	} else {
		out.Partial.Note += "; "
	}
	out.Partial.MissingPartitions, out.Partial.MissingDocuments = res.Missing, n
	out.Partial.Note += fmt.Sprintf("partial: no replica of partition %v answered, so %d documents were not searched; search again in a moment for complete results", res.Missing, n)
}

// checkSearchFolder refuses a folder that is not one of the catalog's.
func checkSearchFolder(snap *projection.Snapshot, folder string) *Error {
	if folder == "" {
		return nil
	}
	if _, ok := snap.Folder(folder); ok {
		return nil
	}
	if _, isDoc := snap.Document(folder); isDoc {
		return Errorf(ErrInvalidArgument, "folder %q is a document; pass the folder that holds it, or use view to read it", folder)
	}
	return Errorf(ErrNotFound, "folder %q does not exist", folder).
		WithInstruction("Use tree(\"\") to see the folders, then search again with one of them, or with folder \"\" for everything.")
}

// hitPage is a page of hits as the catalog snapshot gave it: the hits with their
// metadata, and their documents' bodies, kept past the snapshot to be read after it.
type hitPage struct {
	out          *SearchResult
	hits         []SearchHit
	from         []int              // each hit's place in the index's hits
	bodies       []*projection.Body // nil for a document without text
	terms, stems []string
	pairs        map[[2]string]bool
}

// searchHits turns the index's hits into the result's, with metadata from the catalog
// snapshot; their snippets are found by finish, once the snapshot has ended.
func searchHits(snap *projection.Snapshot, x Searcher, a SearchArgs, folder string, q querylang.Query, req search.Request, res search.Result) *hitPage {
	text := a.Query
	if len(res.Corrections) > 0 {
		text = corrected(a.Query, res.Corrections)
		q, _ = querylang.Parse(text)
	}
	terms, pairs := q.Terms(), queryPairs(text)
	stems := make([]string, len(terms))
	for i, t := range terms {
		stems[i] = x.Stem(t)
	}
	out := &SearchResult{Query: a.Query, Folder: folder, Total: res.Total, Hits: []SearchHit{},
		NextCursor: res.Next, Relaxed: res.Relaxed, Corrections: res.Corrections}
	if len(res.Corrections) > 0 {
		out.DidYouMean = text
	}
	p := &hitPage{out: out, terms: terms, stems: stems, pairs: pairs,
		hits: make([]SearchHit, 0, len(res.Hits)), from: make([]int, 0, len(res.Hits))}
	for i, h := range res.Hits {
		var d *projection.Document
		var ok bool
		if h.Session != "" {
			d, ok = snap.SessionDocument(h.Session, h.Path)
		} else {
			d, ok = snap.Document(h.Path)
		}
		if !ok {
			// The index is a batch ahead of the catalog, or behind it: this document is
			// being deleted, and the next batch removes it from the index too.
			continue
		}
		hit := SearchHit{Path: d.Path, Name: d.Name(), Title: d.Title, Words: d.Words, Score: h.Score}
		if h.Session != "" {
			hit.Path = SessionPrefix + d.Path
		}
		if a.Scope != nil {
			o := a.Scope.Annotate(h.Session, d.Path)
			hit.Origin = &o
		}
		var b *projection.Body
		if d.Readable() {
			if found, err := snap.KeepBody(d); err == nil {
				b = &found
			}
		}
		p.hits, p.from, p.bodies = append(p.hits, hit), append(p.from, i), append(p.bodies, b)
	}
	return p
}

// finish finds the hits' text (reading, unpacking and matching each document's words,
// most of a page's time) on every core, outside the catalog's lock, and bounds the page.
func (p *hitPage) finish(req search.Request, res search.Result, l Limits) *SearchResult {
	out, hits, from, bodies := p.out, p.hits, p.from, p.bodies
	terms, stems, pairs := p.terms, p.stems, p.pairs
	parallel(len(hits), func(i int) {
		if bodies[i] == nil {
			return
		}
		defer bodies[i].Release()
		buf := textBuffers.Get().(*textBuffer)
		defer buf.put()
		if b, err := bodies[i].ReadBuffered(&buf.body); err == nil {
			hits[i].Section, hits[i].Snippet = hitText(b, terms, stems, pairs, &buf.lower)
		}
	})
	var size pageSize
	for i, hit := range hits {
		if !size.add(out.Hits, hit, l.MaxChars) && len(out.Hits) > 0 {
			out.Truncated = true
			out.NextCursor = req.CursorAfter(res.Hits[from[i-1]], res.Relaxed)
			out.Message = "the response size bound cut this page short; pass next_cursor to go on"
			break
		}
		out.Hits = append(out.Hits, hit)
	}
	switch {
	case out.Message != "":
	case out.DidYouMean != "":
		out.Message = fmt.Sprintf("no document holds %s; searched for %q instead", unknownWords(res.Corrections), out.DidYouMean)
		if res.Relaxed {
			out.Message += ", and no document holds every word of it; these hold some of them"
		}
	case res.Total == 0:
		out.Message = "no document matches; try fewer or other words, or a wider folder"
	case res.Relaxed:
		out.Message = "no document holds every word; these hold some of them"
	}
	return out
}

// pageSize counts a page's encoded size against its bound: from an upper bound of each
// hit's size while the sum of those stays within it (encoding twenty hits to count them
// cost as much as the rest of the answer), exactly from the hits' encoding past that.
type pageSize struct {
	upper, exact int
	exactly      bool
}

// pageEnvelope is the room the page's other fields take.
const pageEnvelope = 200

// add counts hit into the page, whose hits so far are kept, and reports whether the page
// stays within max.
func (p *pageSize) add(kept []SearchHit, hit SearchHit, max int) bool {
	if !p.exactly {
		u := hitUpperSize(hit)
		if pageEnvelope+p.upper+u <= max {
			p.upper += u
			return true
		}
		p.exactly = true
		for _, h := range kept {
			p.exact += encodedSize(h) + 1
		}
	}
	n := encodedSize(hit)
	if pageEnvelope+p.exact+n > max {
		return false
	}
	p.exact += n + 1
	return true
}

func encodedSize(hit SearchHit) int {
	enc, _ := EncodeJSON(hit) // as the answer encodes it
	return len(enc)
}

// hitUpperSize is at least the size of hit's JSON encoding: a byte of a string takes at
// most six (\u00XX), the field names and numbers a few hundred.
func hitUpperSize(h SearchHit) int {
	n := len(h.Path) + len(h.Name) + len(h.Title) + len(h.Snippet)
	if h.Origin != nil {
		n += len(h.Origin.Type) + len(h.Origin.ID)
	}
	if h.Section != nil {
		n += len(h.Section.Heading)
	}
	return 6*n + 400
}

// parallel calls fn(0) … fn(n-1), on as many goroutines as there are cores.
func parallel(n int, fn func(int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// textBuffer is the memory a hit's text is found in: its document's body, and the body
// case-folded (wordMatches). A search reads the bodies of a page's hits into buffers used again, rather
// than allocating two copies of each, which the collector then had to chase.
type textBuffer struct {
	body  projection.BodyBuffer
	lower []byte
}

var textBuffers = sync.Pool{New: func() any { return new(textBuffer) }}

// maxTextBuffer bounds the memory a buffer keeps for the next search: a large document's
// is let go.
const maxTextBuffer = 1 << 20

func (b *textBuffer) put() {
	if b.body.Size()+cap(b.lower) <= maxTextBuffer {
		textBuffers.Put(b)
	}
}

// hitText finds a hit's best section, and the snippet of it (of the whole document when it
// has no sections), from one pass over its words; lower is memory for wordMatches.
func hitText(content []byte, terms, stems []string, pairs map[[2]string]bool, lower *[]byte) (*HitSection, string) {
	ms := wordMatches(content, terms, stems, maxHitMatches, lower)
	sec, start, end, ok := bestSection(content, ms, len(terms), pairs)
	text := clipScan(content[start:end]) // the whole text when it has no sections
	snippet := snippetOf(text, terms, clip(ms, start, start+len(text)))
	if !ok {
		return nil, snippet
	}
	return &sec, snippet
}

// maxHitMatches bounds the matches of the query's terms a hit's sections are weighed by.
const maxHitMatches = 50_000

// clip returns the matches inside content[start:end], with offsets from start.
func clip(ms []termMatch, start, end int) []termMatch {
	var out []termMatch
	for _, m := range ms {
		if m.start >= start && m.end <= end {
			m.start, m.end = m.start-start, m.end-start
			out = append(out, m)
			if len(out) == maxSnippetMatches {
				break
			}
		}
	}
	return out
}

// searchError maps the index's errors to the client's error types.
func searchError(err error) *Error {
	switch {
	case errors.Is(err, querylang.ErrEmpty):
		return Errorf(ErrInvalidArgument, "query is empty: give one or more words to search for")
	case errors.Is(err, querylang.ErrInvalidUTF8), errors.Is(err, querylang.ErrTooLong),
		errors.Is(err, querylang.ErrTooManyTerms), errors.Is(err, querylang.ErrNothingToFind),
		errors.Is(err, search.ErrInvalidCursor), errors.Is(err, search.ErrInvalidRequest),
		errors.Is(err, search.ErrTooBroad):
		return Errorf(ErrInvalidArgument, "%v", err)
	case errors.Is(err, search.ErrNotOpen):
		return Errorf(ErrNotReady, "%v", err).WithInstruction("Call search again in a moment; view and tree already answer.")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Internal(ErrIO, err, "search interrupted")
	}
	return Internal(ErrIO, err, "search failed")
}

// corrected rewrites a query's text q with the corrections made to its words.
func corrected(q string, subs []search.Correction) string {
	to := map[string]string{}
	for _, c := range subs {
		to[c.From] = c.To
	}
	var b strings.Builder
	last := 0
	text.Words([]byte(q), func(s text.Span) bool {
		if w, ok := to[text.FoldString(q[s.Start:s.End])]; ok {
			b.WriteString(q[last:s.Start])
			b.WriteString(w)
			last = s.End
		}
		return true
	})
	b.WriteString(q[last:])
	return b.String()
}

func unknownWords(subs []search.Correction) string {
	var ws []string
	for _, c := range subs {
		ws = append(ws, strconv.Quote(c.From))
	}
	return strings.Join(ws, ", ")
}
