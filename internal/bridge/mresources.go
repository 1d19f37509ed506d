package bridge

// The resources, completion and the prompt of a tree of several roots.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

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
		"Every path starts with a root's name (%s/…); view(\"\") lists them, and search and changes cover all of them unless given a folder. "+
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

// resource answers resources/read, subscribe and unsubscribe: guide://_status sums every
// root's status; guide://{root}/… is that root's guide://….
func (r *muxRequest) resource(ctx context.Context, params *object) (any, error) {
	uri := params.str("uri")
	if uri == "guide://"+statusName && r.method == "resources/read" {
		return r.status(ctx, uri)
	}
	if uri == changesURI {
		if r.method == "resources/read" {
			return r.readChanges(ctx, uri)
		}
		// Subscribing to every root's changes: each root's updates are passed on as this one's.
		r.f.mu.Lock()
		r.f.changesSub = r.method == "resources/subscribe"
		r.f.mu.Unlock()
		var first error
		r.each(r.mounts, func(_ int, s *rootServed) {
			if _, err := r.call(ctx, s, r.method, params); err != nil && s == r.primary {
				first = err
			}
		})
		return newObject(), first
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
