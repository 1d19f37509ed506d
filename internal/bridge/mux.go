package bridge

// Several roots as one tree. Each root is its own project with its own owner, reached by
// its own Bridge under its own MCP session; the front routes each call by the first
// segment of its path (the root's name) and rewrites the paths of the answer below it, and
// answers what spans every root from each root's answer: view("") and tree("") list the
// roots, search merges their hits by rank, list concatenates their documents, the status
// resource sums theirs. The session's attached documents live with one root (the primary:
// the first root, as long as it is served), so that they are listed and found once.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// muxID prefixes the ids of the front's requests to the roots' owners.
const muxID = "guide-mux-"

// statusName is the status resource's name, guide://_status, which no root takes.
const statusName = "_status"

// Defaults of the tools' arguments, as the owner's server has them.
const (
	defaultDepth       = 2
	defaultSearchLimit = 20
	maxSearchLimit     = 100
	defaultListLimit   = 100
	maxListLimit       = 500
	maxHistory         = 20
	// treeBound bounds a tree of every root, in bytes: each root's tree is bounded to
	// half an answer (the default 100,000 characters), as tree("") of one root is.
	treeBound = 50_000
)

// muxRoute is one request the front sent a root for a client's request.
type muxRoute struct {
	s  *rootServed
	id string
}

// muxCall is the requests sent for one of the client's, to pass on its cancellation.
type muxCall []muxRoute

// fromRoot passes on what a root's owner sends: the answers to the front's requests to
// their callers, the rest to the client, with a resource's URI below the root's name
// when several roots are served.
func (f *Front) fromRoot(s *rootServed, line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(line, &m)
	f.mu.Lock()
	var id string
	if m.Method == "" && json.Unmarshal(m.ID, &id) == nil && strings.HasPrefix(id, muxID) {
		if ch, ok := f.answers[id]; ok {
			delete(f.answers, id)
			f.mu.Unlock()
			ch <- line
			return
		}
	}
	several := len(f.mounts) > 1
	f.mu.Unlock()
	if several && m.Method == "notifications/resources/updated" {
		if o, err := parseObject(line); err == nil {
			if p := o.obj("params"); p != nil {
				p.set("uri", clientURI(s.name, p.str("uri")))
				line = encode(o)
			}
		}
	}
	f.out.Send(line)
}

// clientURI is a root's guide:// URI as the client sees it: below the root's name.
func clientURI(name, uri string) string {
	if rest, ok := strings.CutPrefix(uri, "guide://"); ok {
		return "guide://" + name + "/" + rest
	}
	return uri
}

