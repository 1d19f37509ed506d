package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/mcpserver"
)

// rootsFix is the one line that names a folder for a client that offers none.
const rootsFix = `name the folder in the client's configuration: "args": ["--root", "/path/to/docs"] ` +
	`(the command line guide-mcp --root /path/to/docs)`

// rootsWait bounds the wait for the client's answer to roots/list.
const rootsWait = 30 * time.Second

// rootsID prefixes the ids of this process's own requests to the client, apart from the
// owner's.
const rootsID = "guide-roots-"

// serveRoots serves a stdio client that named no folder: it answers the handshake itself,
// asks the client for its roots (MCP roots/list), and serves the first one exactly as
// guide-mcp --root would, through the project's owner; when the client says its roots
// changed, it asks again and serves the new first root.
//
// A server may ask the client only once the handshake is over, so the answer to initialize
// cannot come from a project's owner: it comes from a server with the same tools, built
// here, and the owner's own answer to the replayed handshake is not the client's to see.
func (m *Main) serveRoots(ctx context.Context) error {
	close(m.Ready)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &rootsFront{m: m, out: &lineWriter{w: m.Stdout}, asks: make(chan struct{}, 1), fatal: make(chan error, 1),
		answers: map[string]chan json.RawMessage{}}
	f.template = (&mcpserver.Server{Index: &index.Index{}, Logger: m.Logger, ToolPrefix: m.Config.ToolPrefix,
		PageSize: m.Config.PageSize}).New()
	var wg sync.WaitGroup
	wg.Go(func() { f.resolve(ctx) })
	read := make(chan error, 1)
	go func() { read <- f.read(ctx) }()
	var err error
	select {
	case err = <-read:
		f.stop() // the root served ends its session with the owner
	case err = <-f.fatal:
	}
	cancel()
	wg.Wait()
	return err
}

// rootsFront is the client's end of a guide-mcp that learns its folder from the client.
type rootsFront struct {
	m        *Main
	out      *lineWriter
	template *server.MCPServer // answers the handshake and tools/list before a root is served
	asks     chan struct{}     // capacity 1: ask the client for its roots (again)
	fatal    chan error        // a served bridge stopped of itself

	mu       sync.Mutex // guards the fields below
	initReq  []byte     // the client's handshake, replayed to each project served
	initNote []byte
	initID   json.RawMessage
	roots    bool        // the client offers roots
	served   *rootBridge // nil while no root is served
	held     [][]byte    // the client's messages waiting for a root
	noRoot   string      // why no folder is served, once that is known; the client hears it
	answers  map[string]chan json.RawMessage
	next     int
	swap     sync.Mutex // one change of root at a time
}

// rootBridge is one root served: guide-mcp --root ROOT run in this process, fed the
// client's messages.
type rootBridge struct {
	root   string
	in     *lineQueue
	done   chan struct{}
	closed atomic.Bool // stopped by a change of root, not of itself
}

