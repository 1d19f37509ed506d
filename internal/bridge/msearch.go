package bridge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A search across several roots asks each root's owner for its best hits and merges them
// by rank, not by score: the scores of separate indexes are not comparable (BM25 weighs a
// word by how rare it is in its own index, so the same document scores differently in a
// small folder and in a large one). The merged order takes every root's first hit, then
// every root's second, and so on (reciprocal rank fusion, with one list per root); hits
// of the same rank come in order of score. Where one root holds every word of the query
// and another only some (a relaxed or corrected search), only the exact roots' hits are
// kept, as one index over all of them would.

// hitsBound bounds the hits of a merged page, in bytes: an answer's default bound
// (100,000 characters) less room for the rest of the answer.
const hitsBound = 90_000

// searchCursor is where a merged search stands in each root: the root's cursor and how
// many of the hits after it were already shown.
type searchCursor struct {
	Query   string                `json:"q"`
	Total   int                   `json:"t"`
	Session string                `json:"s,omitempty"` // the root searched for session documents only
	Roots   map[string]*rootPlace `json:"r"`
}

type rootPlace struct {
	Cursor string `json:"c,omitempty"`
	Skip   int    `json:"k,omitempty"`
	Rank   int    `json:"n,omitempty"` // hits of the root shown before: the next one's rank
	Done   bool   `json:"d,omitempty"`
}

// rootPage is one root's page of hits for a merged search.
type rootPage struct {
	s      *rootServed
	place  *rootPlace
	a      toolAnswer
	hits   []any // the page's hits, from the place's cursor
	cands  []int // the indexes in hits that may be shown
	taken  int   // how many of cands were shown
	failed bool
}

