package bridge

// The tools of a tree of several roots that answer from more than one root, and the focus.

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// inFocusTypes are the origins of a document in the focus set of its root.
var inFocusTypes = map[string]bool{"focus": true, "ancestor": true, "descendant": true}

// outside reports whether s is a root outside the session's focus, which is in another.
func (r *muxRequest) outside(s *rootServed) bool { return r.focus != "" && s.name != r.focus }

// rewrite makes a root's answer the client's: its paths below the root's name and, in a
// root outside the focus, its documents outside the focus too, whatever the root's owner
// holds as the focus of its own session.
func (r *muxRequest) rewrite(v any, s *rootServed) {
	prefixPaths(v, s.name)
	if r.outside(s) {
		outsideFocus(v)
	}
}

// outsideFocus marks every document of an answer that its root put in the focus as other.
func outsideFocus(v any) {
	switch x := v.(type) {
	case *object:
		if x.boolean("in_focus") && inFocusTypes[x.str("context_type")] {
			x.set("context_type", "other").set("in_focus", false)
		}
		for _, k := range x.keys {
			outsideFocus(x.vals[k])
		}
	case []any:
		for _, e := range x {
			outsideFocus(e)
		}
	}
}

// viewRoots answers view(""): the roots, as the folders of the top.
func (r *muxRequest) viewRoots(ctx context.Context, name string, args *object) toolAnswer {
	answers := make([]toolAnswer, len(r.mounts))
	r.each(r.mounts, func(i int, s *rootServed) {
		answers[i] = r.callTool(ctx, s, name, newObject().set("path", ""))
	})
	var docs, words int
	folders := []any{}
	for i, s := range r.mounts {
		a := answers[i]
		if a.isError {
			return a
		}
		o := a.obj()
		docs += o.int("total_documents")
		words += o.int("total_words")
		folders = append(folders, newObject().set("name", s.name).set("path", s.name).
			set("total_documents", o.int("total_documents")).set("total_words", o.int("total_words")))
	}
	if off := args.int("offset"); off > 0 {
		folders = folders[min(off, len(folders)):]
	}
	return toolAnswer{v: newObject().set("type", "folder").set("path", "").set("name", "").
		set("total_documents", docs).set("total_words", words).set("folders", folders).set("documents", []any{})}
}

// treeRoots answers tree(""): the roots at the first level, each root's tree below.
func (r *muxRequest) treeRoots(ctx context.Context, name string, args *object) toolAnswer {
	depth := defaultDepth
	if args.has("depth") {
		depth = args.int("depth")
	}
	answers := make([]toolAnswer, len(r.mounts))
	r.each(r.mounts, func(i int, s *rootServed) {
		a := newObject().set("folder", "").set("depth", max(depth-1, 1))
		if depth < 1 || depth > 5 {
			a.set("depth", depth) // the owner says what is wrong with it
		}
		answers[i] = r.callTool(ctx, s, name, a)
	})
	var docs, words, entries int
	var truncated bool
	var messages []string
	children := []any{}
	for i, s := range r.mounts {
		a := answers[i]
		if a.isError {
			return a
		}
		o := a.obj()
		prefixPaths(o, s.name)
		docs += o.int("documents")
		words += o.int("words")
		entries += o.int("entries") + 1
		if o.boolean("truncated") {
			truncated = true
		}
		if m := o.str("message"); m != "" {
			messages = append(messages, s.name+": "+m)
		}
		for _, k := range []string{"depth", "entries", "truncated", "message"} {
			o.del(k)
		}
		if depth == 1 {
			o.del("children")
		}
		children = append(children, o)
	}
	out := newObject().set("type", "folder").set("name", "").set("path", "").set("words", words).
		set("documents", docs).set("children", children).set("depth", depth).set("entries", entries)
	// Each root's tree fits an answer; together they may not: the last roots' go first.
	for i := len(children) - 1; i >= 0 && len(encode(out)) > treeBound; i-- {
		if c := children[i].(*object); c.has("children") {
			c.del("children")
			truncated = true
			messages = append(messages, fmt.Sprintf("%s: its tree is left out, the answer being full; call tree(%q) for it", c.str("name"), c.str("name")))
		}
	}
	if truncated {
		out.set("truncated", true)
	}
	if len(messages) > 0 {
		out.set("message", strings.Join(messages, "; "))
	}
	return toolAnswer{v: out}
}

// focusTargets are the roots a call scoped to the session's focus reads: every root, or
// the one in focus and the primary (for the session's documents alone).
func (r *muxRequest) focusTargets(args *object) (roots []*rootServed, sessionOnly *rootServed) {
	if args.str("scope") == "all" || r.focus == "" {
		return r.mounts, nil
	}
	s := r.named(r.focus)
	if s == nil {
		return r.mounts, nil
	}
	if s == r.primary {
		return []*rootServed{s}, nil
	}
	return []*rootServed{s, r.primary}, r.primary
}