// read dispatches the client's messages until it closes its end.
func (f *rootsFront) read(ctx context.Context) error {
	m := f.m
	in := bufio.NewReaderSize(mcpserver.LimitLines(m.Stdin, m.Config.MaxBody, func() {
		m.Logger.Warn("refused a stdio message larger than --max-body", "max_bytes", m.Config.MaxBody)
	}), 1<<20)
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

// dispatch sends one client message where it belongs: to the root served, to this process
// (the handshake, answers to its own requests), or into the wait for a root.
func (f *rootsFront) dispatch(ctx context.Context, msg []byte) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Capabilities struct {
				Roots *struct{} `json:"roots"`
			} `json:"capabilities"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &head); err != nil {
		f.out.Send([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch head.Method {
	case "":
		var id string
		if json.Unmarshal(head.ID, &id) == nil {
			if ch, ok := f.answers[id]; ok {
				delete(f.answers, id)
				ch <- msg
				return
			}
		}
	case "initialize":
		f.initReq, f.initNote, f.initID = msg, nil, head.ID
		f.roots = head.Params.Capabilities.Roots != nil
		if f.served == nil {
			f.answerHere(ctx, msg)
			return
		}
	case "notifications/initialized":
		f.initNote = msg
		if f.served == nil {
			if f.roots {
				f.ask()
			} else {
				f.withoutRoot("guide-mcp has no folder to serve: this client offers no MCP roots; " + rootsFix)
			}
			return
		}
	case "notifications/roots/list_changed":
		f.ask()
		return
	case "server/discover":
		// The folder comes with the client's roots, which a server may ask for only in
		// the initialize handshake: the client falls back to it.
		if f.served == nil {
			f.fail(head.ID, mcp.METHOD_NOT_FOUND, "guide-mcp without --root learns its folder from the client's roots: use the initialize handshake")
			return
		}
	case "ping":
		if f.served == nil {
			f.out.Send(result(head.ID, mcp.EmptyResult{}))
			return
		}
	}
	switch {
	case f.served != nil:
		f.served.in.Push(msg)
	case f.noRoot != "":
		f.answerWithoutRoot(ctx, msg, head.ID, head.Method)
	default:
		f.held = append(f.held, msg)
	}
}

// ask has the client's roots asked for (again); f.mu is held.
func (f *rootsFront) ask() {
	select {
	case f.asks <- struct{}{}:
	default:
	}
}

// resolve asks the client for its roots whenever told to, and serves the first.
func (f *rootsFront) resolve(ctx context.Context) {
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
		if err != nil {
			f.withoutRootLocked(fmt.Sprintf("guide-mcp has no folder to serve: the client did not answer roots/list (%v); %s", err, rootsFix))
			continue
		}
		root, others := firstFolder(roots)
		if root == "" {
			f.withoutRootLocked(fmt.Sprintf("guide-mcp has no folder to serve: the client's roots name no local folder (%d roots); open a folder in the client, or %s", len(roots), rootsFix))
			continue
		}
		if len(others) > 0 {
			f.m.Logger.Warn("the client offers several roots; guide-mcp serves the first, the others are not served",
				"served", root, "not_served", others)
		}
		f.serve(ctx, root)
	}
}

// listRoots asks the client for its roots.
func (f *rootsFront) listRoots(ctx context.Context) ([]mcp.Root, error) {
	ch := make(chan json.RawMessage, 1)
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
	f.out.Send(mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": string(mcp.MethodListRoots)}))
	var answer json.RawMessage
	select {
	case answer = <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(rootsWait):
		return nil, fmt.Errorf("no answer within %s", rootsWait)
	}
	var r struct {
		Result *mcp.ListRootsResult `json:"result"`
		Error  *struct {
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

// firstFolder returns the canonical path of the first root that is a local folder, and
// the URIs of the roots after it.
func firstFolder(roots []mcp.Root) (root string, others []string) {
	for _, r := range roots {
		if root != "" {
			others = append(others, r.URI)
			continue
		}
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			continue
		}
		if st, err := os.Stat(u.Path); err == nil && st.IsDir() {
			root = datadir.Canonical(u.Path)
		}
	}
	return root, others
}

// serve serves root, in place of the root served before: that one's session ends once its
// calls in flight are answered, and the client hears that the resources changed.
func (f *rootsFront) serve(ctx context.Context, root string) {
	f.swap.Lock()
	defer f.swap.Unlock()
	f.mu.Lock()
	old := f.served
	if old != nil && old.root == root {
		f.mu.Unlock()
		return
	}
	f.served = nil // what comes meanwhile waits for the new root
	f.mu.Unlock()
	if old != nil {
		f.m.Logger.Info("the client's roots changed; serving the new first root", "root", root, "was", old.root)
		old.stop()
	}

	args := append([]string{"--root", root}, f.m.Args...)
	sub := &Main{Args: args, Logger: f.m.Logger.With("root", root)}
	if err := sub.ParseFlags(args); err != nil {
		f.withoutRootLocked(fmt.Sprintf("guide-mcp cannot serve the client's root %s: %v", root, err))
		return
	}
	b := &rootBridge{root: root, in: newLineQueue(), done: make(chan struct{})}
	f.mu.Lock()
	sub.Stdin, sub.Stdout = b.in, &handshakeFilter{out: f.out, id: f.initID, logger: sub.Logger}
	// The handshake again, for the owner; then what the client sent meanwhile, in order.
	b.in.Push(f.initReq)
	if f.initNote != nil {
		b.in.Push(f.initNote)
	}
	for _, msg := range f.held {
		b.in.Push(msg)
	}
	f.held, f.noRoot, f.served = nil, "", b
	f.mu.Unlock()
	f.m.Logger.Info("serving the client's root", "root", root, "project", sub.Config.Project)
	go func() {
		defer close(b.done)
		err := sub.Run(ctx)
		if cerr := sub.Close(); cerr != nil {
			sub.Logger.Error("closing", "err", cerr)
		}
		if !b.closed.Load() && ctx.Err() == nil {
			if err == nil {
				err = errors.New("the bridge to the project's owner stopped")
			}
			select {
			case f.fatal <- fmt.Errorf("serving %s: %w", root, err):
			default:
			}
		}
	}()
	if old != nil {
		f.out.Send([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`))
	}
}

