package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RootsFix is the one line that names a folder for a client that offers none.
const RootsFix = `name the folder in the client's configuration: "args": ["--root", "/path/to/docs"] ` +
	`(the command line guide-mcp --root /path/to/docs)`

// DefaultRootsWait bounds the wait for the client's answer to roots/list.
const DefaultRootsWait = 30 * time.Second

// rootsID prefixes the ids of the front's own requests to the client, apart from the
// owner's.
const rootsID = "guide-roots-"

// JSON-RPC error codes the front answers with.
const (
	codeMethodNotFound = -32601
	codeInternal       = -32603
)

// Front serves a stdio client that named no folder: it answers the handshake itself, asks
// the client for its roots (MCP roots/list), and serves every root that is a local folder
// as guide-mcp --root would, each through its own project's owner. One folder is served
// as it is, its paths unchanged; several are one tree (see mux.go), each root's paths below
// its name. When the client says its roots changed, it asks again, and starts serving the
// new folders and ends the sessions on the folders no longer offered, leaving the others'.
//
// A server may ask the client only once the handshake is over, so the answer to initialize
// cannot come from a project's owner: Handshake gives it, and the owner's own answer to the
// handshake replayed to it is not the client's to see.
type Front struct {
	In     io.Reader // the client's messages, one a line
	Out    io.Writer
	Logger *slog.Logger
	// Handshake answers, in place of a project's server, the client's initialize and,
	// while no folder is served, tools/list.
	Handshake *Handshake
	// Serve serves the folder root to a client whose messages it reads from in and answers
	// on out, until in ends, as guide-mcp --root root would.
	Serve func(ctx context.Context, root string, in io.Reader, out io.Writer) error
	// RootsWait bounds the wait for the client's roots (DefaultRootsWait when zero).
	RootsWait time.Duration

	out   *lineWriter
	asks  chan struct{} // capacity 1: ask the client for its roots (again)
	fatal chan error    // a served root stopped of itself
	swap  sync.Mutex    // one change of roots at a time

	mu       sync.Mutex // guards the fields below
	initReq  []byte     // the client's handshake, replayed to each root served
	initNote []byte
	initID   json.RawMessage
	roots    bool          // the client offers roots
	mounts   []*rootServed // the roots served, in the client's order
	primary  *rootServed   // of several, the one that keeps the session's own documents
	held     [][]byte      // the client's messages waiting for a root
	noRoot   string        // why no folder is served, once known: every call answers it
	answers  map[string]chan []byte
	next     int
	calls    map[string]muxCall // the client's requests in flight to several roots, by id
	focus    string             // of several roots, the one in focus ("" for all)
	focusAt  string             // and the focus context, below its name
	history  []string           // of several roots, the earlier focus contexts
	// changesSub: of several roots, the client subscribed to guide://_changes, which each
	// root's updates of its own changes update too.
	changesSub bool
}

// rootServed is one root served, fed the client's messages.
type rootServed struct {
	root   string
	name   string // the first segment of its paths when several roots are served
	in     *lineQueue
	done   chan struct{}
	closed atomic.Bool // stopped by the front, not of itself
}

// Run serves until the client closes its end or ctx ends.
func (f *Front) Run(ctx context.Context) error {
	if f.Logger == nil {
		f.Logger = slog.Default()
	}
	if f.RootsWait == 0 {
		f.RootsWait = DefaultRootsWait
	}
	f.out = &lineWriter{w: f.Out}
	f.asks, f.fatal, f.answers = make(chan struct{}, 1), make(chan error, 1), map[string]chan []byte{}
	f.calls = map[string]muxCall{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { f.resolve(ctx) })
	read := make(chan error, 1)
	go func() { read <- f.read(ctx) }()
	var err error
	select {
	case err = <-read:
		f.swap.Lock()
		f.stop(f.served()...) // the roots served end their sessions with their owners
		f.swap.Unlock()
	case err = <-f.fatal:
	}
	cancel()
	wg.Wait()
	return err
}

// served is the roots served.
func (f *Front) served() []*rootServed {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mounts)
}

