package index

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/text"
)

// Weights: a name match counts twice a content match (the other fields' weights are in
// rankedFields); another form of the word ("dragons" for "dragon") counts half as much as
// the word itself; words of the query that stand near each other in a document, as they
// do in the query, add boostNear per pair.
const (
	boostName       = 2.0
	boostContent    = 1.0
	boostForm       = 0.5
	boostContentCJK = 1.0
	boostNear       = 4.0
)

// rankedWords is how many words (and phrases) a query needs to be ranked as a sentence:
// every document holding some of them matches, those holding more of them first.
const rankedWords = 3

// Limits of the expansion of a word to the other indexed forms of its stem: how many
// dictionary terms that share its stem's prefix are looked at, and how many forms are
// searched.
const (
	maxFormScan = 2000
	maxForms    = 32
	maxFormTail = 9 // bytes a form may add to the stem ("organ" → "organizations")
)

// Limits of a page of results, and of the time one search may take: a phrase of the
// commonest words over a large tree reads every position of both, and must not hold a
// reader for seconds.
const (
	SearchTimeout = 2 * time.Second
	DefaultLimit  = 20
	MaxLimit      = 100
)

// Request is one search.
type Request struct {
	Query  Query
	Folder string // a clean folder path; "" searches everything
	// Scope, when set, replaces Folder: which documents of the tree and of one session
	// the search covers (a session's focus set and its attached documents).
	Scope  *Scope
	Limit  int    // 1..MaxLimit; 0 means DefaultLimit
	Cursor string // from a previous Result's Next, for the following page
}

// Scope admits the documents of the tree below Subtree ("" for all of it) or directly in
// one of DirectIn, and the documents of the session Session ("" for none). Session
// documents never match a search without a Scope naming their session.
type Scope struct {
	Session  string
	Subtree  string
	DirectIn []string
}

// Match reports whether the scope admits a document, as the search's filter does: session
// is its session token ("" for a document of the tree), docPath its path (a session
// document's file name). It answers for documents the index does not hold yet.
func (sc Scope) Match(session, docPath string) bool {
	if session != "" {
		return sc.Session != "" && session == sc.Session
	}
	dir := ""
	if i := strings.LastIndexByte(docPath, '/'); i >= 0 {
		dir = docPath[:i]
	}
	return sc.Subtree == "" || dir == sc.Subtree || strings.HasPrefix(dir, sc.Subtree+"/") ||
		slices.Contains(sc.DirectIn, dir)
}

// Hit is one matching document.
type Hit struct {
	Path    string  `json:"path"`
	Session string  `json:"session,omitempty"` // a session document's session token
	Score   float64 `json:"score"`

	past bool // ranked after the nearness window, by the query's words alone (near.go)
}

func (h Hit) key() events.DocKey { return events.DocKey{Session: h.Session, Path: h.Path} }

// Result is a page of hits, best first.
type Result struct {
	Hits  []Hit
	Total uint64 // matching documents, on every page
	Next  string // cursor of the next page; "" on the last
	// Relaxed is set when no document held every word, and the hits hold some of them.
	Relaxed bool
	// Corrections are the words searched instead of words no document holds.
	Corrections []Correction

	more bool
}

// cursor is where a page ends: the last hit's sort key, and which search it belongs to.
type cursor struct {
	Key     string `json:"k"` // fingerprint of query and folder
	Score   string `json:"s"`
	Path    string `json:"p"`
	Relaxed bool   `json:"r,omitempty"`
	// Past is set when the hit lies after the nearness window: Score is then its score
	// by the query's words alone (near.go).
	Past bool `json:"w,omitempty"`
}

func fingerprint(q Query, folder string) string {
	h := sha256.Sum256([]byte(q.String() + "\x00" + folder))
	return hex.EncodeToString(h[:6])
}

