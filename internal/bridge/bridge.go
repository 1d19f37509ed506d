// Package bridge is a second client's way to a project's owner: guide-mcp over stdio,
// for a client that did not start the owner, copies its JSON-RPC to the owner's unix socket
// (Bridge), learning the folders from the client's MCP roots when it names none (Front,
// which answers the handshake itself with a Handshake, and serves several roots as one
// tree through one Bridge each: mux.go). Command is the bridge's command
// line, which guide-mcp hands to the small guide-bridge binary it replaces itself with.
//
// It imports only the standard library and this module's small packages (owner, datadir,
// lineio): the bridge binary links it, and each client pays for what it links.
package bridge

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guide/guide/internal/owner"
)

// DefaultElection bounds how long a bridge waits for an owner to answer: enough for one to
// start and open its store, however many bridges race to start it.
const DefaultElection = 30 * time.Second

// DefaultCallWait bounds how long a bridge waits for the owner's answer to one message:
// an owner that is stopped (SIGSTOP) or wedged accepts connections and never answers.
const DefaultCallWait = time.Minute

// restartAfter is how long a bridge leaves an owner it started to take the lock before it
// starts another: a start that lost the race exits, and the winner answers well within it.
const restartAfter = time.Second

// Bridge copies an MCP client's JSON-RPC messages between stdio and the project's owner,
// which serves Streamable HTTP on its unix socket, under one MCP session of its own. When
// the owner goes away it elects another (starting one, or finding the one that won the
// lock), and resends the request in flight under the same session id, so the client sees
// no error.
type Bridge struct {
	Dir    string       // the project's data directory
	Start  func() error // starts an owner daemon on Dir, detached from this process
	In     io.Reader
	Out    io.Writer
	Logger *slog.Logger
	// Election bounds the wait for an owner (DefaultElection when zero).
	Election time.Duration
	// CallWait bounds the wait for the owner's answer to one message (DefaultCallWait when
	// zero); past it the call fails and says why.
	CallWait time.Duration

	client  *http.Client
	polled  func()        // tests: called each time an election looks for the owner
	restart time.Duration // tests: restartAfter
	outMu   sync.Mutex
	electMu sync.Mutex

	mu       sync.Mutex // guards the fields below
	session  string     // the owner's Mcp-Session-Id, kept across owners
	protocol string     // the protocol version the client and server agreed on
	initReq  []byte     // the client's initialize request and notification, replayed to
	initNote []byte     // an owner that no longer knows the session
}

// errOwnerGone means the owner did not answer, or stopped answering mid-response.
var errOwnerGone = errors.New("the owner went away")

// errSessionGone means the owner does not know the bridge's session.
var errSessionGone = errors.New("the owner does not know the session")

