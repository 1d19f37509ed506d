package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/index/querylang"
)

// A search over the partitions of a project runs the steps of a search of one index —
// pageOn and searchWith, the same code — with each step asked of every partition and the
// answers merged (Fanout), every partition scoring by the statistics of the whole project
// (stats.go). Hits are ordered by score and then key everywhere, so the best of the
// partitions' best are the project's best, and a cursor (a score and a key) continues
// every partition where the page ended. A query with neighbouring words ranks the best
// documents by their words alone again by nearness (rerank.go): each partition sends its
// own best with both scores, and the project's best are chosen from their union.

// The steps a partition is asked (PartRequest.Op).
const (
	PartGather = "gather" // what the partition holds of what the search scores by
	PartPage   = "page"   // a page of hits, after a cursor
	PartWindow = "window" // the best by the words alone, with their scores by nearness
	PartHolds  = "holds"  // whether a document holds every word
)

// PartRequest is one step of a search of several partitions, as each is asked it.
type PartRequest struct {
	Op      string  `json:"op"`
	Request Request `json:"request"`
	After   *cursor `json:"after,omitempty"`
	Partial bool    `json:"partial,omitempty"`
	Stats   *Stats  `json:"stats,omitempty"`
}

// Gathered is what one partition holds of what a search scores by, or their sum over
// partitions.
type Gathered struct {
	Docs       uint64                 `json:"docs"`
	Lengths    map[string]FieldLength `json:"lengths"`
	Terms      map[string]uint64      `json:"terms"`
	Forms      map[string][]string    `json:"forms"`
	AdmitsAll  map[string]bool        `json:"admits_all"`
	Known      map[string]bool        `json:"known"`
	Candidates map[string][]Candidate `json:"candidates"`
}

func newGathered() *Gathered {
	return &Gathered{Lengths: map[string]FieldLength{}, Terms: map[string]uint64{}, Forms: map[string][]string{},
		AdmitsAll: map[string]bool{}, Known: map[string]bool{}, Candidates: map[string][]Candidate{}}
}

// PartHit is a hit as a partition sends it.
type PartHit struct {
	Path    string   `json:"p"`
	Session string   `json:"s,omitempty"`
	Score   float64  `json:"x"`
	Past    bool     `json:"w,omitempty"`
	Near    *float64 `json:"n,omitempty"` // the score by nearness (PartWindow); nil: no longer a match
}

// PartReply is a partition's answer to a step.
type PartReply struct {
	Gathered *Gathered `json:"gathered,omitempty"`
	Hits     []PartHit `json:"hits,omitempty"`
	Total    uint64    `json:"total"`
	More     bool      `json:"more,omitempty"`
	Full     bool      `json:"full,omitempty"`
	Holds    bool      `json:"holds,omitempty"`
	// Misses counts the terms scored without the whole project's count of documents
	// holding them (the partition changed between the steps).
	Misses int64 `json:"misses,omitempty"`
	// Seq is the stream sequence the answering index had applied, the same before and
	// after the step; 0 when it moved meanwhile, or is not known. Parts are the
	// partitions the index holds (set by whoever asked: package partition).
	Seq   uint64 `json:"seq,omitempty"`
	Parts []int  `json:"parts,omitempty"`
}

// FieldLengths is an Index that reports its field lengths, for a search of several
// partitions (index.Index).
type FieldLengths interface {
	FieldLengths() map[string]FieldLength
}