func decodeCursor(s string, key string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 8192 || json.Unmarshal(b, &c) != nil {
		return c, fmt.Errorf("%w: not a cursor this server issued", ErrInvalidCursor)
	}
	if c.Key != key {
		return c, fmt.Errorf("%w: it belongs to another query or folder", ErrInvalidCursor)
	}
	if _, err := strconv.ParseFloat(c.Score, 64); err != nil {
		return c, fmt.Errorf("%w: bad score", ErrInvalidCursor)
	}
	return c, nil
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Search runs a query and returns one page of hits, best first, ties by path.
// ErrNotOpen is returned by a search before the index is open (or after it is closed).
var ErrNotOpen = errors.New("the search index is not open yet; try again in a moment")

func (x *Index) Search(ctx context.Context, r Request) (Result, error) {
	res, err := x.searchPage(ctx, r)
	switch {
	case err == nil && res.Total > 0 && !res.Relaxed:
		return res, nil
	case err != nil && !(errors.Is(err, ErrInvalidCursor) && r.Cursor != ""):
		return res, err
	}
	// Nothing, or only some of the words, found (or a cursor of a corrected search):
	// words the index does not hold may be typing errors.
	fixed, subs := x.correct(r.Query)
	if len(subs) == 0 {
		return res, err
	}
	fr := r
	fr.Query = fixed
	fres, ferr := x.searchPage(ctx, fr)
	if ferr != nil || fres.Total == 0 || err == nil && res.Total > 0 && fres.Relaxed {
		return res, err
	}
	fres.Corrections = subs
	return fres, nil
}

func (x *Index) searchPage(ctx context.Context, r Request) (Result, error) {
	var res Result
	if r.Limit == 0 {
		r.Limit = DefaultLimit
	}
	if r.Limit < 1 || r.Limit > MaxLimit {
		return res, fmt.Errorf("%w: limit %d is outside 1..%d", ErrInvalidRequest, r.Limit, MaxLimit)
	}
	if len(r.Query.Words) == 0 && len(r.Query.Phrases) == 0 {
		return res, ErrNothingToFind
	}
	key := fingerprint(r.Query, r.Folder+scopeKey(r.Scope))
	var after *cursor
	if r.Cursor != "" {
		c, err := decodeCursor(r.Cursor, key)
		if err != nil {
			return res, err
		}
		after = &c
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.idx == nil {
		return res, ErrNotOpen
	}
	ctx, cancel := context.WithTimeout(ctx, SearchTimeout)
	defer cancel()
	n := len(r.Query.Words) + len(r.Query.Phrases)
	sentence := n >= rankedWords
	relaxed := after != nil && after.Relaxed
	res, err := x.search(ctx, r, after, sentence || relaxed)
	switch {
	case err != nil:
	case sentence && after != nil:
		res.Relaxed = after.Relaxed
	case sentence:
		// Ranked as a sentence, every document holding some of the words matches: say
		// whether any holds them all.
		var all bool
		all, err = x.holdsAll(ctx, r)
		res.Relaxed = !all && res.Total > 0
	case res.Total == 0 && after == nil && n > 1:
		// No document holds every word: say so, and show those holding some.
		res, err = x.search(ctx, r, nil, true)
	}
	if err != nil {
		return res, err
	}
	if res.more {
		last := res.Hits[len(res.Hits)-1]
		res.Next = cursor{Key: key, Score: strconv.FormatFloat(last.Score, 'g', -1, 64),
			Path: last.key().ID(), Relaxed: res.Relaxed, Past: last.past}.encode()
	}
	return res, nil
}

// tieSlack is how many hits beyond a page a first page asks for, so that ties of score
// at its end can be ordered by path without asking Bleve to sort by path.
const tieSlack = 16

// holdsAll reports whether some document in the request's scope holds every word. It
// asks for the first such document and no more: counting them all, with the ranking's
// phrases of neighbouring words beside, took as long as the search itself.
func (x *Index) holdsAll(ctx context.Context, r Request) (bool, error) {
	q := x.build(Query{Words: r.Query.Words, Phrases: r.Query.Phrases}, r.Folder, r.Scope, false)
	reader, ctx, err := x.reader(ctx)
	if err != nil {
		return false, err
	}
	defer reader.Close()
	s, err := q.Searcher(ctx, reader, x.idx.Mapping(), search.SearcherOptions{Score: "none"})
	if err != nil {
		return false, fmt.Errorf("search: %w", err)
	}
	defer s.Close()
	m, err := s.Next(&search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0)})
	if err != nil || ctx.Err() != nil {
		return false, errTooBroad()
	}
	return m != nil, nil
}