// Run bridges until the client closes its end or ctx ends.
func (b *Bridge) Run(ctx context.Context) error {
	if b.Logger == nil {
		b.Logger = slog.Default()
	}
	if b.Election == 0 {
		b.Election = DefaultElection
	}
	if b.CallWait == 0 {
		b.CallWait = DefaultCallWait
	}
	sock := owner.Socket(b.Dir)
	b.client = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 16,
	}}
	if err := b.elect(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { b.attach(ctx) })
	defer wg.Wait() // after cancel, which ends the attachment
	defer cancel()

	var listening sync.Once
	in := bufio.NewReaderSize(b.In, 1<<20)
	var calls sync.WaitGroup
	defer calls.Wait()
	for {
		line, err := in.ReadBytes('\n')
		if msg := bytes.TrimSpace(line); len(msg) > 0 && !json.Valid(msg) {
			// Not JSON, or cut short by a bound on messages: the owner need not see it.
			b.deliver([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`), "")
		} else if len(msg) > 0 {
			var head struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(msg, &head)
			switch {
			case head.Method == "initialize":
				b.mu.Lock()
				b.initReq, b.session = msg, ""
				b.mu.Unlock()
				b.forward(ctx, msg, head.ID, head.Method)
			case head.Method == "notifications/initialized":
				b.mu.Lock()
				b.initNote = msg
				b.mu.Unlock()
				b.forward(ctx, msg, nil, head.Method)
				listening.Do(func() { wg.Go(func() { b.listen(ctx) }) })
			case head.ID != nil && head.Method != "":
				// A call may take long; the next ones need not wait for it.
				calls.Go(func() { b.forward(ctx, msg, head.ID, head.Method) })
			default: // notifications and answers keep their order
				b.forward(ctx, msg, nil, head.Method)
			}
		}
		if err != nil {
			calls.Wait()
			b.endSession()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// endSession tells the owner the client has gone, so that its session ends now (its
// attached documents go with it) rather than when it has been idle for the session TTL.
func (b *Bridge) endSession() {
	b.mu.Lock()
	session := b.session
	b.mu.Unlock()
	if session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, "http://localhost/mcp", nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", session)
	if resp, err := b.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

// forward sends one message to the owner and copies its answer to the client, electing a
// new owner and resending while the owner goes away.
func (b *Bridge) forward(ctx context.Context, msg, id json.RawMessage, method string) {
	for attempt := 0; ; attempt++ {
		err := b.post(ctx, msg, id, method)
		switch {
		case err == nil || ctx.Err() != nil:
			return
		case errors.Is(err, errSessionGone) && attempt < 3:
			b.Logger.Info("the owner does not know the session; initializing it again")
			err = b.reinitialize(ctx)
		case errors.Is(err, errOwnerGone) && attempt < 10:
			b.Logger.Info("the owner went away; electing another", "err", err)
			err = b.elect(ctx)
		}
		if err != nil {
			if id != nil {
				b.fail(id, err)
			}
			b.Logger.Error("forwarding to the owner", "method", method, "err", err)
			return
		}
	}
}

// post sends msg under the bridge's session and writes what the owner answers, once it
// begins to answer within CallWait.
func (b *Bridge) post(ctx context.Context, msg, id json.RawMessage, method string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var silent atomic.Bool
	answering := func() {}
	if b.CallWait > 0 {
		wait := time.AfterFunc(b.CallWait, func() { silent.Store(true); cancel() })
		defer wait.Stop()
		answering = func() { wait.Stop() } // an answer may stream for longer: progress, then the result
	}
	err := b.send(ctx, msg, id, method, answering)
	if err != nil && silent.Load() {
		return b.silent()
	}
	return err
}

// silent is the error of a call the owner did not answer within CallWait.
func (b *Bridge) silent() error {
	who := "the project's owner"
	if r, err := owner.Read(b.Dir); err == nil {
		who = fmt.Sprintf("the project's owner (pid %d)", r.PID)
	}
	return fmt.Errorf("%s has not answered for %s: it may be stopped (SIGSTOP) or overloaded; see %s", who, b.CallWait, owner.Log(b.Dir))
}

// send posts msg and writes what the owner answers, calling answering once it begins to.
func (b *Bridge) send(ctx context.Context, msg, id json.RawMessage, method string, answering func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://localhost/mcp", bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	b.mu.Lock()
	session, protocol := b.session, b.protocol
	b.mu.Unlock()
	if session != "" && method != "initialize" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if protocol != "" {
		req.Header.Set("Mcp-Protocol-Version", protocol)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", errOwnerGone, err)
	}
	defer resp.Body.Close()
	answering()
	if resp.StatusCode == http.StatusNotFound && session != "" && method != "initialize" {
		return errSessionGone
	}
	if method == "initialize" {
		b.mu.Lock()
		b.session = resp.Header.Get("Mcp-Session-Id")
		b.mu.Unlock()
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return b.copyEvents(resp.Body, id, method)
	}
	body, err := readBody(resp)
	if err != nil {
		return fmt.Errorf("%w: %w", errOwnerGone, err)
	}
	body = bytes.TrimSpace(body)
	switch {
	case len(body) > 0 && body[0] == '{' || len(body) > 0 && body[0] == '[':
		b.deliver(body, method)
	case resp.StatusCode >= 500 && id != nil:
		return fmt.Errorf("%w: %s", errOwnerGone, resp.Status)
	case resp.StatusCode >= 400 && id != nil:
		b.fail(id, fmt.Errorf("the owner answered %s: %s", resp.Status, body))
	}
	return nil
}

// readBody reads an answer's body, into memory of its length (and a byte for the line's
// end, which deliver adds) when the owner sent it.
func readBody(resp *http.Response) ([]byte, error) {
	if resp.ContentLength <= 0 || resp.ContentLength > 1<<30 {
		return io.ReadAll(resp.Body)
	}
	body := make([]byte, resp.ContentLength, resp.ContentLength+1)
	_, err := io.ReadFull(resp.Body, body)
	return body, err
}

// copyEvents writes the data of each server-sent event; a stream that ends before the
// answer to id means the owner went away.
func (b *Bridge) copyEvents(r io.Reader, id json.RawMessage, method string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var data bytes.Buffer
	answered := id == nil
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if data.Len() > 0 {
				if answerTo(data.Bytes(), id) {
					answered = true
				}
				b.deliver(bytes.Clone(data.Bytes()), method)
				data.Reset()
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(v, []byte(" ")))
		}
	}
	if !answered {
		return fmt.Errorf("%w: the event stream ended before the answer (%v)", errOwnerGone, sc.Err())
	}
	return nil
}

// deliver writes one message to the client, and learns the protocol version from the
// answer to initialize.
func (b *Bridge) deliver(msg []byte, method string) {
	if method == "initialize" {
		var r struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(msg, &r) == nil && r.Result.ProtocolVersion != "" {
			b.mu.Lock()
			b.protocol = r.Result.ProtocolVersion
			b.mu.Unlock()
		}
	}
	b.outMu.Lock()
	defer b.outMu.Unlock()
	_, _ = b.Out.Write(append(msg, '\n'))
}

// fail answers the client's request id with an internal error.
func (b *Bridge) fail(id json.RawMessage, err error) {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32603, "message": "guide: " + err.Error()}})
	b.deliver(msg, "")
}

// reinitialize opens a new session on an owner that does not know the bridge's, by
// replaying the client's handshake; the answers are not the client's to see.
func (b *Bridge) reinitialize(ctx context.Context) error {
	b.mu.Lock()
	initReq, initNote := b.initReq, b.initNote
	b.mu.Unlock()
	if initReq == nil {
		return errSessionGone
	}
	quiet := &Bridge{Dir: b.Dir, client: b.client, Out: io.Discard, Logger: b.Logger, CallWait: b.CallWait}
	if err := quiet.post(ctx, initReq, nil, "initialize"); err != nil {
		return err
	}
	if initNote != nil {
		quiet.mu.Lock()
		quiet.protocol = b.protocol
		quiet.mu.Unlock()
		if err := quiet.post(ctx, initNote, nil, "notifications/initialized"); err != nil {
			return err
		}
	}
	b.mu.Lock()
	b.session = quiet.session
	b.mu.Unlock()
	return nil
}

// elect returns once an owner answers on the socket: the one there is, or one this bridge
// starts when no process holds the project's lock.
func (b *Bridge) elect(ctx context.Context) error {
	b.electMu.Lock()
	defer b.electMu.Unlock()
	deadline := time.Now().Add(b.Election)
	after := cmp.Or(b.restart, restartAfter)
	var started time.Time
	var starting *os.File // held until the owner this bridge started answers, or for after
	defer func() { starting.Close() }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if b.polled != nil {
			b.polled()
		}
		if c, err := net.Dial("unix", owner.Socket(b.Dir)); err == nil {
			c.Close()
			b.client.CloseIdleConnections() // those were to the owner that went away
			return nil
		}
		if starting != nil && time.Since(started) > after {
			starting.Close()
			starting = nil
		}
		held := true
		if time.Since(started) > after {
			var err error
			if held, err = owner.Probe(b.Dir); err != nil {
				// No owner could lock it either (read-only, not a directory): say so now,
				// rather than wait for one, and point to a log nobody could write.
				return fmt.Errorf("the project's data directory %s cannot be used: %w", b.Dir, err)
			}
		}
		if !held {
			// One bridge starts the owner; the others wait for it, rather than start
			// owners that lose the race and take the CPU the winner needs.
			if starting = owner.StartLock(b.Dir); starting != nil {
				b.Logger.Info("starting the project's owner", "data", b.Dir, "log", owner.Log(b.Dir))
				if err := b.Start(); err != nil {
					return fmt.Errorf("start the project's owner: %w", err)
				}
				started = time.Now()
			}
		}
		if time.Now().After(deadline) {
			return b.noOwner()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (b *Bridge) noOwner() error {
	if r, err := owner.Read(b.Dir); err == nil && owner.Held(b.Dir) && r.Socket == "" {
		return fmt.Errorf("the project's store is held by pid %d (%s), which serves no MCP clients: stop it, or run it with --nats", r.PID, r.Role)
	}
	return fmt.Errorf("no owner of the project answered on %s within %s; see %s", owner.Socket(b.Dir), b.Election, owner.Log(b.Dir))
}

// listen copies to the client what the owner sends outside any call (resource updates,
// list changes, its own requests), on the session's event stream, opened again on the
// next owner.
func (b *Bridge) listen(ctx context.Context) {
	for ctx.Err() == nil {
		b.mu.Lock()
		session, protocol := b.session, b.protocol
		b.mu.Unlock()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://localhost/mcp", nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		if protocol != "" {
			req.Header.Set("Mcp-Protocol-Version", protocol)
		}
		resp, err := b.client.Do(req)
		if err == nil {
			if resp.StatusCode == http.StatusOK {
				_ = b.copyEvents(resp.Body, nil, "")
			}
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			return
		}
		// The owner went away or refused the stream: wait for one that answers, and do not
		// ask more than once a second.
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		_ = b.elect(ctx)
	}
}

// attach holds a request open on the owner while the bridge lives: the owner counts its
// clients by them, and the bridge learns at once that the owner went away.
func (b *Bridge) attach(ctx context.Context) {
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://localhost/attach", nil)
		if err != nil {
			return
		}
		if resp, err := b.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			return
		}
		if err := b.elect(ctx); err != nil {
			b.Logger.Warn("no owner of the project", "err", err)
		}
	}
}