// Part answers one step of a search of several partitions, over this engine's index.
func (e *Engine) Part(ctx context.Context, req PartRequest) (PartReply, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var out PartReply
	p := &part{st: req.Stats}
	if req.Op == PartGather {
		p.st, p.rec = nil, newGathered()
	}
	r := req.Request
	if r.Limit < 1 || r.Limit > MaxLimit+1 {
		return out, fmt.Errorf("%w: limit %d", ErrInvalidRequest, r.Limit)
	}
	err := e.Index.Read(func(idx bleve.Index) error {
		v := view{Engine: e, idx: idx, part: p}
		switch req.Op {
		case PartGather:
			out.Gathered = p.rec
			return v.gather(ctx, r, p.rec)
		case PartPage:
			res, err := v.search(ctx, r, req.After, req.Partial)
			out.Hits, out.Total, out.More = partHits(res.Hits), res.Total, res.more
			return err
		case PartWindow:
			alone := r.Query
			alone.Pairs = nil
			win, full, err := v.window(ctx, v.build(alone, r.Folder, r.Scope, req.Partial), req.Partial)
			if err != nil {
				return err
			}
			ranked, err := v.rescore(ctx, v.build(r.Query, r.Folder, r.Scope, req.Partial), win.Hits)
			if err != nil {
				return err
			}
			near := make(map[string]float64, len(ranked))
			for _, h := range ranked {
				near[h.key().ID()] = h.Score
			}
			out.Hits, out.Total, out.Full = partHits(win.Hits), win.Total, full
			for i := range out.Hits {
				if s, ok := near[win.Hits[i].key().ID()]; ok {
					out.Hits[i].Near = &s
				}
			}
			return nil
		case PartHolds:
			var err error
			out.Holds, err = v.holdsAll(ctx, r)
			return err
		}
		return fmt.Errorf("%w: step %q", ErrInvalidRequest, req.Op)
	})
	out.Misses = p.misses.Load()
	return out, err
}

func partHits(hs []Hit) []PartHit {
	out := make([]PartHit, len(hs))
	for i, h := range hs {
		out[i] = PartHit{Path: h.Path, Session: h.Session, Score: h.Score, Past: h.past}
	}
	return out
}

// gather records what this index holds of what r's search may score by: its documents
// and field lengths, the count of every term the plans of its pages look up (the
// searchers are made, not run), the other forms of its words, and for the words no
// document may hold, whether this index holds them and the words near them.
func (v view) gather(ctx context.Context, r Request, g *Gathered) error {
	rd, ctx, err := v.reader(ctx)
	if err != nil {
		return err
	}
	defer rd.Close()
	if g.Docs, err = rd.DocCount(); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if l, ok := v.Index.(FieldLengths); ok {
		g.Lengths = l.FieldLengths()
	}
	qs := []querylang.Query{r.Query}
	if len(r.Query.Pairs) > 0 {
		alone := r.Query
		alone.Pairs = nil
		qs = append(qs, alone) // without pairs, the same query twice
	}
	for _, relaxed := range []bool{false, true} {
		for _, q := range qs {
			s, err := v.build(q, r.Folder, r.Scope, relaxed).Searcher(ctx, rd, v.idx.Mapping(), bsearch.SearcherOptions{})
			if err != nil {
				return fmt.Errorf("search: %w", err)
			}
			_ = s.Close()
		}
	}
	fz, _ := rd.(bindex.IndexReaderFuzzy)
	for _, w := range r.Query.Words {
		if !typoWord(w) {
			continue
		}
		known := v.known(w)
		g.Known[w] = known
		if !known && fz != nil {
			g.Candidates[w] = candidates(fz, w)
		}
	}
	return nil
}

// Fanout searches the partitions of a project as one index.
type Fanout struct {
	// Call asks every partition req, and returns the replies of those that answered, and
	// the partitions none of whose replicas did.
	Call func(ctx context.Context, req PartRequest) ([]PartReply, []int, error)
	// BM25 returns the statistics BM25 scores by, from field lengths and a number of
	// documents (index.BM25Of).
	BM25 func(map[string]FieldLength, uint64) *bsearch.BM25Stats
	// Count is the project's number of partitions.
	Count int
	// Budget bounds a page, its steps asked of every partition included: more than Call
	// takes to give up on a partition, so that one not answering makes the answer partial,
	// not too broad. 0 means DefaultBudget.
	Budget time.Duration
	// NearWindow is the partitions' Engine.NearWindow; 0 means defaultNearWindow.
	NearWindow int
	// Misses counts the terms partitions scored without the whole project's counts, over
	// every search (PartReply.Misses): 0 when every search ranked exactly as one index.
	Misses atomic.Int64
	// Gathers counts the gathering steps asked of the partitions, over every search: a
	// search whose statistics were kept from an earlier one asks none.
	Gathers atomic.Int64

	mu    sync.Mutex
	kept  map[string]*keptStats // by gatherKey
	stale atomic.Int64          // kept statistics found stale by a page's answers
}

