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
	several, whole := len(f.mounts) > 1, f.changesSub
	f.mu.Unlock()
	if several && m.Method == "notifications/resources/updated" {
		if o, err := parseObject(line); err == nil {
			if p := o.obj("params"); p != nil {
				uri := p.str("uri")
				if uri == changesURI && whole {
					// The changes of every root changed too.
					f.out.Send(line)
				}
				p.set("uri", clientURI(s.name, uri))
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
	case "changes":
		return r.changes(ctx, name, args).result()
	case "attach", "detach": // the session's documents live with the primary root
		return r.callTool(ctx, r.primary, name, args).result()
	default:
		// A tool not known here: by its path or folder when it has one, else the primary
		// root's answer, its paths below the root's name.
		for _, key := range []string{"path", "folder"} {
			if args.str(key) != "" {
				return r.routed(ctx, name, key, args).result()
			}
		}
		a := r.callTool(ctx, r.primary, name, args)
		if !a.isError {
			r.rewrite(a.v, r.primary)
		}
		return a.result()
	}
}