// read dispatches the client's messages until it closes its end.
func (f *Front) read(ctx context.Context) error {
	in := bufio.NewReaderSize(f.In, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			f.dispatch(ctx, msg)
		}
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// head is what the front reads of a message to know where it goes.
type head struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Capabilities struct {
			Roots *struct{} `json:"roots"`
		} `json:"capabilities"`
	} `json:"params"`
}

// dispatch sends one client message where it belongs: to the root served, to the front
// (the handshake, answers to its own requests, what spans several roots), or into the wait
// for a root.
func (f *Front) dispatch(ctx context.Context, msg []byte) {
	var h head
	if err := json.Unmarshal(msg, &h); err != nil {
		f.out.Send([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	serving := len(f.mounts) > 0
	switch h.Method {
	case "":
		var id string
		if json.Unmarshal(h.ID, &id) == nil {
			if ch, ok := f.answers[id]; ok {
				delete(f.answers, id)
				ch <- msg
				return
			}
		}
	case "initialize":
		f.initReq, f.initNote, f.initID = msg, nil, h.ID
		f.roots = h.Params.Capabilities.Roots != nil
		if !serving {
			f.out.Send(f.Handshake.Answer(ctx, msg))
			return
		}
	case "notifications/initialized":
		f.initNote = msg
		if !serving {
			if f.roots {
				f.ask()
			} else {
				f.withoutRoot("guide-mcp has no folder to serve: this client offers no MCP roots; " + RootsFix)
			}
			return
		}
	case "notifications/roots/list_changed":
		f.ask()
		return
	case "server/discover":
		// The folder comes with the client's roots, which a server may ask for only after
		// the initialize handshake: the client falls back to it.
		if !serving {
			f.fail(h.ID, codeMethodNotFound, "guide-mcp without --root learns its folder from the client's roots: use the initialize handshake")
			return
		}
	case "ping":
		if !serving {
			f.out.Send(result(h.ID, struct{}{}))
			return
		}
	}
	switch {
	case len(f.mounts) == 1:
		f.mounts[0].in.Push(msg)
	case serving:
		f.muxDispatch(ctx, msg, h.ID, h.Method)
	case f.noRoot != "":
		f.answerWithoutRoot(ctx, msg, h.ID, h.Method)
	default:
		f.held = append(f.held, msg)
	}
}

// ask has the client's roots asked for (again).
func (f *Front) ask() {
	select {
	case f.asks <- struct{}{}:
	default:
	}
}

// resolve asks the client for its roots whenever told to, and serves their folders.
func (f *Front) resolve(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.asks:
		}
		roots, err := f.listRoots(ctx)
		if ctx.Err() != nil {
			return
		}
		var reason string
		folders := Folders(roots)
		switch {
		case err != nil:
			reason = fmt.Sprintf("guide-mcp has no folder to serve: the client did not answer roots/list (%v); %s", err, RootsFix)
		case len(folders) == 0:
			reason = fmt.Sprintf("guide-mcp has no folder to serve: the client's roots name no local folder (%d roots); open a folder in the client, or %s", len(roots), RootsFix)
		}
		f.swap.Lock()
		if reason != "" {
			f.stop(f.served()...)
			f.mu.Lock()
			f.mounts, f.primary = nil, nil
			f.withoutRoot(reason)
			f.mu.Unlock()
		} else {
			f.serve(ctx, folders)
		}
		f.swap.Unlock()
	}
}

// Root is one of the client's roots.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// listRoots asks the client for its roots.
func (f *Front) listRoots(ctx context.Context) ([]Root, error) {
	ch := make(chan []byte, 1)
	f.mu.Lock()
	f.next++
	id := fmt.Sprintf("%s%d", rootsID, f.next)
	f.answers[id] = ch
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.answers, id)
		f.mu.Unlock()
	}()
	f.out.Send(mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "roots/list"}))
	var answer []byte
	select {
	case answer = <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(f.RootsWait):
		return nil, fmt.Errorf("no answer within %s", f.RootsWait)
	}
	var r struct {
		Result *struct {
			Roots []Root `json:"roots"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(answer, &r); err != nil {
		return nil, err
	}
	if r.Error != nil {
		return nil, errors.New(r.Error.Message)
	}
	if r.Result == nil {
		return nil, errors.New("an answer without a result")
	}
	return r.Result.Roots, nil
}

// FirstFolder returns the canonical path (absolute, symbolic links resolved) of the first
// root that is a local folder, and the URIs of the roots after it.
func FirstFolder(roots []Root) (root string, others []string) {
	for _, r := range roots {
		if root != "" {
			others = append(others, r.URI)
			continue
		}
		root = localFolder(r)
	}
	return root, others
}

// Folders returns the canonical paths of the roots that are local folders, in order, each
// once.
func Folders(roots []Root) []string {
	var out []string
	for _, r := range roots {
		if p := localFolder(r); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// localFolder is the canonical path of r if it is a local folder, else "".
func localFolder(r Root) string {
	u, err := url.Parse(r.URI)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) {
		return ""
	}
	real, err := filepath.EvalSymlinks(u.Path)
	if err != nil {
		return ""
	}
	if st, err := os.Stat(real); err == nil && st.IsDir() {
		return real
	}
	return ""
}

// rootName is the name of a root's folder as the first segment of its paths: its base
// name, then -2, -3… when another root served has it, or when it would read as something
// else (a session document, the status resource).
func rootName(root string, taken func(string) bool) string {
	base := filepath.Base(root)
	if base == "/" || base == "." || base == "" || strings.HasPrefix(base, sessionPrefix) {
		base = "root"
	}
	name := base
	for i := 2; taken(name) || name == statusName; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

// serve serves the folders, in this order: each already served keeps its session and its
// name; each new one is started, with the client's handshake replayed to its owner; each
// no longer among them ends its session once its calls in flight are answered. The
// client hears that the resources changed. f.swap is held.
func (f *Front) serve(ctx context.Context, folders []string) {
	f.mu.Lock()
	old := f.mounts
	var gone []*rootServed
	for _, s := range old {
		if !slices.Contains(folders, s.root) {
			gone = append(gone, s)
		}
	}
	f.mu.Unlock()
	if len(gone) > 0 {
		f.Logger.Info("the client's roots changed; no longer serving some", "roots", len(folders), "dropped", len(gone))
		f.stop(gone...)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	byRoot := map[string]*rootServed{}
	for _, s := range f.mounts {
		byRoot[s.root] = s
	}
	taken := func(name string) bool {
		for _, s := range byRoot {
			if s.name == name {
				return true
			}
		}
		return false
	}
	var mounts []*rootServed
	var started []*rootServed
	for _, root := range folders {
		s := byRoot[root]
		if s == nil {
			s = &rootServed{root: root, in: newLineQueue(), done: make(chan struct{})}
			s.name = rootName(root, taken)
			byRoot[root] = s
			// The handshake again, for the owner.
			s.in.Push(f.initReq)
			if f.initNote != nil {
				s.in.Push(f.initNote)
			}
			if f.changesSub {
				// The client hears of every root's changes, this one's too.
				f.next++
				id := fmt.Sprintf("%s%d", muxID, f.next)
				f.answers[id] = make(chan []byte, 1) // its answer is not awaited
				s.in.Push(mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "resources/subscribe",
					"params": map[string]any{"uri": changesURI}}))
			}
			started = append(started, s)
		}
		mounts = append(mounts, s)
	}
	changed := len(old) > 0 && (len(started) > 0 || len(gone) > 0)
	f.mounts = mounts
	if f.primary == nil || !slices.Contains(mounts, f.primary) {
		f.primary = mounts[0]
	}
	if f.focus != "" && !slices.ContainsFunc(mounts, func(s *rootServed) bool { return s.name == f.focus }) {
		f.focus = ""
	}
	f.noRoot = ""
	for _, s := range started {
		f.Logger.Info("serving the client's root", "root", s.root, "name", s.name)
		out := &handshakeFilter{id: f.initID, logger: f.Logger, pass: func(line []byte) { f.fromRoot(s, line) }}
		go func() {
			defer close(s.done)
			err := f.Serve(ctx, s.root, s.in, out)
			if !s.closed.Load() && ctx.Err() == nil {
				if err == nil {
					err = errors.New("stopped")
				}
				select {
				case f.fatal <- fmt.Errorf("serving %s: %w", s.root, err):
				default:
				}
			}
		}()
	}
	// What the client sent while no root was served, in order.
	held := f.held
	f.held = nil
	for _, msg := range held {
		if len(f.mounts) == 1 {
			f.mounts[0].in.Push(msg)
			continue
		}
		var h head
		_ = json.Unmarshal(msg, &h)
		f.muxDispatch(ctx, msg, h.ID, h.Method)
	}
	if changed {
		f.out.Send([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`))
	}
}