// keptStats are statistics summed over every partition, kept for the next search of the
// same query, with the sequence each partition's index stood at when it gave its part.
// A page answered by an index at another sequence proves them stale: the search is then
// asked again, its statistics gathered anew. So a search of a project where nothing
// changed takes one step of every partition instead of two, and ranks exactly as one
// gathering the statistics first would.
type keptStats struct {
	sum  *Gathered
	seqs map[int]uint64 // by partition
}

// maxKept bounds the statistics kept: past it, they are all dropped.
const maxKept = 512

// keep keeps g, gathered from replies, for key, when every partition answered with a
// known sequence.
func (f *Fanout) keep(key string, g *Gathered, replies []PartReply, missing bool) {
	if missing {
		return
	}
	seqs := map[int]uint64{}
	for _, r := range replies {
		if r.Seq == 0 || len(r.Parts) == 0 {
			return
		}
		for _, k := range r.Parts {
			seqs[k] = r.Seq
		}
	}
	if len(seqs) != f.Count || f.Count == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.kept == nil || len(f.kept) >= maxKept {
		f.kept = map[string]*keptStats{}
	}
	f.kept[key] = &keptStats{sum: g, seqs: seqs}
}

func (f *Fanout) keptFor(key string) *keptStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kept[key]
}

func (f *Fanout) drop(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.kept, key)
}

// Stale is how many searches found the statistics kept for them stale, and were asked
// again.
func (f *Fanout) Stale() int64 { return f.stale.Load() }

// Search is Engine.Search over every partition. Result.Missing lists the partitions
// that no replica answered for: the hits are then those of the others.
func (f *Fanout) Search(ctx context.Context, r Request) (Result, error) {
	s := &fanSearch{f: f, missing: map[int]bool{}, gathered: map[string]*Gathered{}, useKept: true}
	res, err := searchWith(ctx, r, s.searchPage, s.correct)
	if s.stale {
		// A partition changed since the statistics kept were gathered: ask again,
		// gathering them first.
		f.stale.Add(1)
		for key := range s.used {
			f.drop(key)
		}
		s = &fanSearch{f: f, missing: map[int]bool{}, gathered: map[string]*Gathered{}}
		res, err = searchWith(ctx, r, s.searchPage, s.correct)
	}
	res.Missing = slices.Sorted(maps.Keys(s.missing))
	if len(res.Missing) > 0 {
		res.Partitions = f.Count
	}
	f.Misses.Add(s.misses)
	return res, err
}

// fanSearch is one Fanout.Search.
type fanSearch struct {
	f        *Fanout
	missing  map[int]bool
	gathered map[string]*Gathered // summed, by gatherKey
	misses   int64
	useKept  bool                  // statistics kept by an earlier search may be used
	used     map[string]*keptStats // the kept statistics used, by gatherKey
	stale    bool                  // a step's answer proved one of them stale
}

func gatherKey(r Request) string {
	return fmt.Sprintf("%q\x00%s", r.Query.Pairs, r.Query.String()) + "\x00" + r.Folder + scopeKey(r.Scope)
}

func (s *fanSearch) call(ctx context.Context, req PartRequest) ([]PartReply, error) {
	replies, missing, err := s.f.Call(ctx, req)
	for _, k := range missing {
		s.missing[k] = true
	}
	for _, rep := range replies {
		s.misses += rep.Misses
		for _, kept := range s.used {
			for _, k := range rep.Parts {
				if rep.Seq == 0 || kept.seqs[k] != rep.Seq {
					s.stale = true
				}
			}
			if len(rep.Parts) == 0 {
				s.stale = true
			}
		}
	}
	return replies, err
}