// muxDispatch sends a client's message where it belongs when several roots are served.
// f.mu is held: it never waits.
func (f *Front) muxDispatch(ctx context.Context, msg, id json.RawMessage, method string) {
	mounts, primary := slices.Clone(f.mounts), f.primary
	switch {
	case method == "":
		// An answer to an owner's own request (owners of these projects ask none today).
		primary.in.Push(msg)
	case id == nil:
		if method == "notifications/cancelled" {
			var n struct {
				Params struct {
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			_ = json.Unmarshal(msg, &n)
			for _, r := range f.calls[idKey(n.Params.RequestID)] {
				r.s.in.Push(mustJSON(map[string]any{"jsonrpc": "2.0", "method": method,
					"params": map[string]any{"requestId": r.id}}))
			}
			return
		}
		for _, s := range mounts {
			s.in.Push(msg)
		}
	default:
		r := &muxRequest{f: f, id: id, key: idKey(id), method: method, mounts: mounts, primary: primary,
			focus: f.focus}
		go r.serve(ctx, msg)
	}
}

// idKey is a request id as a map key.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// muxRequest is one of the client's requests, answered from several roots.
type muxRequest struct {
	f       *Front
	id      json.RawMessage
	key     string
	method  string
	mounts  []*rootServed // the roots served when it came
	primary *rootServed
	focus   string
	meta    any // the request's _meta, passed on
}

// rpcError is a JSON-RPC error, passed on as the owner wrote it.
type rpcError struct {
	raw     json.RawMessage
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

// call sends a request to a root's owner and returns its result.
func (r *muxRequest) call(ctx context.Context, s *rootServed, method string, params any) (json.RawMessage, error) {
	f := r.f
	ch := make(chan []byte, 1)
	f.mu.Lock()
	f.next++
	id := fmt.Sprintf("%s%d", muxID, f.next)
	f.answers[id] = ch
	f.calls[r.key] = append(f.calls[r.key], muxRoute{s: s, id: id})
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.answers, id)
		routes := slices.DeleteFunc(f.calls[r.key], func(x muxRoute) bool { return x.id == id })
		if len(routes) == 0 {
			delete(f.calls, r.key)
		} else {
			f.calls[r.key] = routes
		}
		f.mu.Unlock()
	}()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	s.in.Push(encode(toValue(msg)))
	var answer []byte
	select {
	case answer = <-ch:
	case <-s.done:
		return nil, fmt.Errorf("the root %s is no longer served", s.name)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, err
	}
	if a.Error != nil {
		e := &rpcError{raw: a.Error}
		_ = json.Unmarshal(a.Error, e)
		return nil, e
	}
	return a.Result, nil
}

// toValue turns a map built here into a value encode writes (its keys sorted).
func toValue(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o := newObject()
	for _, k := range keys {
		o.set(k, toValue(m[k]))
	}
	return o
}

// reply answers the client's request with result, or with the error err.
func (r *muxRequest) reply(result any, err error) {
	if err != nil {
		var e *rpcError
		if errors.As(err, &e) && e.raw != nil {
			r.f.out.Send(mustJSON(map[string]any{"jsonrpc": "2.0", "id": r.id, "error": e.raw}))
			return
		}
		r.f.fail(r.id, codeInternal, "guide: "+err.Error())
		return
	}
	o := newObject().set("jsonrpc", "2.0").set("id", json.RawMessage(r.id)).set("result", result)
	r.f.out.Send(encode(o))
}

// serve answers the request.
func (r *muxRequest) serve(ctx context.Context, msg []byte) {
	o, err := parseObject(msg)
	if err != nil {
		r.reply(nil, err)
		return
	}
	params := o.obj("params")
	if params == nil {
		params = newObject()
	}
	r.meta = params.get("_meta")
	switch r.method {
	case "ping":
		r.reply(newObject(), nil)
	case "tools/call":
		r.reply(r.tool(ctx, params), nil)
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		r.reply(r.resource(ctx, params))
	case "resources/templates/list":
		r.reply(r.templates(ctx, params))
	case "completion/complete":
		r.reply(r.complete(ctx, params))
	case "logging/setLevel":
		var first error
		r.each(r.mounts, func(_ int, s *rootServed) {
			if _, err := r.call(ctx, s, r.method, params); err != nil && s == r.primary {
				first = err
			}
		})
		r.reply(newObject(), first)
	case "prompts/get":
		r.reply(r.prompt(ctx, params))
	default: // tools/list, resources/list, prompts/list: the same for every root
		res, err := r.call(ctx, r.primary, r.method, params)
		r.reply(json.RawMessage(res), err)
	}
}

// prompt answers prompts/get with the primary root's prompt, and what the assistant must
// know of a tree of several roots.
func (r *muxRequest) prompt(ctx context.Context, params *object) (any, error) {
	res, err := r.call(ctx, r.primary, r.method, params)
	if err != nil {
		return nil, err
	}
	o, err := parseObject(res)
	if err != nil {
		return json.RawMessage(res), nil
	}
	note := fmt.Sprintf("\n\nThis workspace has several roots, each a folder at the top of one tree: %s. "+
		"Every path starts with a root's name (%s/…); view(\"\") lists them, and search covers all of them unless given a folder. "+
		"The contexts above are those of the root %s, with paths within it.", r.names(), r.mounts[0].name, r.primary.name)
	for _, m := range o.list("messages") {
		if m, ok := m.(*object); !ok {
			continue
		} else if c := m.obj("content"); c != nil && c.str("type") == "text" {
			c.set("text", c.str("text")+note)
			break
		}
	}
	return o, nil
}

// each runs fn for every root of roots at once, and returns when all have.
func (r *muxRequest) each(roots []*rootServed, fn func(i int, s *rootServed)) {
	var wg sync.WaitGroup
	for i, s := range roots {
		wg.Go(func() { fn(i, s) })
	}
	wg.Wait()
}

// named is the root served under name, or nil.
func (r *muxRequest) named(name string) *rootServed {
	for _, s := range r.mounts {
		if s.name == name {
			return s
		}
	}
	return nil
}

func (r *muxRequest) names() string {
	var n []string
	for _, s := range r.mounts {
		n = append(n, s.name)
	}
	return strings.Join(n, ", ")
}

// toolFailure is a tool's failure answer, as the owner's server writes one.
func toolFailure(errorType, message, instruction string) *object {
	return newObject().set("success", false).set("error_type", errorType).set("error", message).
		set("instruction", instruction)
}

// route finds the root of a client's path, and the path within it: its first segment is
// the root's name; a session document is the primary's.
func (r *muxRequest) route(p string) (*rootServed, string, *object) {
	if strings.HasPrefix(p, sessionPrefix) {
		return r.primary, p, nil
	}
	first, rest, _ := strings.Cut(p, "/")
	if s := r.named(first); s != nil {
		return s, rest, nil
	}
	if strings.HasPrefix(p, "/") || first == ".." || first == "." || strings.ContainsAny(p, "\x00\\") {
		return nil, "", toolFailure("invalid_path", fmt.Sprintf("%q is not a path of the workspace: paths start with a root's name (%s), without '..'", p, r.names()),
			"Use a path that starts with a root's name, as shown by tree(\"\") or view(\"\").")
	}
	return nil, "", toolFailure("not_found", fmt.Sprintf("no root %q: this workspace has several roots, and each path starts with one's name: %s", first, r.names()),
		"Call tree(\"\") to see the roots, then use a path that starts with one of their names.")
}

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

// toolAnswer is a tool's answer: its text as JSON when it is, and whether it failed.
type toolAnswer struct {
	v       any // *object, or the text when not JSON
	isError bool
}

func (a toolAnswer) obj() *object {
	o, _ := a.v.(*object)
	if o == nil {
		o = newObject()
	}
	return o
}

// errorType is a failed answer's error_type.
func (a toolAnswer) errorType() string {
	if !a.isError {
		return ""
	}
	return a.obj().str("error_type")
}

// callTool calls tool on a root's owner with args; a root that does not answer is a
// failed answer.
func (r *muxRequest) callTool(ctx context.Context, s *rootServed, name string, args *object) toolAnswer {
	p := newObject().set("name", name).set("arguments", args)
	if r.meta != nil {
		p.set("_meta", r.meta)
	}
	res, err := r.call(ctx, s, "tools/call", p)
	if err != nil {
		return toolAnswer{v: toolFailure("io_error", fmt.Sprintf("the root %s did not answer: %v", s.name, err),
			"Present this error to the user; retrying later may succeed."), isError: true}
	}
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &out); err != nil || len(out.Content) == 0 {
		return toolAnswer{v: string(res), isError: out.IsError}
	}
	v, err := parseJSON([]byte(out.Content[0].Text))
	if err != nil {
		return toolAnswer{v: out.Content[0].Text, isError: out.IsError}
	}
	return toolAnswer{v: v, isError: out.IsError}
}