// search answers search with no folder: every root's hits, merged by rank.
func (r *muxRequest) search(ctx context.Context, name string, args *object) toolAnswer {
	limit := defaultSearchLimit
	if args.has("limit") {
		limit = args.int("limit")
	}
	if limit < 1 || limit > maxSearchLimit || strings.TrimSpace(args.str("query")) == "" {
		return r.callTool(ctx, r.primary, name, args) // the owner says what is wrong
	}
	query := args.str("query")
	roots, sessionOnly := r.focusTargets(args)
	first := args.str("cursor") == ""
	var cur searchCursor
	if first {
		cur = searchCursor{Query: query, Roots: map[string]*rootPlace{}}
		for _, s := range roots {
			cur.Roots[s.name] = &rootPlace{}
		}
		if sessionOnly != nil {
			cur.Session = sessionOnly.name
		}
	} else {
		var ok bool
		if cur, ok = decodeCursor(args.str("cursor")); !ok || cur.Query != query {
			return toolAnswer{v: toolFailure("invalid_argument", "the cursor is not valid for this query: pass the next_cursor of a search with the same query and folder",
				"Correct the argument as the error says and call the tool again."), isError: true}
		}
		roots = nil
		for _, s := range r.mounts {
			if p := cur.Roots[s.name]; p != nil && !p.Done {
				roots = append(roots, s)
			}
		}
		sessionOnly = r.named(cur.Session)
	}
	pages := make([]*rootPage, len(roots))
	r.each(roots, func(i int, s *rootServed) {
		p := &rootPage{s: s, place: cur.Roots[s.name]}
		pages[i] = p
		a := args.clone().set("limit", min(maxSearchLimit, p.place.Skip+limit))
		a.del("cursor")
		if p.place.Cursor != "" {
			a.set("cursor", p.place.Cursor)
		}
		p.a = r.callTool(ctx, s, name, a)
		if p.a.isError {
			p.failed = true
			return
		}
		p.hits = p.a.obj().list("hits")
		for j := p.place.Skip; j < len(p.hits); j++ {
			h, _ := p.hits[j].(*object)
			if h == nil || s == sessionOnly && h.str("context_type") != "session" {
				continue
			}
			p.cands = append(p.cands, j)
		}
	})
	var notes []string
	for _, p := range pages {
		if !p.failed {
			continue
		}
		if t := p.a.errorType(); t != "io_error" && t != "unknown" {
			return p.a // the query is wrong for every root alike
		}
		notes = append(notes, fmt.Sprintf("the root %s was not searched (%s)", p.s.name, p.a.obj().str("error")))
	}
	exact := func(p *rootPage) bool {
		o := p.a.obj()
		return len(p.hits) > 0 && !o.boolean("relaxed") && o.str("did_you_mean") == ""
	}
	if first && slices.ContainsFunc(pages, func(p *rootPage) bool { return !p.failed && exact(p) }) {
		for _, p := range pages {
			if !p.failed && !exact(p) {
				p.place.Done, p.cands = true, nil
			}
		}
	}
	live := slices.DeleteFunc(slices.Clone(pages), func(p *rootPage) bool { return p.failed || p.place.Done })
	if first {
		for _, p := range live {
			if p.s != sessionOnly {
				cur.Total += p.a.obj().int("total")
			} else {
				cur.Total += len(p.cands)
			}
		}
	}

	// Rank by rank: every root's k-th hit, best score first, before any root's k+1-th; a
	// page goes on where the previous one stopped, so that pages read as one long page.
	hits := []any{}
	used, full := 0, false
	more := func(p *rootPage) bool { return p.a.obj().str("next_cursor") != "" }
	k := -1
	for _, p := range live {
		if len(p.cands) > 0 && (k < 0 || p.place.Rank < k) {
			k = p.place.Rank
		}
	}
	for ; k >= 0 && len(hits) < limit; k++ {
		var tier []*rootPage
		short := false
		for _, p := range live {
			switch j := k - p.place.Rank; {
			case j < 0:
			case j < len(p.cands):
				tier = append(tier, p)
			case len(p.cands) > 0 && more(p):
				short = true // its next hits may rank in this tier: the page ends before it
			}
		}
		if short || len(tier) == 0 {
			break
		}
		at := func(p *rootPage) *object { return p.hits[p.cands[k-p.place.Rank]].(*object) }
		slices.SortStableFunc(tier, func(a, b *rootPage) int {
			sa, sb := at(a).num("score"), at(b).num("score")
			switch {
			case sa > sb:
				return -1
			case sa < sb:
				return 1
			}
			return 0
		})
		for _, p := range tier {
			if len(hits) == limit || full {
				break
			}
			h := at(p)
			r.rewrite(h, p.s)
			// Each root's page fits an answer; hits of several may not: the page ends
			// before the hit that would pass the bound, and the next starts with it.
			size := len(encode(h)) + 1
			if len(hits) > 0 && used+size > hitsBound {
				full = true
				break
			}
			used += size
			hits = append(hits, h)
			p.taken++
		}
		if full {
			break
		}
	}
	out := newObject().set("query", query).set("folder", "").set("total", cur.Total).set("hits", hits)
	next := false
	var searchable, documents int
	var partialNotes, messages []string
	var corrections []any
	var relaxed, truncated bool
	var didYouMean string
	for _, p := range live {
		o := p.a.obj()
		consumed := p.place.Skip
		if p.taken > 0 {
			consumed = p.cands[p.taken-1] + 1
		}
		if p.taken == len(p.cands) {
			consumed = len(p.hits)
		}
		p.place.Rank += p.taken
		switch {
		case consumed < len(p.hits):
			p.place.Skip = consumed
		case more(p):
			p.place.Cursor, p.place.Skip = o.str("next_cursor"), 0
		default:
			p.place.Done = true
		}
		next = next || !p.place.Done
		relaxed = relaxed || o.boolean("relaxed")
		truncated = truncated || o.boolean("truncated")
		if didYouMean == "" {
			didYouMean = o.str("did_you_mean")
		}
		corrections = append(corrections, o.list("corrections")...)
		if m := o.str("message"); m != "" {
			messages = append(messages, p.s.name+": "+m)
		}
		if part := o.obj("partial"); part != nil {
			searchable += part.int("searchable")
			documents += part.int("documents")
			partialNotes = append(partialNotes, p.s.name+": "+part.str("note"))
		}
	}
	if next {
		out.set("next_cursor", encodeCursor(cur))
	}
	if truncated || full {
		out.set("truncated", true)
	}
	if full {
		messages = append(messages, "the page ends early, its hits filling an answer; pass next_cursor for the rest")
	}
	if relaxed {
		out.set("relaxed", true)
	}
	if didYouMean != "" {
		out.set("did_you_mean", didYouMean)
	}
	if len(corrections) > 0 {
		out.set("corrections", corrections)
	}
	if len(messages) > 0 {
		out.set("message", strings.Join(messages, "; "))
	}
	if len(partialNotes) > 0 || len(notes) > 0 {
		out.set("partial", newObject().set("searchable", searchable).set("documents", documents).
			set("note", strings.Join(append(notes, partialNotes...), "; ")))
	}
	return toolAnswer{v: out}
}

// encodeCursor and decodeCursor carry a merged search's place in every root.
func encodeCursor(c searchCursor) string {
	b, _ := json.Marshal(c)
	return "roots:" + base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (searchCursor, bool) {
	var c searchCursor
	rest, ok := strings.CutPrefix(s, "roots:")
	if !ok {
		return c, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Roots == nil {
		return c, false
	}
	return c, true
}