// gather sums what the partitions hold of what r's search scores by.
func (s *fanSearch) gather(ctx context.Context, r Request) (*Gathered, error) {
	key := gatherKey(r)
	if g := s.gathered[key]; g != nil {
		return g, nil
	}
	if kept := s.f.keptFor(key); kept != nil && s.useKept {
		if s.used == nil {
			s.used = map[string]*keptStats{}
		}
		s.used[key] = kept
		s.gathered[key] = kept.sum
		return kept.sum, nil
	}
	r.Cursor = ""
	s.f.Gathers.Add(1)
	replies, err := s.call(ctx, PartRequest{Op: PartGather, Request: r})
	if err != nil {
		return nil, err
	}
	defer func() { s.f.keep(key, s.gathered[key], replies, len(s.missing) > 0) }()
	sum := newGathered()
	cands := map[string]map[[2]string]Candidate{}
	for _, rep := range replies {
		g := rep.Gathered
		if g == nil {
			continue
		}
		sum.Docs += g.Docs
		for f, l := range g.Lengths {
			sum.Lengths[f] = FieldLength{Words: sum.Lengths[f].Words + l.Words, Docs: sum.Lengths[f].Docs + l.Docs}
		}
		for t, n := range g.Terms {
			sum.Terms[t] += n
		}
		for k, fs := range g.Forms {
			sum.Forms[k] = append(sum.Forms[k], fs...)
		}
		for k, all := range g.AdmitsAll {
			if was, ok := sum.AdmitsAll[k]; !ok || was {
				sum.AdmitsAll[k] = all
			}
		}
		for w, known := range g.Known {
			sum.Known[w] = sum.Known[w] || known
		}
		for w, cs := range g.Candidates {
			if cands[w] == nil {
				cands[w] = map[[2]string]Candidate{}
			}
			for _, c := range cs {
				k := [2]string{c.Field, c.Term}
				had := cands[w][k]
				c.Count += had.Count
				cands[w][k] = c
			}
		}
	}
	for k, fs := range sum.Forms {
		// In dictionary order, as one index lists them, as many as one would.
		slices.Sort(fs)
		fs = slices.Compact(fs)
		sum.Forms[k] = fs[:min(len(fs), maxForms)]
	}
	for w, m := range cands {
		sum.Candidates[w] = slices.Collect(maps.Values(m))
	}
	s.gathered[key] = sum
	return sum, nil
}

// searchPage is Engine.searchPage over every partition.
func (s *fanSearch) searchPage(ctx context.Context, r Request) (Result, error) {
	r, key, after, err := pageArgs(r)
	if err != nil {
		return Result{}, err
	}
	g, err := s.gather(ctx, r)
	if err != nil {
		return Result{}, err
	}
	st := &Stats{Terms: g.Terms, Forms: g.Forms, AdmitsAll: g.AdmitsAll}
	if s.f.BM25 != nil {
		st.BM25 = s.f.BM25(g.Lengths, g.Docs)
	}
	return pageOn(ctx, &fanPager{s: s, st: st}, r, key, after)
}

// correct is view.correct over every partition: a word is known when one of them holds
// it, and its candidates are counted over all of them.
func (s *fanSearch) correct(ctx context.Context, q querylang.Query) (querylang.Query, []Correction) {
	var g *Gathered
	for _, had := range s.gathered {
		g = had
		break
	}
	if g == nil || len(s.gathered) > 1 {
		var err error
		if g, err = s.gather(ctx, Request{Query: q, Limit: 1}); err != nil {
			return q, nil
		}
	}
	var subs []Correction
	words := slices.Clone(q.Words)
	for i, w := range words {
		if !typoWord(w) || g.Known[w] {
			continue
		}
		if to := pick(slices.Clone(g.Candidates[w])); to != "" {
			words[i] = to
			subs = append(subs, Correction{From: w, To: to})
		}
	}
	if len(subs) == 0 {
		return q, nil
	}
	q.Words = words
	return q, subs
}

// DefaultBudget is a page's bound over partitions: a few steps, each of which may wait
// for a partition's search (Timeout) and ask another replica once.
const DefaultBudget = 6 * Timeout