// reader opens a reader of the index's current snapshot, with the context Bleve's search
// gives its searchers over it: the index's scoring model and the field lengths it ranks
// by (see run).
func (x *Index) reader(ctx context.Context) (bindex.IndexReader, context.Context, error) {
	adv, err := x.idx.Advanced()
	if err != nil {
		return nil, ctx, fmt.Errorf("search: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, ctx, fmt.Errorf("search: %w", err)
	}
	docs, err := r.DocCount()
	if err != nil {
		_ = r.Close()
		return nil, ctx, fmt.Errorf("search: %w", err)
	}
	ctx = context.WithValue(ctx, search.GetScoringModelCallbackKey, search.GetScoringModelCallbackFn(func() string { return bindex.BM25Scoring }))
	if st := x.lengths.Load().bm25Stats(docs); st != nil {
		ctx = context.WithValue(ctx, search.BM25StatsKey, st)
	}
	return r, ctx, nil
}

// search runs one page; partial matches documents holding any of the words, ranked by
// how many they hold.
func (x *Index) search(ctx context.Context, r Request, after *cursor, partial bool) (Result, error) {
	if len(r.Query.Pairs) > 0 && rankNear {
		return x.searchNear(ctx, r, after, partial)
	}
	relaxed := partial
	q := x.build(r.Query, r.Folder, r.Scope, partial)
	if after == nil {
		// Sorting by score alone lets Bleve skip loading the path of every matching
		// document (for a word in every document, most of the time of a search); ties
		// are ordered by path here, which is exact unless they run past the hits asked for.
		var res Result
		var exact func(int) bool
		var err error
		res, exact, err = x.best(ctx, q, r.Limit, relaxed)
		if err != nil || exact(r.Limit) {
			return res.page(r.Limit), err
		}
	}
	res, _, err := x.run(ctx, q, r.Limit+1, after, relaxed, true)
	return res.page(r.Limit), err
}

// run asks Bleve for the best n hits, by score and then path; byPath has Bleve order the
// ties itself (and is needed to continue after a cursor). exact(limit) reports whether
// the first limit+1 hits are those an ordering by path would give.
func (x *Index) run(ctx context.Context, q bq.Query, n int, after *cursor, relaxed, byPath bool) (Result, func(int) bool, error) {
	bleveRuns.Add(1)
	req := bleve.NewSearchRequestOptions(q, n, 0, false)
	// BM25 with the mean length of each field (see lengths).
	if docs, err := x.idx.DocCount(); err == nil {
		if st := x.lengths.Load().bm25Stats(docs); st != nil {
			req.PreSearchData = map[string]any{search.BM25PreSearchDataKey: st}
		}
	}
	if byPath {
		req.SortBy([]string{"-_score", "_id"})
	}
	if after != nil {
		// Bleve compares the score of a score-sorted SearchAfter as a number parsed
		// from the string, and the id as it is.
		req.SetSearchAfter([]string{after.Score, after.Path})
	}
	sr, err := x.idx.SearchInContext(ctx, req)
	if errors.Is(err, context.DeadlineExceeded) || err == nil && ctx.Err() != nil {
		return Result{}, nil, errTooBroad()
	}
	if err != nil {
		return Result{}, nil, fmt.Errorf("search: %w", err)
	}
	res := Result{Total: sr.Total, Relaxed: relaxed}
	for _, h := range sr.Hits {
		if res.Hits, err = appendHit(res.Hits, h.ID, h.Score); err != nil {
			return Result{}, nil, err
		}
	}
	return res.ranked(n)
}

func errTooBroad() error {
	return fmt.Errorf("%w: it matched too much to rank within %v; add rarer words or a folder", ErrTooBroad, SearchTimeout)
}

func appendHit(hits []Hit, id string, score float64) ([]Hit, error) {
	k, err := events.ParseDocKey(id)
	if err != nil {
		return hits, fmt.Errorf("search: %w", err)
	}
	return append(hits, Hit{Path: k.Path, Session: k.Session, Score: score}), nil
}

// bleveRuns counts the searches run through Bleve's collector (tests).
var bleveRuns atomic.Int64

// collectDirect is whether one word's search, and a sentence's, are collected by
// collect (tests compare it with Bleve's collector).
var collectDirect = true

// plainTerms returns the terms of a query that is one word's alone, over every document:
// no other word, phrase or ranking words, no filter. Such a query is collected by
// collect rather than by Bleve.
func plainTerms(q bq.Query) *termsQuery {
	b, ok := q.(*bq.BooleanQuery)
	if !ok || b.Should != nil || b.MustNot != nil || b.Filter != nil {
		return nil
	}
	tq, _ := b.Must.(*termsQuery)
	return tq
}

// best finds the best documents of q for a page of limit hits — limit+1+tieSlack of them,
// or more when they tie — ordered by score and then path, as run does without a cursor;
// exact is run's. One word's query, and a sentence's, are collected directly (collect),
// others by Bleve.
func (x *Index) best(ctx context.Context, q bq.Query, limit int, relaxed bool) (Result, func(int) bool, error) {
	if collectDirect {
		if tq := plainTerms(q); tq != nil {
			return x.collect(ctx, tq, nil, limit, relaxed)
		}
		if tq, groups := plainSentence(q); tq != nil {
			return x.collect(ctx, tq, groups, limit, relaxed)
		}
	}
	return x.run(ctx, q, limit+1+tieSlack, nil, relaxed, false)
}

// collect finds the best documents of a word's terms, or of a sentence's (groups), for a
// page of limit hits, as run does, without Bleve's collector: that one takes a match,
// scored and pooled, of every document, to keep the best few; here a document that does
// not make the best costs a comparison, and most of those that cannot are skipped
// (termsSearcher.top). When the documents kept tie at the page's end beyond the slack
// kept for ties, every document of that score or more is collected again, so that the
// page's end is ordered by path among all of them.
func (x *Index) collect(ctx context.Context, q *termsQuery, groups *wordGroups, limit int, relaxed bool) (Result, func(int) bool, error) {
	r, ctx, err := x.reader(ctx)
	if err != nil {
		return Result{}, nil, err
	}
	defer r.Close()
	n := limit + 1 + tieSlack
	res, err := x.collectAbove(ctx, r, q, groups, n, math.Inf(-1), relaxed)
	if err != nil {
		return Result{}, nil, err
	}
	res, exact, err := res.ranked(n)
	if err != nil || exact(limit) || groups != nil && groups.all {
		return res, exact, err
	}
	// Ties at the page's end run past the documents kept: collect every document that
	// scores as much as hit limit or more (a score above the next lower number).
	floor := math.Nextafter(res.Hits[limit].Score, math.Inf(-1))
	if res, err = x.collectAbove(ctx, r, q, groups, math.MaxInt, floor, relaxed); err != nil {
		return Result{}, nil, err
	}
	res, _, err = res.ranked(len(res.Hits))
	return res, func(l int) bool { return l <= limit }, err
}

// collectAbove collects the best n documents of q that score above floor, in any order.
func (x *Index) collectAbove(ctx context.Context, r bindex.IndexReader, q *termsQuery, groups *wordGroups, n int, floor float64, relaxed bool) (Result, error) {
	s, err := q.Searcher(ctx, r, x.idx.Mapping(), search.SearcherOptions{})
	if err != nil {
		return Result{}, fmt.Errorf("search: %w", err)
	}
	defer s.Close()
	ts, ok := s.(*termsSearcher)
	if !ok {
		return Result{}, fmt.Errorf("search: the index reader is not scorch's (%T)", r)
	}
	if groups != nil {
		groups.sortGroups(ts.scores)
		ts.groups = groups
		ts.SetQueryNorm(groups.norm(ts.scores))
	}
	stop := func() error { return ctx.Err() }
	var best []scoredDoc
	var total uint64
	if groups != nil && groups.all {
		best, total, err = ts.topAll(n, stop)
	} else {
		best, total, err = ts.topAbove(n, floor, stop)
	}
	if ctx.Err() != nil {
		return Result{}, errTooBroad()
	}
	if err != nil {
		return Result{}, fmt.Errorf("search: %w", err)
	}
	res := Result{Total: total, Relaxed: relaxed}
	id := make(bindex.IndexInternalID, 8)
	for _, d := range best {
		binary.BigEndian.PutUint64(id, d.doc)
		ext, err := r.ExternalID(id)
		if err != nil {
			return Result{}, fmt.Errorf("search: %w", err)
		}
		if res.Hits, err = appendHit(res.Hits, ext, d.score); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// ranked orders the best n hits by score and then path, and says, for a page of limit
// hits, whether those are the first limit+1 an ordering by path of every match would give.
func (res Result) ranked(n int) (Result, func(int) bool, error) {
	slices.SortStableFunc(res.Hits, func(a, b Hit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		// As Bleve's "_id" orders them, so that the cursor continues where this left off.
		return strings.Compare(a.key().ID(), b.key().ID())
	})
	exact := func(limit int) bool {
		// Every hit left out scores at most the last one returned: if that is below
		// the score of hit limit+1, none of them can be among the first limit+1.
		return len(res.Hits) < n || limit >= len(res.Hits) || res.Hits[len(res.Hits)-1].Score < res.Hits[limit].Score
	}
	return res, exact, nil
}

// page cuts the hits to limit, noting whether more follow.
func (res Result) page(limit int) Result {
	if len(res.Hits) > limit {
		res.Hits = res.Hits[:limit]
		res.more = true
	}
	return res
}

// build turns a parsed query into Bleve's query tree, without ever using Bleve's query
// string syntax: every word is a term query on a field.
func (x *Index) build(q Query, folder string, scope *Scope, relaxed bool) bq.Query {
	var required []bq.Query
	for _, w := range q.Words {
		required = append(required, x.wordQuery(w, 1))
	}
	for _, p := range q.Phrases {
		required = append(required, x.phraseQuery(p))
	}
	// Each level of Bleve's searchers costs a call per matching document. A conjunction of
	// one query scores as that query (a sum of one score), so none is made: not around a
	// single word, and not around the required part (NewBooleanQuery would wrap it in
	// one). A filter that admits every document is left out too: a Boolean query of its
	// required part alone is then searched as that part.
	var must bq.Query
	switch {
	case relaxed:
		d := bq.NewDisjunctionQuery(required)
		d.SetMin(1)
		must = d
	case len(required) == 1:
		must = required[0]
	default:
		must = bq.NewConjunctionQuery(required)
	}
	top := &bq.BooleanQuery{Must: must}
	for _, w := range q.Optional {
		top.AddShould(x.wordQuery(w, 0.2))
	}
	for _, p := range q.Pairs {
		near := bq.NewPhraseQuery(p, fieldContent)
		near.SetBoost(boostNear)
		top.AddShould(near)
	}
	if !x.admitsAll(folder, scope) {
		top.AddFilter(scopeQuery(folder, scope))
	}
	return top
}

// admitsAll reports whether the scope of a search admits every document of the index: the
// whole tree, and the index holds no session's documents but those of the scope's session.
// Session documents whose removal is not yet merged away count as held.
func (x *Index) admitsAll(folder string, sc *Scope) bool {
	if sc == nil {
		sc = &Scope{Subtree: folder}
	}
	if sc.Subtree != "" {
		return false
	}
	d, err := x.idx.FieldDict(fieldSession)
	if err != nil {
		return false
	}
	defer d.Close()
	for {
		e, err := d.Next()
		if err != nil {
			return false
		}
		if e == nil {
			return true
		}
		if e.Term != treeSession && (sc.Session == "" || e.Term != sc.Session) {
			return false
		}
	}
}

// scopeQuery admits the documents a search covers: the tree below folder, or what a
// Scope says; session documents only by their session.
func scopeQuery(folder string, sc *Scope) bq.Query {
	if sc == nil {
		sc = &Scope{Subtree: folder}
	}
	var tree bq.Query = term(fieldSession, treeSession, 0)
	if sc.Subtree != "" {
		where := []bq.Query{term(fieldFolders, sc.Subtree, 0)}
		for _, d := range sc.DirectIn {
			where = append(where, term(fieldDir, dirKey(d), 0))
		}
		tree = bq.NewConjunctionQuery([]bq.Query{tree, bq.NewDisjunctionQuery(where)})
	}
	if sc.Session == "" {
		return tree
	}
	return bq.NewDisjunctionQuery([]bq.Query{tree, term(fieldSession, sc.Session, 0)})
}

func scopeKey(sc *Scope) string {
	if sc == nil {
		return ""
	}
	return "\x00" + sc.Session + "\x00" + sc.Subtree + "\x00" + strings.Join(sc.DirectIn, "\x00")
}

func term(field, t string, boost float64) bq.Query {
	q := bq.NewTermQuery(t)
	q.SetField(field)
	q.SetBoost(boost)
	return q
}

// wordQuery finds one folded word in the name or the content: the word itself, or another
// form of it (the indexed words of the same English stem), or, for a CJK word, a run of
// bigrams.
func (x *Index) wordQuery(w string, weight float64) bq.Query {
	var cs []termClause
	s := x.stem(w)
	for _, f := range rankedFields {
		t := w
		if f.stemmed && s != "" {
			t = s
		}
		cs = append(cs, termClause{f.name, t, weight * f.boost})
	}
	if s != "" {
		for _, form := range x.forms(fieldName, w, s) {
			cs = append(cs, termClause{fieldName, form, weight * boostName * boostForm})
		}
		// Other forms are looked for in the content only: the Markdown fields rank the
		// word itself, and each form searched there would cost a term look-up per field.
		for _, form := range x.forms(fieldContent, w, s) {
			cs = append(cs, termClause{fieldContent, form, weight * boostContent * boostForm})
		}
	}
	terms := newTermsQuery(cs, &x.saturations)
	if !text.HasCJK(w) {
		return terms
	}
	m := bq.NewMatchPhraseQuery(w)
	m.SetField(fieldContentCJK)
	m.Analyzer = analyzerCJK
	m.SetBoost(weight * boostContentCJK)
	return newSumQuery([]bq.Query{terms, m})
}

// forms returns the words of field other than w whose stem is s. A Porter stem is a
// prefix of its words, except that a final y may have become i ("happi" for happy), so
// the dictionary is scanned from the stem less a final i.
func (x *Index) forms(field, w, s string) []string {
	prefix := strings.TrimSuffix(s, "i")
	if len(prefix) < 2 {
		return nil
	}
	d, err := x.idx.FieldDictPrefix(field, []byte(prefix))
	if err != nil {
		return nil
	}
	defer d.Close()
	var out []string
	for n := 0; n < maxFormScan && len(out) < maxForms; n++ {
		e, err := d.Next()
		if err != nil || e == nil {
			break
		}
		if e.Term == w || len(e.Term) > len(s)+maxFormTail {
			continue
		}
		if x.stem(e.Term) == s {
			out = append(out, e.Term)
		}
	}
	return out
}

// phraseQuery finds words next to each other, in the name or the content.
func (x *Index) phraseQuery(p []string) bq.Query {
	name := bq.NewPhraseQuery(p, fieldName)
	name.SetBoost(boostName)
	content := bq.NewPhraseQuery(p, fieldContent)
	content.SetBoost(boostContent)
	qs := []bq.Query{name, content}
	joined := strings.Join(p, " ")
	if text.HasCJK(joined) {
		m := bq.NewMatchPhraseQuery(joined)
		m.SetField(fieldContentCJK)
		m.Analyzer = analyzerCJK
		m.SetBoost(boostContentCJK)
		qs = append(qs, m)
	}
	return newSumQuery(qs)
}

// stem returns the stemmed form of a folded word.
func (x *Index) stem(w string) string {
	a := x.idx.Mapping().AnalyzerNamed(analyzerStem)
	if a == nil {
		return ""
	}
	toks := a.Analyze([]byte(w))
	if len(toks) != 1 {
		return ""
	}
	return string(toks[0].Term)
}

// CursorAfter returns the cursor of the page that starts after hit h of this request's
// results, for a caller that shows fewer hits than it was given.
func (r Request) CursorAfter(h Hit, relaxed bool) string {
	return cursor{Key: fingerprint(r.Query, r.Folder+scopeKey(r.Scope)), Score: strconv.FormatFloat(h.Score, 'g', -1, 64),
		Path: h.key().ID(), Relaxed: relaxed, Past: h.past}.encode()
}

// Stem returns the stemmed form of a folded word, as searches expand it.
func (x *Index) Stem(w string) string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.idx == nil {
		return ""
	}
	return x.stem(w)
}