// list answers list with no folder: each root's documents after the previous root's, a
// page of them at offset.
func (r *muxRequest) list(ctx context.Context, name string, args *object) toolAnswer {
	offset, limit := args.int("offset"), defaultListLimit
	if args.has("limit") {
		limit = args.int("limit")
	}
	if offset < 0 || limit < 1 || limit > maxListLimit {
		return r.callTool(ctx, r.primary, name, args) // the owner says what is wrong
	}
	roots, sessionOnly := r.focusTargets(args)
	docs := []any{}
	counts := newObject()
	var total int
	var stopped bool
	var first *object
	before := 0
	for _, s := range roots {
		a := args.clone()
		a.set("offset", max(0, offset-before)).set("limit", max(1, min(limit-len(docs), maxListLimit)))
		if s == sessionOnly {
			if t := args.str("context_type"); t != "" && t != "session" {
				continue
			}
			a.set("context_type", "session")
		}
		ans := r.callTool(ctx, s, name, a)
		if ans.isError && a.int("offset") > 0 && ans.errorType() == "invalid_argument" {
			// The page starts past this root's documents: only its counts are wanted.
			ans = r.callTool(ctx, s, name, a.set("offset", 0).set("limit", 1))
			if o := ans.obj(); !ans.isError {
				o.set("documents", []any{})
			}
		}
		if ans.isError {
			return ans
		}
		o := ans.obj()
		r.rewrite(o, s)
		if first == nil {
			first = o
		}
		n := o.int("total")
		total += n
		if c := o.obj("counts"); c != nil {
			for _, k := range c.keys {
				to := k
				if r.outside(s) && inFocusTypes[k] {
					to = "other"
				}
				counts.set(to, counts.int(to)+c.int(k))
			}
		}
		if offset < before+n && len(docs) < limit && !stopped {
			for _, d := range o.list("documents") {
				if len(docs) < limit {
					docs = append(docs, d)
				}
			}
			// A root that gave fewer than asked, and has more (the answer's size bound),
			// ends the page: the next starts within it.
			stopped = len(docs) < limit && o.has("next_offset")
		}
		before += n
	}
	out := newObject()
	if first != nil {
		out.set("focus", r.focusPath(first.str("focus"))).set("scope", first.str("scope"))
	}
	out.set("total", total).set("counts", counts).set("offset", offset).set("documents", docs)
	if next := offset + len(docs); next < total {
		out.set("next_offset", next).set("truncated", true).set("message",
			fmt.Sprintf("showing %d to %d of %d documents; call list with offset %d for more, or narrow it with context_type, status or folder",
				offset+1, next, total, next))
	}
	return toolAnswer{v: out}
}

// focusPath is the session's focus as the client sees it: "" for every root, else the
// focus within the root in focus (below the root's name already).
func (r *muxRequest) focusPath(rootFocus string) string {
	if r.focus == "" {
		return ""
	}
	return rootFocus
}

// setFocus answers focus: "" focuses every root on its top; a path, the one root it names
// (the others' documents are then outside the focus, as another folder's are).
func (r *muxRequest) setFocus(ctx context.Context, name string, args *object) toolAnswer {
	raw := args.str("context")
	var focusRoot string
	var a toolAnswer
	if raw == "" {
		answers := make([]toolAnswer, len(r.mounts))
		r.each(r.mounts, func(i int, s *rootServed) {
			answers[i] = r.callTool(ctx, s, name, newObject().set("context", ""))
		})
		counts := newObject()
		var docs int
		for _, x := range answers {
			if x.isError {
				return x
			}
			if c := x.obj().obj("counts"); c != nil {
				for _, k := range c.keys {
					counts.set(k, counts.int(k)+c.int(k))
				}
			}
			docs += x.obj().int("documents")
		}
		a = toolAnswer{v: newObject().set("focus", "").set("focus_type", "root").set("history", []any{}).
			set("counts", counts).set("documents", docs)}
	} else {
		s, rest, fail := r.route(raw)
		if fail != nil {
			return toolAnswer{v: fail, isError: true}
		}
		if strings.HasPrefix(raw, sessionPrefix) {
			return r.callTool(ctx, s, name, args) // the owner refuses a session document
		}
		a = r.callTool(ctx, s, name, newObject().set("context", rest))
		if a.isError {
			return a
		}
		prefixPaths(a.v, s.name)
		focusRoot = s.name
		o := a.obj()
		o.set("focus_type", "folder")
		if s != r.primary {
			// The session's own documents, which the primary root keeps, stay available.
			l := r.callTool(ctx, r.primary, r.f.Handshake.ToolPrefix+"list",
				newObject().set("context_type", "session").set("limit", 1))
			if n := l.obj().int("total"); !l.isError && n > 0 {
				c := o.obj("counts")
				if c == nil {
					c = newObject()
					o.set("counts", c)
				}
				c.set("session", c.int("session")+n)
				o.set("documents", o.int("documents")+n)
			}
		}
	}
	// The history is the workspace's: the earlier focus contexts, most recent first.
	f := r.f
	focus := a.obj().str("focus")
	f.mu.Lock()
	if last := f.focusContext(); last != focus {
		f.history = append([]string{last}, slices.DeleteFunc(f.history, func(h string) bool { return h == last || h == focus })...)
		if len(f.history) > maxHistory {
			f.history = f.history[:maxHistory]
		}
	}
	f.focus = focusRoot
	f.focusAt = focus
	history := []any{}
	for _, h := range f.history {
		history = append(history, h)
	}
	f.mu.Unlock()
	a.obj().set("history", history)
	return a
}

// focusContext is the session's focus in the workspace. f.mu is held.
func (f *Front) focusContext() string {
	if f.focus == "" {
		return ""
	}
	return f.focusAt
}

// content answers the content tools: a name that starts with a root's name is that root's
// category or collection; another is the first root's that has it.
func (r *muxRequest) content(ctx context.Context, name string, args *object) toolAnswer {
	key := "category_or_collection"
	switch {
	case args.has("category"):
		key = "category"
	case args.has("collection"):
		key = "collection"
	}
	first, rest, ok := strings.Cut(args.str(key), "/")
	if s := r.named(first); s != nil && ok {
		args.set(key, rest)
		return r.callTool(ctx, s, name, args)
	}
	var a toolAnswer
	for _, s := range r.mounts {
		a = r.callTool(ctx, s, name, args.clone())
		if t := a.errorType(); t != "not_found" {
			return a
		}
	}
	return a
}