// stop ends the root served, if any, once its calls in flight are answered.
func (f *rootsFront) stop() {
	f.mu.Lock()
	b := f.served
	f.served = nil
	f.mu.Unlock()
	if b != nil {
		b.stop()
	}
}

// stop ends the bridge: it reads what it was given, then the end of its input, and ends
// its session with the owner.
func (b *rootBridge) stop() {
	b.closed.Store(true)
	b.in.Close()
	<-b.done
}

// withoutRootLocked is withoutRoot from outside dispatch: it stops the root served.
func (f *rootsFront) withoutRootLocked(reason string) {
	f.swap.Lock()
	defer f.swap.Unlock()
	f.stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.withoutRoot(reason)
}

// withoutRoot records why no folder is served, says it on stderr, and answers the messages
// held for a root; f.mu is held.
func (f *rootsFront) withoutRoot(reason string) {
	f.noRoot = reason
	f.m.Logger.Error(reason)
	held := f.held
	f.held = nil
	for _, msg := range held {
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(msg, &head)
		f.answerWithoutRoot(context.Background(), msg, head.ID, head.Method)
	}
}

// answerWithoutRoot answers a request while no folder is served: the tools are listed, and
// each call says why nothing is served and how to name a folder; f.mu is held.
func (f *rootsFront) answerWithoutRoot(ctx context.Context, msg, id json.RawMessage, method string) {
	if id == nil || method == "" {
		return // a notification, or an answer to a request of a root no longer served
	}
	switch method {
	case string(mcp.MethodToolsList):
		f.answerHere(ctx, msg)
	case string(mcp.MethodToolsCall):
		f.out.Send(result(id, mcp.NewToolResultError(f.noRoot)))
	case string(mcp.MethodResourcesList):
		f.out.Send(result(id, mcp.ListResourcesResult{Resources: []mcp.Resource{}}))
	case string(mcp.MethodResourcesTemplatesList):
		f.out.Send(result(id, mcp.ListResourceTemplatesResult{ResourceTemplates: []mcp.ResourceTemplate{}}))
	case string(mcp.MethodPromptsList):
		f.out.Send(result(id, mcp.ListPromptsResult{Prompts: []mcp.Prompt{}}))
	case string(mcp.MethodSetLogLevel):
		f.out.Send(result(id, mcp.EmptyResult{}))
	default:
		f.fail(id, mcp.INTERNAL_ERROR, f.noRoot)
	}
}

// answerHere has the template server answer msg.
func (f *rootsFront) answerHere(ctx context.Context, msg []byte) {
	if r := f.template.HandleMessage(ctx, msg); r != nil {
		if b, err := json.Marshal(r); err == nil {
			f.out.Send(b)
		}
	}
}

// fail answers the request id with a JSON-RPC error.
func (f *rootsFront) fail(id json.RawMessage, code int, message string) {
	f.out.Send(mustJSON(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message}}))
}

// mustJSON marshals v, a message this process builds.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// result is the answer to the request id.
func result(id json.RawMessage, v any) []byte {
	return mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": v})
}

// lineWriter writes whole messages, one a line, from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Send writes msg and a newline.
func (l *lineWriter) Send(msg []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(bytes.Clone(msg), '\n'))
}

// handshakeFilter passes what a root's bridge writes to the client, but the owner's answer
// to the replayed initialize: the client had its answer.
type handshakeFilter struct {
	out     *lineWriter
	id      json.RawMessage
	logger  interface{ Error(string, ...any) }
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
		h.out.Send(line)
	}
}

// answerTo reports whether msg is the answer to the request id.
func answerTo(msg, id json.RawMessage) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" {
		return false
	}
	var a, b bytes.Buffer
	return json.Compact(&a, m.ID) == nil && json.Compact(&b, id) == nil && bytes.Equal(a.Bytes(), b.Bytes())
}

// lineQueue is a reader of the messages pushed to it, one a line: pushing never waits for
// the reader, so the client's messages are read on while an owner starts.
type lineQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    []byte
	closed bool
}

func newLineQueue() *lineQueue {
	q := &lineQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Push queues msg as one line.
func (q *lineQueue) Push(msg []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.buf = append(append(q.buf, msg...), '\n')
	q.cond.Signal()
}

// Close ends the queue: the reader reads what is queued, then io.EOF.
func (q *lineQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

func (q *lineQueue) Read(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.buf) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, q.buf)
	q.buf = q.buf[n:]
	if len(q.buf) == 0 {
		q.buf = nil
	}
	return n, nil
}