func (p *fanPager) budget() time.Duration { return cmp.Or(p.s.f.Budget, DefaultBudget) }

// fanPager is a pager over every partition, with the statistics of one search.
type fanPager struct {
	s  *fanSearch
	st *Stats
}

func (p *fanPager) ask(ctx context.Context, op string, r Request, after *cursor, partial bool) ([]PartReply, error) {
	return p.s.call(ctx, PartRequest{Op: op, Request: r, After: after, Partial: partial, Stats: p.st})
}

func (p *fanPager) search(ctx context.Context, r Request, after *cursor, partial bool) (Result, error) {
	if len(r.Query.Pairs) > 0 && (after == nil || !after.Past) {
		return p.searchNear(ctx, r, after, partial)
	}
	replies, err := p.ask(ctx, PartPage, r, after, partial)
	if err != nil {
		return Result{}, err
	}
	return mergePages(replies, r.Limit, partial), nil
}

// mergePages merges the partitions' pages into the project's.
func mergePages(replies []PartReply, limit int, partial bool) Result {
	res := Result{Relaxed: partial}
	more := false
	for _, rep := range replies {
		for _, h := range rep.Hits {
			res.Hits = append(res.Hits, Hit{Path: h.Path, Session: h.Session, Score: h.Score, past: h.Past})
		}
		res.Total += rep.Total
		more = more || rep.More
	}
	sortHits(res.Hits)
	res = res.page(limit)
	res.more = res.more || more
	return res
}

func sortHits(hs []Hit) {
	slices.SortFunc(hs, func(a, b Hit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return strings.Compare(a.key().ID(), b.key().ID())
	})
}

// searchNear is view.searchNear over every partition.
func (p *fanPager) searchNear(ctx context.Context, r Request, after *cursor, relaxed bool) (Result, error) {
	replies, err := p.ask(ctx, PartWindow, r, nil, relaxed)
	if err != nil {
		return Result{}, err
	}
	var win []Hit
	near := map[string]float64{}
	res := Result{Relaxed: relaxed}
	full := false
	for _, rep := range replies {
		for _, h := range rep.Hits {
			hit := Hit{Path: h.Path, Session: h.Session, Score: h.Score}
			win = append(win, hit)
			if h.Near != nil {
				near[hit.key().ID()] = *h.Near
			}
		}
		res.Total += rep.Total
		full = full || rep.Full
	}
	sortHits(win)
	if w := cmp.Or(p.s.f.NearWindow, defaultNearWindow); len(win) > w {
		win, full = win[:w], true
	}
	var ranked []Hit
	for _, h := range win {
		if s, ok := near[h.key().ID()]; ok {
			h.Score = s
			ranked = append(ranked, h)
		}
	}
	sortHits(ranked)
	start := 0
	if after != nil {
		score, _ := strconv.ParseFloat(after.Score, 64) // decodeCursor checked it
		start = len(ranked)
		for i, h := range ranked {
			if h.Score < score || h.Score == score && h.key().ID() > after.Path {
				start = i
				break
			}
		}
	}
	res.Hits = ranked[start:]
	if need := r.Limit + 1 - len(res.Hits); need > 0 && full && len(win) > 0 {
		// The page goes on past the window, in the order of the words alone.
		last := win[len(win)-1]
		c := cursor{Score: strconv.FormatFloat(last.Score, 'g', -1, 64), Path: last.key().ID(), Past: true}
		rr := r
		rr.Limit = need
		more, err := p.ask(ctx, PartPage, rr, &c, relaxed)
		if err != nil {
			return Result{}, err
		}
		res.Hits = append(res.Hits, mergePages(more, need, relaxed).markPast().Hits...)
	}
	return res.page(r.Limit), nil
}

func (p *fanPager) holdsAll(ctx context.Context, r Request) (bool, error) {
	replies, err := p.ask(ctx, PartHolds, r, nil, false)
	for _, rep := range replies {
		if rep.Holds {
			return true, err
		}
	}
	return false, err
}

// ErrNoPartition is returned by a Fanout's Call when it cannot ask any partition.
var ErrNoPartition = errors.New("no partition answered")