// result is the MCP result of a tool's answer.
func (a toolAnswer) result() *object {
	text, ok := a.v.(string)
	if !ok {
		text = string(encode(a.v))
	}
	o := newObject().set("content", []any{newObject().set("type", "text").set("text", text)})
	if a.isError {
		o.set("isError", true)
	}
	return o
}

// routed calls tool on the root of the path in args[key], with the path within it, and
// answers with the paths below the root's name.
func (r *muxRequest) routed(ctx context.Context, name, key string, args *object) toolAnswer {
	s, rest, fail := r.route(args.str(key))
	if fail != nil {
		return toolAnswer{v: fail, isError: true}
	}
	args.set(key, rest)
	a := r.callTool(ctx, s, name, args)
	if !a.isError {
		r.rewrite(a.v, s)
	}
	return a
}

// tool answers a tools/call.
func (r *muxRequest) tool(ctx context.Context, params *object) *object {
	name := params.str("name")
	args := params.obj("arguments")
	if args == nil {
		args = newObject()
	}
	switch strings.TrimPrefix(name, r.f.Handshake.ToolPrefix) {
	case "view":
		if args.str("path") == "" {
			return r.viewRoots(ctx, name, args).result()
		}
		return r.routed(ctx, name, "path", args).result()
	case "get_summary", "analyze":
		return r.routed(ctx, name, "path", args).result()
	case "tree":
		if args.str("folder") == "" {
			return r.treeRoots(ctx, name, args).result()
		}
		return r.routed(ctx, name, "folder", args).result()
	case "search":
		if args.str("folder") == "" {
			return r.search(ctx, name, args).result()
		}
		return r.routed(ctx, name, "folder", args).result()
	case "list":
		if args.str("folder") == "" {
			return r.list(ctx, name, args).result()
		}
		return r.routed(ctx, name, "folder", args).result()
	case "focus":
		return r.setFocus(ctx, name, args).result()
	case "get_content", "get_category_content", "get_collection_content":
		return r.content(ctx, name, args).result()
	default: // attach, detach: the session's documents live with the primary root
		return r.callTool(ctx, r.primary, name, args).result()
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

func (o *object) clone() *object {
	c := newObject()
	for _, k := range o.keys {
		c.set(k, o.vals[k])
	}
	return c
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

// resource answers resources/read, subscribe and unsubscribe: guide://_status sums every
// root's status; guide://{root}/… is that root's guide://….
func (r *muxRequest) resource(ctx context.Context, params *object) (any, error) {
	uri := params.str("uri")
	if uri == "guide://"+statusName && r.method == "resources/read" {
		return r.status(ctx, uri)
	}
	rest, ok := strings.CutPrefix(uri, "guide://")
	first, within, _ := strings.Cut(rest, "/")
	s := r.named(first)
	if !ok || s == nil || within == "" {
		if uri == "guide://"+statusName {
			return newObject(), nil // subscribing to the status: nothing to route
		}
		return nil, &rpcError{raw: mustJSON(map[string]any{"code": -32602,
			"message": fmt.Sprintf("no resource %s: this workspace has several roots (%s); name one first, as guide://{root}/{collection}", uri, r.names())})}
	}
	p := params.clone().set("uri", "guide://"+within)
	res, err := r.call(ctx, s, r.method, p)
	if err != nil || r.method != "resources/read" {
		return json.RawMessage(res), err
	}
	o, err := parseObject(res)
	if err != nil {
		return json.RawMessage(res), nil
	}
	for _, c := range o.list("contents") {
		if c, ok := c.(*object); ok {
			c.set("uri", clientURI(s.name, c.str("uri")))
		}
	}
	return o, nil
}

// status answers guide://_status: every root's status, and what they add up to.
func (r *muxRequest) status(ctx context.Context, uri string) (any, error) {
	states := make([]*object, len(r.mounts))
	errs := make([]error, len(r.mounts))
	r.each(r.mounts, func(i int, s *rootServed) {
		res, err := r.call(ctx, s, "resources/read", newObject().set("uri", "guide://"+statusName))
		if err != nil {
			errs[i] = err
			return
		}
		var c struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(res, &c); err != nil || len(c.Contents) == 0 {
			errs[i] = fmt.Errorf("the root %s answered no status", s.name)
			return
		}
		states[i], errs[i] = parseObject([]byte(c.Contents[0].Text))
	})
	var docs, lag int
	scanned, caughtUp := true, true
	roots := []any{}
	for i, s := range r.mounts {
		st := states[i]
		if errs[i] != nil {
			st = newObject().set("stream_error", errs[i].Error())
			scanned, caughtUp = false, false
		}
		docs += st.int("documents")
		lag += st.int("lag")
		scanned = scanned && st.boolean("initial_scan_done")
		caughtUp = caughtUp && st.boolean("caught_up")
		e := newObject().set("name", s.name).set("root", s.root)
		for _, k := range st.keys {
			e.set(k, st.get(k))
		}
		roots = append(roots, e)
	}
	o := newObject().set("documents", docs).set("lag", lag).set("initial_scan_done", scanned).
		set("caught_up", caughtUp).set("roots", roots)
	text := string(encode(o))
	return newObject().set("contents", []any{newObject().set("uri", uri).set("mimeType", "application/json").
		set("text", text)}), nil
}

// templates answers resources/templates/list: the roots' templates, below a root's name.
func (r *muxRequest) templates(ctx context.Context, params *object) (any, error) {
	res, err := r.call(ctx, r.primary, r.method, params)
	if err != nil {
		return nil, err
	}
	o, err := parseObject(res)
	if err != nil {
		return json.RawMessage(res), nil
	}
	for _, t := range o.list("resourceTemplates") {
		if t, ok := t.(*object); ok {
			if rest, ok := strings.CutPrefix(t.str("uriTemplate"), "guide://"); ok {
				t.set("uriTemplate", "guide://{root}/"+rest)
			}
		}
	}
	return o, nil
}

// complete answers completion/complete: a root's name, or what every root (or the root
// named) completes.
func (r *muxRequest) complete(ctx context.Context, params *object) (any, error) {
	ref, arg := params.obj("ref"), params.obj("argument")
	var root string
	if c := params.obj("context"); c != nil {
		if a := c.obj("arguments"); a != nil {
			root = a.str("root")
		}
	}
	values := []any{}
	if ref != nil && strings.Contains(ref.str("uri"), "{root}") {
		if arg != nil && arg.str("name") == "root" {
			for _, s := range r.mounts {
				if strings.HasPrefix(strings.ToLower(s.name), strings.ToLower(arg.str("value"))) {
					values = append(values, s.name)
				}
			}
			return newObject().set("completion", newObject().set("values", values).set("total", len(values))), nil
		}
		ref = ref.clone().set("uri", strings.Replace(ref.str("uri"), "{root}/", "", 1))
		params = params.clone().set("ref", ref)
	}
	roots := r.mounts
	if s := r.named(root); s != nil {
		roots = []*rootServed{s}
	}
	answers := make([]json.RawMessage, len(roots))
	errs := make([]error, len(roots))
	r.each(roots, func(i int, s *rootServed) { answers[i], errs[i] = r.call(ctx, s, r.method, params) })
	seen := map[string]bool{}
	for i := range roots {
		if errs[i] != nil {
			return nil, errs[i]
		}
		var c struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		_ = json.Unmarshal(answers[i], &c)
		for _, v := range c.Completion.Values {
			if !seen[v] {
				seen[v] = true
				values = append(values, v)
			}
		}
	}
	sort.Slice(values, func(i, j int) bool { return values[i].(string) < values[j].(string) })
	out := newObject().set("total", len(values))
	if len(values) > 100 {
		values = values[:100]
		out.set("hasMore", true)
	}
	return newObject().set("completion", out.set("values", values)), nil
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
