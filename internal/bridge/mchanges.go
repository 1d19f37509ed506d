package bridge

// changes across several roots. Each root's owner answers from its own stream, with its own
// cursor; the front merges their answers by time and gives a cursor that carries every
// root's own. A root's part of a merged answer is always a whole answer of that root (its
// first documents, up to its cursor), never a part of one: where the merged answer keeps
// only some of a root's changes, the front asks that root again for just that many, so that
// the root's cursor covers exactly what was shown and the next page misses nothing.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

const (
	// changesPrefix starts a cursor of changes across several roots.
	changesPrefix = "changes:"
	// changesURI is the resource of the recent changes, guide://_changes.
	changesURI = "guide://_changes"
	// Defaults of changes, as the owner's server has them.
	defaultChangesLimit = 200
	maxChangesLimit     = 1000
	defaultChangesSince = 24 * time.Hour
	// changesBound bounds the changes of a merged answer, in bytes: an answer's default
	// bound (100,000 characters) less room for the rest of the answer.
	changesBound = 90_000
	// moreChanges starts the sentence of a root's message that gives its own cursor for the
	// rest; a merged answer says it with the merged cursor instead.
	moreChanges = "More changes follow:"
)

// changesCursor is where a merged changes answer ends in every root.
type changesCursor struct {
	// At is when the cursor was made: a root it does not name (added since) starts there.
	At    time.Time              `json:"t"`
	Roots map[string]changePlace `json:"r"`
}

// changePlace is where one root stands: its own cursor, or, when it has not answered
// yet, the time its changes start at.
type changePlace struct {
	Cursor string    `json:"c,omitempty"`
	Since  time.Time `json:"s,omitzero"`
}