// stop ends the roots served given, once their calls in flight are answered. f.swap is
// held, f.mu not.
func (f *Front) stop(gone ...*rootServed) {
	if len(gone) == 0 {
		return
	}
	f.mu.Lock()
	f.mounts = slices.DeleteFunc(slices.Clone(f.mounts), func(s *rootServed) bool { return slices.Contains(gone, s) })
	if slices.Contains(gone, f.primary) {
		f.primary = nil
		if len(f.mounts) > 0 {
			f.primary = f.mounts[0]
		}
	}
	f.mu.Unlock()
	for _, s := range gone {
		s.closed.Store(true)
		s.in.Close() // read to its end, then the served root ends its session
	}
	for _, s := range gone {
		<-s.done
	}
}

// withoutRoot records why no folder is served, says it on stderr, and answers the messages
// held for a root. f.mu is held.
func (f *Front) withoutRoot(reason string) {
	f.noRoot = reason
	f.Logger.Error(reason)
	held := f.held
	f.held = nil
	for _, msg := range held {
		var h head
		_ = json.Unmarshal(msg, &h)
		f.answerWithoutRoot(context.Background(), msg, h.ID, h.Method)
	}
}

// answerWithoutRoot answers a request while no folder is served: the tools are listed, and
// each call says why nothing is served and how to name a folder. f.mu is held.
func (f *Front) answerWithoutRoot(ctx context.Context, msg, id json.RawMessage, method string) {
	if id == nil || method == "" {
		return // a notification, or an answer to a request of a root no longer served
	}
	empty := func(key string) []byte { return result(id, map[string]any{key: []any{}}) }
	switch method {
	case "tools/list":
		f.out.Send(f.Handshake.Answer(ctx, msg))
	case "tools/call":
		f.out.Send(result(id, map[string]any{"isError": true,
			"content": []any{map[string]any{"type": "text", "text": f.noRoot}}}))
	case "resources/list":
		f.out.Send(empty("resources"))
	case "resources/templates/list":
		f.out.Send(empty("resourceTemplates"))
	case "prompts/list":
		f.out.Send(empty("prompts"))
	case "logging/setLevel":
		f.out.Send(result(id, struct{}{}))
	default:
		f.fail(id, codeInternal, f.noRoot)
	}
}

// fail answers the request id with a JSON-RPC error.
func (f *Front) fail(id json.RawMessage, code int, message string) {
	f.out.Send(mustJSON(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message}}))
}

// handshakeFilter passes on what a served root writes, line by line, but the owner's
// answer to the replayed initialize: the client had its answer.
type handshakeFilter struct {
	id      json.RawMessage
	logger  *slog.Logger
	pass    func(line []byte)
	partial []byte
	dropped bool
}

func (h *handshakeFilter) Write(p []byte) (int, error) {
	h.partial = append(h.partial, p...)
	for {
		i := bytes.IndexByte(h.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := bytes.TrimSpace(h.partial[:i])
		h.partial = h.partial[i+1:]
		if len(line) == 0 {
			continue
		}
		if !h.dropped && answerTo(line, h.id) {
			h.dropped = true
			if bytes.Contains(line, []byte(`"error"`)) {
				h.logger.Error("the project's owner refused the handshake", "answer", string(line))
			}
			continue
		}
		h.pass(bytes.Clone(line))
	}
}