func encodeChangesCursor(c changesCursor) string {
	b, _ := json.Marshal(c)
	return changesPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func decodeChangesCursor(s string) (changesCursor, bool) {
	var c changesCursor
	rest, ok := strings.CutPrefix(s, changesPrefix)
	if !ok {
		return c, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Roots == nil || c.At.IsZero() {
		return c, false
	}
	for _, p := range c.Roots {
		if p.Cursor == "" && p.Since.IsZero() {
			return c, false
		}
	}
	return c, true
}

// badChangesCursor is the failure of a cursor that is not one of a merged changes answer.
func badChangesCursor(c string) *object {
	return toolFailure("invalid_argument", fmt.Sprintf("cursor %q is not one changes gave in this workspace", c),
		"Pass the cursor of a previous changes answer as it is, or call changes with since instead.")
}

// sinceTime is the time a since argument names, as of now; false when it names none.
func sinceTime(s string, now time.Time) (time.Time, bool) {
	switch s {
	case "":
		return now.Add(-defaultChangesSince), true
	case "now":
		return now, true
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), true
	}
	return time.Time{}, false
}

// placeArgs sets a root's cursor, or since, in args.
func placeArgs(args *object, p changePlace) *object {
	args.del("cursor")
	args.del("since")
	if p.Cursor != "" {
		return args.set("cursor", p.Cursor)
	}
	return args.set("since", p.Since.UTC().Format(time.RFC3339Nano))
}

// placeOf is where a root stands in a merged cursor: its own place, or the cursor's time
// for a root served since.
func (c changesCursor) placeOf(name string) changePlace {
	if p, ok := c.Roots[name]; ok {
		return p
	}
	return changePlace{Since: c.At}
}

// rewriteChanges makes a root's changes answer the client's: its paths (rewrite), and the
// path a moved document came from and the paths of its diffs, below the root's name.
func (r *muxRequest) rewriteChanges(o *object, s *rootServed) {
	for _, c := range o.list("changes") {
		c, ok := c.(*object)
		if !ok {
			continue
		}
		p := c.str("path")
		if from := c.str("from"); from != "" {
			c.set("from", under(s.name, from))
		}
		if d := c.str("diff"); d != "" {
			d = strings.Replace(d, "--- a/"+p+"\n", "--- a/"+under(s.name, p)+"\n", 1)
			c.set("diff", strings.Replace(d, "+++ b/"+p+"\n", "+++ b/"+under(s.name, p)+"\n", 1))
		}
		if n := c.str("diff_note"); n != "" {
			c.set("diff_note", strings.ReplaceAll(n, fmt.Sprintf("%q", p), fmt.Sprintf("%q", under(s.name, p))))
		}
	}
	r.rewrite(o, s)
}

// changes answers changes: with a folder, that root's answer; without, every root's,
// merged by time.
func (r *muxRequest) changes(ctx context.Context, name string, args *object) toolAnswer {
	cursor := args.str("cursor")
	if folder := args.str("folder"); folder != "" {
		s, rest, fail := r.route(folder)
		if fail != nil {
			return toolAnswer{v: fail, isError: true}
		}
		if strings.HasPrefix(cursor, changesPrefix) {
			// A cursor of every root: its place in this one.
			c, ok := decodeChangesCursor(cursor)
			if !ok {
				return toolAnswer{v: badChangesCursor(cursor), isError: true}
			}
			placeArgs(args, c.placeOf(s.name))
		}
		args.set("folder", rest)
		a := r.callTool(ctx, s, name, args)
		if !a.isError {
			r.rewriteChanges(a.obj(), s)
		}
		return a
	}
	limit := defaultChangesLimit
	if args.has("limit") {
		limit = args.int("limit")
	}
	if limit < 1 || limit > maxChangesLimit || cursor != "" && args.str("since") != "" {
		return r.callTool(ctx, r.primary, name, args) // the owner says what is wrong
	}
	now := time.Now()
	var cur changesCursor
	first := cursor == ""
	if first {
		since, ok := sinceTime(args.str("since"), now)
		if !ok {
			return r.callTool(ctx, r.primary, name, args) // the owner says what is wrong
		}
		cur = changesCursor{At: since, Roots: map[string]changePlace{}}
	} else {
		var ok bool
		if cur, ok = decodeChangesCursor(cursor); !ok {
			return toolAnswer{v: badChangesCursor(cursor), isError: true}
		}
	}

	// Each root's answer from its place; a root's answer cut to the changes the merged
	// answer keeps of it.
	parts := make([]*changesPart, len(r.mounts))
	ask := func(p *changesPart, n int) {
		a := args.clone().set("limit", n)
		switch {
		case p.from != "":
			placeArgs(a, changePlace{Cursor: p.from}) // the same start as its first answer
		case first:
			a.del("cursor") // the since the client gave, which each root reads as it
		default:
			placeArgs(a, p.place)
		}
		p.a = r.callTool(ctx, p.s, name, a)
		p.changes, p.failed = nil, p.a.isError
		if p.failed {
			return
		}
		o := p.a.obj()
		if p.from == "" {
			p.from = o.str("from")
		}
		r.rewriteChanges(o, p.s)
		for _, c := range o.list("changes") {
			if c, ok := c.(*object); ok {
				p.changes = append(p.changes, c)
			}
		}
	}
	r.each(r.mounts, func(i int, s *rootServed) {
		p := &changesPart{s: s, place: cur.placeOf(s.name)}
		parts[i] = p
		ask(p, limit)
	})
	var notes []string
	for _, p := range parts {
		if !p.failed {
			continue
		}
		if t := p.a.errorType(); t != "io_error" && t != "unknown" {
			return p.a // the arguments are wrong for every root alike
		}
		notes = append(notes, fmt.Sprintf("the changes of the root %s are missing (%s); the cursor keeps its place, call again for them",
			p.s.name, p.a.obj().str("error")))
	}
	merged := mergeChanges(parts, limit, changesBound)
	for round := 0; ; round++ {
		// A root of which only some changes are kept answers again for just those.
		var again []*changesPart
		for _, p := range parts {
			if p.taken > 0 && p.taken < len(p.changes) {
				again = append(again, p)
			}
		}
		if len(again) == 0 {
			break
		}
		if round == 4 {
			// Still cut: those roots are left out of this page, their places kept.
			for _, p := range again {
				p.changes, p.left = nil, true
			}
			merged = mergeChanges(parts, limit, changesBound)
			break
		}
		done := make(chan struct{})
		for _, p := range again {
			go func() { defer func() { done <- struct{}{} }(); ask(p, p.taken) }()
		}
		for range again {
			<-done
		}
		for _, p := range again {
			if p.failed {
				// It answered the first time: it is left out of this page, its place
				// kept, rather than the answer failing.
				p.failed, p.changes, p.left = false, nil, true
			}
		}
		merged = mergeChanges(parts, limit, changesBound)
	}

	next := changesCursor{At: now, Roots: map[string]changePlace{}}
	from := changesCursor{At: now, Roots: map[string]changePlace{}}
	for k, p := range cur.Roots {
		next.Roots[k], from.Roots[k] = p, p // roots not served now keep their place
	}
	complete := true
	var messages, partials []string
	var kept, beforeUnknown int
	for _, p := range parts {
		start := p.place
		if p.from != "" {
			start = changePlace{Cursor: p.from}
		}
		from.Roots[p.s.name] = start
		if p.failed {
			next.Roots[p.s.name] = start
			continue
		}
		o := p.a.obj()
		if !p.left && p.taken == len(p.changes) && o.str("cursor") != "" {
			next.Roots[p.s.name] = changePlace{Cursor: o.str("cursor")}
			complete = complete && o.boolean("complete")
		} else {
			next.Roots[p.s.name] = start // left out of this page: it starts there next time
			complete = false
		}
		if p.left {
			continue
		}
		if k := o.int("history_kept"); k > 0 && (kept == 0 || k < kept) {
			kept = k
		}
		beforeUnknown += countBeforeUnknown(p.changes[:p.taken])
		if m := o.str("message"); m != "" && p.taken > 0 {
			if i := strings.Index(m, moreChanges); i >= 0 {
				m = strings.TrimSpace(m[:i])
			}
			if m != "" {
				messages = append(messages, p.s.name+": "+m)
			}
		}
		if part := o.obj("partial"); part != nil {
			partials = append(partials, p.s.name+": "+part.str("note"))
		}
	}
	changes := make([]any, len(merged))
	for i, c := range merged {
		changes[i] = c
	}
	fromCursor := cursor
	if first {
		fromCursor = encodeChangesCursor(from)
	}
	nextCursor := encodeChangesCursor(next)
	out := newObject().set("cursor", nextCursor).set("from", fromCursor).set("complete", complete).
		set("count", len(changes)).set("changes", changes).set("history_kept", kept)
	if beforeUnknown > 0 {
		out.set("before_unknown", beforeUnknown)
	}
	if !complete {
		messages = append(messages, fmt.Sprintf("%s call changes again with cursor %q.", moreChanges, nextCursor))
	}
	if len(messages) > 0 {
		out.set("message", strings.Join(messages, " "))
	}
	if len(notes) > 0 || len(partials) > 0 {
		out.set("partial", newObject().set("note", strings.Join(append(notes, partials...), "; ")))
	}
	return toolAnswer{v: out}
}

// changesPart is one root's part of a merged changes answer.
type changesPart struct {
	s       *rootServed
	place   changePlace // where the cursor had it
	from    string      // the root's own cursor its first answer started at
	a       toolAnswer
	changes []*object
	taken   int  // how many of changes the merged answer keeps
	failed  bool // it did not answer
	left    bool // left out of this page, its place kept
}

// mergeChanges merges the roots' changes, each root's in its own order, the oldest head
// first (a tie goes to the earlier root), up to limit changes and bound bytes (but at least
// one), and sets how many of each root's are kept.
func mergeChanges(parts []*changesPart, limit, bound int) []*object {
	timeOf := func(c *object) time.Time { t, _ := time.Parse(time.RFC3339Nano, c.str("time")); return t }
	for _, p := range parts {
		p.taken = 0
	}
	var merged []*object
	used := 0
	for len(merged) < limit {
		var next *changesPart
		for _, p := range parts {
			if p.taken < len(p.changes) && (next == nil || timeOf(p.changes[p.taken]).Before(timeOf(next.changes[next.taken]))) {
				next = p
			}
		}
		if next == nil {
			break
		}
		c := next.changes[next.taken]
		size := len(encode(c)) + 1
		if len(merged) > 0 && used+size > bound {
			break
		}
		used += size
		merged = append(merged, c)
		next.taken++
	}
	return merged
}

func countBeforeUnknown(changes []*object) int {
	n := 0
	for _, c := range changes {
		if c.boolean("before_unknown") {
			n++
		}
	}
	return n
}

// readChanges answers a read of guide://_changes: the changes of every root, as the tool
// without arguments.
func (r *muxRequest) readChanges(ctx context.Context, uri string) (any, error) {
	a := r.changes(ctx, r.f.Handshake.ToolPrefix+"changes", newObject())
	if a.isError {
		return nil, &rpcError{raw: mustJSON(map[string]any{"code": -32603, "message": a.obj().str("error")})}
	}
	text := encode(a.v)
	var b bytes.Buffer
	if json.Indent(&b, text, "", "  ") == nil {
		text = b.Bytes()
	}
	return newObject().set("contents", []any{newObject().set("uri", uri).set("mimeType", "application/json").
		set("text", string(text))}), nil
}
