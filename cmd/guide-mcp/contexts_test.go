package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/session"
	"github.com/guide/guide/internal/testkit"
)

// sessionClient connects over Streamable HTTP with the last protocol version that has MCP
// sessions (2026-07-28 removed them), so that the server tells this client from others.
func sessionClient(t *testing.T, m *Main) *client.Client {
	t.Helper()
	c := testkit.HTTPClient(t, "http://"+m.Addr().String()+"/mcp", testkit.HTTP{ProtocolVersion: mcp.ProtocolVersion20251125})
	if c.GetSessionId() == "" {
		t.Fatal("no MCP session")
	}
	return c
}

func contextsServer(t *testing.T, extra ...string) (*Main, string) {
	t.Helper()
	root := testkit.CopyTree(t, "../../testdata/contexts")
	testkit.WriteFile(t, root, "Acme/Sales/Q1/logo.png", "\x89PNG\x00\x00binary")
	m := inProcess(t, append([]string{"--root", root, "--data", t.TempDir(), "--http", "127.0.0.1:0"}, extra...)...)
	return m, root
}

type listResult struct {
	Focus      string         `json:"focus"`
	Scope      string         `json:"scope"`
	Total      int            `json:"total"`
	Counts     map[string]int `json:"counts"`
	NextOffset int            `json:"next_offset"`
	Documents  []struct {
		ContextType      string `json:"context_type"`
		ContextID        string `json:"context_id"`
		InFocus          bool   `json:"in_focus"`
		Path             string `json:"path"`
		Filename         string `json:"filename"`
		Status           string `json:"status"`
		Reason           string `json:"reason"`
		SummaryAvailable bool   `json:"summary_available"`
	} `json:"documents"`
}

// lines renders a listing as "context_type context_id path status" lines.
func (l listResult) lines() []string {
	out := []string{}
	for _, d := range l.Documents {
		out = append(out, d.ContextType+" "+d.ContextID+" "+d.Path+" "+d.Status)
	}
	return out
}

func list(t *testing.T, c *client.Client, args map[string]any) listResult {
	t.Helper()
	var l listResult
	testkit.Decode(t, testkit.Call(t, c, "list", args), &l)
	return l
}

type focusResult struct {
	Focus     string         `json:"focus"`
	FocusType string         `json:"focus_type"`
	History   []string       `json:"history"`
	Counts    map[string]int `json:"counts"`
	Documents int            `json:"documents"`
}

func focus(t *testing.T, c *client.Client, folder string) focusResult {
	t.Helper()
	var f focusResult
	testkit.Decode(t, testkit.Call(t, c, "focus", map[string]any{"context": folder}), &f)
	return f
}

// TestContextsAvailability: two concurrent sessions focus on the root, a middle folder and
// a leaf folder, and each sees exactly the documents its focus makes available.
func TestContextsAvailability(t *testing.T) {
	m, _ := contextsServer(t)
	a, b := sessionClient(t, m), sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)

	t.Run("Root", func(t *testing.T) {
		testkit.Equal(t, list(t, a, nil).lines(), []string{
			"focus  README.md ready",
			"descendant Acme/Sales/Q1 Acme/Sales/Q1/logo.png failed",
			"descendant Acme/Sales/Q1 Acme/Sales/Q1/notes.md ready",
			"descendant Acme/Sales Acme/Sales/plan.md ready",
			"descendant Acme/Support Acme/Support/faq.md ready",
			"descendant Acme Acme/about.md ready",
			"descendant Other Other/misc.md ready",
		}, "a session that never chose a focus sees the root")
	})
	t.Run("Middle", func(t *testing.T) {
		f := focus(t, a, "Acme/Sales")
		testkit.Equal(t, f, focusResult{Focus: "Acme/Sales", FocusType: "folder", History: []string{},
			Counts: map[string]int{"focus": 1, "ancestor": 2, "descendant": 2}, Documents: 5}, "focus")
		testkit.Equal(t, list(t, a, nil).lines(), []string{
			"focus Acme/Sales Acme/Sales/plan.md ready",
			"ancestor Acme Acme/about.md ready",
			"ancestor  README.md ready",
			"descendant Acme/Sales/Q1 Acme/Sales/Q1/logo.png failed",
			"descendant Acme/Sales/Q1 Acme/Sales/Q1/notes.md ready",
		}, "middle folder")
	})
	t.Run("Leaf", func(t *testing.T) {
		focus(t, b, "Acme/Sales/Q1")
		testkit.Equal(t, list(t, b, nil).lines(), []string{
			"focus Acme/Sales/Q1 Acme/Sales/Q1/logo.png failed",
			"focus Acme/Sales/Q1 Acme/Sales/Q1/notes.md ready",
			"ancestor Acme/Sales Acme/Sales/plan.md ready",
			"ancestor Acme Acme/about.md ready",
			"ancestor  README.md ready",
		}, "leaf folder")
		testkit.Equal(t, list(t, a, nil).Focus, "Acme/Sales", "the other session keeps its own focus")
	})
	t.Run("Filters", func(t *testing.T) {
		testkit.Equal(t, list(t, b, map[string]any{"status": "failed"}).lines(),
			[]string{"focus Acme/Sales/Q1 Acme/Sales/Q1/logo.png failed"}, "status filter")
		testkit.Equal(t, list(t, b, map[string]any{"context_type": "ancestor", "limit": 2}).lines(), []string{
			"ancestor Acme/Sales Acme/Sales/plan.md ready",
			"ancestor Acme Acme/about.md ready",
		}, "context filter, first page")
		l := list(t, b, map[string]any{"scope": "all"})
		testkit.Equal(t, [2]int{l.Total, l.Counts["other"]}, [2]int{7, 2}, "scope all: two documents from outside every context")
		for _, d := range l.Documents {
			if d.ContextType == "other" && d.InFocus {
				t.Errorf("%s from outside the focus is not marked", d.Path)
			}
		}
	})
	t.Run("ErrNotAFolder", func(t *testing.T) {
		f := testkit.DecodeFailure(t, testkit.Call(t, a, "focus", map[string]any{"context": "Acme/about.md"}))
		testkit.Equal(t, f.ErrorType, "invalid_path", "a document is not a context")
		f = testkit.DecodeFailure(t, testkit.Call(t, a, "focus", map[string]any{"context": "Nowhere"}))
		testkit.Equal(t, f.ErrorType, "not_found", "no such folder")
	})
}

// TestContextsHistory: earlier foci, most recent first, without duplicates; per session.
func TestContextsHistory(t *testing.T) {
	m, _ := contextsServer(t)
	a, b := sessionClient(t, m), sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)
	for _, f := range []string{"Acme", "Acme/Sales", "Other", "Acme", ""} {
		focus(t, a, f)
	}
	focus(t, b, "Other")
	got := focus(t, a, "Acme/Support")
	testkit.Equal(t, got.History, []string{"", "Acme", "Other", "Acme/Sales"}, "history of a")
	testkit.Equal(t, focus(t, b, "Other").History, []string{}, "b's history is its own")
	// A historical context is marked when a widened scope reaches into it.
	l := list(t, a, map[string]any{"folder": "Other"})
	testkit.Equal(t, l.lines(), []string{"historical  Other/misc.md ready"}, "folder scope")
}

type attachResult struct {
	Path     string   `json:"path"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason"`
	Statuses []string `json:"statuses"`
	Title    string   `json:"title"`
}

func attach(t *testing.T, c *client.Client, name, content string) attachResult {
	t.Helper()
	var r attachResult
	testkit.Decode(t, testkit.Call(t, c, "attach", map[string]any{"filename": name, "content": content}), &r)
	return r
}

// TestSessionDocuments: a document attached to one session is ready when attach returns,
// at once visible to that session's view, list, get_summary and analyze, never to the
// other session; it goes with detach, and with the end of its session.
func TestSessionDocuments(t *testing.T) {
	m, _ := contextsServer(t)
	a, b := sessionClient(t, m), sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)
	focus(t, a, "Acme/Support")

	r := attach(t, a, "meeting notes.md", "# Meeting\n\nWe agreed to ship the brakes first.\n\n## Actions\n")
	testkit.Equal(t, r, attachResult{Path: "session:meeting notes.md", Status: "ready",
		Statuses: []string{"uploading", "processing", "ready"}, Title: "Meeting"}, "attach")

	t.Run("ImmediatelyUsable", func(t *testing.T) {
		testkit.Equal(t, list(t, a, nil).lines(), []string{
			"session session session:meeting notes.md ready",
			"focus Acme/Support Acme/Support/faq.md ready",
			"ancestor Acme Acme/about.md ready",
			"ancestor  README.md ready",
		}, "list of the owner")
		var v struct {
			Path, Content string
		}
		testkit.Decode(t, testkit.Call(t, a, "view", map[string]any{"path": "session:meeting notes.md"}), &v)
		testkit.Equal(t, v.Path, "session:meeting notes.md", "view path")
		if !strings.Contains(v.Content, "brakes first") {
			t.Errorf("view content %q", v.Content)
		}
		var s struct {
			Title          string `json:"title"`
			FirstParagraph string `json:"first_paragraph"`
			ContextType    string `json:"context_type"`
			Outline        []struct {
				Level int    `json:"level"`
				Text  string `json:"text"`
			} `json:"outline"`
		}
		testkit.Decode(t, testkit.Call(t, a, "get_summary", map[string]any{"path": "session:meeting notes.md"}), &s)
		testkit.Equal(t, [3]string{s.Title, s.FirstParagraph, s.ContextType},
			[3]string{"Meeting", "We agreed to ship the brakes first.", "session"}, "summary")
		testkit.Equal(t, len(s.Outline), 2, "outline")
		var an struct {
			Words    int    `json:"words"`
			Language string `json:"language"`
			Status   string `json:"status"`
		}
		testkit.Decode(t, testkit.Call(t, a, "analyze", map[string]any{"path": "session:meeting notes.md"}), &an)
		testkit.Equal(t, [2]string{an.Language, an.Status}, [2]string{"en", "ready"}, "analyze")
		hits := search(t, a, "brakes", nil)
		testkit.Equal(t, hits, []string{"session session:meeting notes.md in_focus"}, "search of the owner")
	})
	t.Run("InvisibleToTheOtherSession", func(t *testing.T) {
		for _, tool := range []string{"view", "get_summary", "analyze"} {
			f := testkit.DecodeFailure(t, testkit.Call(t, b, tool, map[string]any{"path": "session:meeting notes.md"}))
			testkit.Equal(t, f.ErrorType, "not_found", tool+" from another session")
		}
		for _, d := range list(t, b, map[string]any{"scope": "all"}).Documents {
			if d.ContextType == "session" {
				t.Errorf("the other session lists %s", d.Path)
			}
		}
		f := testkit.DecodeFailure(t, testkit.Call(t, b, "detach", map[string]any{"filename": "meeting notes.md"}))
		testkit.Equal(t, f.ErrorType, "not_found", "detach from another session")
		testkit.Equal(t, search(t, b, "brakes", map[string]any{"scope": "all"}), []string{}, "search of the other session")
	})
	t.Run("Detach", func(t *testing.T) {
		testkit.Call(t, a, "detach", map[string]any{"filename": "meeting notes.md"})
		if l := list(t, a, map[string]any{"context_type": "session"}); l.Total != 0 {
			t.Errorf("detached document still listed: %v", l.lines())
		}
		f := testkit.DecodeFailure(t, testkit.Call(t, a, "view", map[string]any{"path": "session:meeting notes.md"}))
		testkit.Equal(t, f.ErrorType, "not_found", "view after detach")
	})
	t.Run("SessionEndRemovesItsDocuments", func(t *testing.T) {
		attach(t, a, "draft.md", "# Draft")
		attach(t, b, "keep.md", "# Kept")
		token := session.Token(a.GetSessionId())
		testkit.NoErr(t, a.Close(), "close a") // DELETE ends the MCP session
		testkit.Eventually(t, 20*time.Second, func() (bool, string) {
			docs := sessionDocs(t, m, token)
			return len(docs) == 0, fmt.Sprintf("a's documents not deleted: %v", docs)
		})
		testkit.Equal(t, sessionDocs(t, m, session.Token(b.GetSessionId())), []string{"keep.md"}, "b keeps its own")
		// The stream keeps only the delete: the content is gone from its history too.
		e, err := m.stream.LatestSession(testkit.Context(t), m.project, token, "draft.md")
		testkit.NoErr(t, err, "latest")
		testkit.Equal(t, e.Op, events.OpDelete, "last event")
	})
}

func sessionDocs(t *testing.T, m *Main, token string) []string {
	t.Helper()
	out := []string{}
	_ = m.catalog.Read(func(s *projection.Snapshot) error {
		for _, d := range s.SessionDocuments(token) {
			out = append(out, d.Path)
		}
		return nil
	})
	return out
}

// TestStatusAndNotReady: a failed document (tree or session) says why, and get_summary
// refuses it with not_ready while analyze still answers.
func TestStatusAndNotReady(t *testing.T) {
	m, _ := contextsServer(t, "--session-max-size", "64")
	a := sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)
	r := attach(t, a, "blob.bin", "ab\x00cd")
	testkit.Equal(t, [3]any{r.Status, r.Reason, r.Statuses}, [3]any{"failed", "binary file: a NUL byte in the first 8 KiB",
		[]string{"uploading", "processing", "failed"}}, "a binary attachment")
	for _, p := range []string{"session:blob.bin", "Acme/Sales/Q1/logo.png"} {
		f := testkit.DecodeFailure(t, testkit.Call(t, a, "get_summary", map[string]any{"path": p}))
		testkit.Equal(t, f.ErrorType, "not_ready", "get_summary of "+p)
		var an struct{ Status string }
		testkit.Decode(t, testkit.Call(t, a, "analyze", map[string]any{"path": p}), &an)
		testkit.Equal(t, an.Status, "failed", "analyze of "+p)
	}
	f := testkit.DecodeFailure(t, testkit.Call(t, a, "attach", map[string]any{"filename": "big.md", "content": strings.Repeat("x", 65)}))
	testkit.Equal(t, f.ErrorType, "too_large", "over --session-max-size")
	f = testkit.DecodeFailure(t, testkit.Call(t, a, "attach", map[string]any{"filename": "../x.md", "content": "x"}))
	testkit.Equal(t, f.ErrorType, "invalid_path", "a file name with a folder")
}

// TestAnalyzeBeforeReady: analyze reads the latest version from the stream, before any
// projection applied it; list shows such a document as processing once the process has
// seen it (an event another process publishes reaches this one a moment later).
func TestAnalyzeBeforeReady(t *testing.T) {
	nats := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/contexts")
	reconcileTree(t, nats.ClientURL(), root)
	g := &gate{}
	m := inProcessWith(t, []projection.Projection{g}, "--nats", nats.ClientURL(), "--project", "sample", "--data", t.TempDir(), "--http", "127.0.0.1:0")
	a := sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)

	// Publish a new document while the gate, a projection behind the catalog, is held.
	s := &events.Stream{Conn: testkit.NATSClient(t, nats.ClientURL())}
	testkit.NoErr(t, s.Open(testkit.Context(t)), "stream")
	release := g.hold(t)
	content := []byte("# Nouvelle note\n\nLa note est dans le dossier et elle est pour les clients.\n")
	e := &events.Event{Op: events.OpUpsert, Project: "sample", Path: "Other/new.md", Size: int64(len(content)),
		Mtime: time.Now().UTC(), Hash: events.HashContent(content), Status: events.StatusOK, Content: content}
	_, err := s.PublishSync(testkit.Context(t), e)
	testkit.NoErr(t, err, "publish")

	want := []string{"descendant Other Other/misc.md ready", "descendant Other Other/new.md processing"}
	testkit.Eventually(t, 10*time.Second, func() (bool, string) {
		got := list(t, a, map[string]any{"folder": "Other"}).lines()
		return slices.Equal(got, want), fmt.Sprintf("list shows %q; want %q", got, want)
	})
	f := testkit.DecodeFailure(t, testkit.Call(t, a, "get_summary", map[string]any{"path": "Other/new.md"}))
	testkit.Equal(t, f.ErrorType, "not_ready", "get_summary before ready")
	var an struct {
		Status   string `json:"status"`
		Language string `json:"language"`
		Words    int    `json:"words"`
		Indexed  bool   `json:"indexed"`
		Outline  []struct{ Text string }
	}
	testkit.Decode(t, testkit.Call(t, a, "analyze", map[string]any{"path": "Other/new.md"}), &an)
	testkit.Equal(t, [2]string{an.Status, an.Language}, [2]string{"processing", "fr"}, "analyze before ready")
	testkit.Equal(t, [2]int{an.Words, len(an.Outline)}, [2]int{14, 1}, "words and outline")

	release()
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		line := list(t, a, map[string]any{"folder": "Other"}).lines()[1]
		return line == "descendant Other Other/new.md ready", "not ready once applied: " + line
	})
	var sum struct{ Title string }
	testkit.Decode(t, testkit.Call(t, a, "get_summary", map[string]any{"path": "Other/new.md"}), &sum)
	testkit.Equal(t, sum.Title, "Nouvelle note", "summary once ready")
}

// TestAbandonedSessionDocuments: documents of no live session older than the TTL are
// deleted by the sweep (also right after a start); younger ones of another replica stay.
func TestAbandonedSessionDocuments(t *testing.T) {
	nats := testkit.NATSListening(t)
	root := testkit.CopyTree(t, "../../testdata/contexts")
	reconcileTree(t, nats.ClientURL(), root)
	s := &events.Stream{Conn: testkit.NATSClient(t, nats.ClientURL())}
	testkit.NoErr(t, s.Open(testkit.Context(t)), "stream")
	for name, age := range map[string]time.Duration{"old.md": 48 * time.Hour, "young.md": time.Minute} {
		e := &events.Event{Op: events.OpUpsert, Project: "sample", Session: "crashed", Path: name, Size: 1,
			Mtime: time.Now().Add(-age).UTC(), Hash: events.HashContent([]byte("x")), Status: events.StatusOK, Content: []byte("x")}
		_, err := s.PublishSync(testkit.Context(t), e)
		testkit.NoErr(t, err, "publish")
	}
	m := inProcess(t, "--nats", nats.ClientURL(), "--project", "sample", "--data", t.TempDir(), "--http", "127.0.0.1:0")
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		docs := sessionDocs(t, m, "crashed")
		return len(docs) == 1 && docs[0] == "young.md",
			fmt.Sprintf("want the old document swept, the young one kept (it may be another replica's); have %v", docs)
	})
	e, err := s.LatestSession(testkit.Context(t), "sample", "crashed", "old.md")
	testkit.NoErr(t, err, "latest")
	testkit.Equal(t, e.Op, events.OpDelete, "old.md deleted on the stream")
}

// TestIdleSessionTTL: a session idle for longer than --session-ttl loses its documents.
func TestIdleSessionTTL(t *testing.T) {
	// Long enough that a loaded machine's pause between two calls does not end the
	// session before the attach; short enough for the test.
	m, _ := contextsServer(t, "--session-ttl", "2s")
	a := sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)
	attach(t, a, "short-lived.md", "# Short")
	token := session.Token(a.GetSessionId())
	testkit.Equal(t, sessionDocs(t, m, token), []string{"short-lived.md"}, "attached")
	testkit.Eventually(t, 20*time.Second, func() (bool, string) {
		docs := sessionDocs(t, m, token)
		return len(docs) == 0, fmt.Sprintf("not deleted after the TTL: %v", docs)
	})
}

// TestPromptContextBlock: the prompt "guide" for a known session: base template, rules and
// the context block (golden file; go test -run TestPromptContextBlock -update rewrites it).
func TestPromptContextBlock(t *testing.T) {
	m, _ := contextsServer(t, "--project", "contexts") // the default name holds the path's hash
	a := sessionClient(t, m)
	testkit.WaitCaughtUp(t, a)
	focus(t, a, "Other")
	focus(t, a, "Acme")
	focus(t, a, "Acme/Sales")
	attach(t, a, "brief.md", "# Customer brief\n\nWhat the customer asked for.")

	req := mcp.GetPromptRequest{}
	req.Params.Name = "guide"
	res, err := a.GetPrompt(testkit.Context(t), req)
	testkit.NoErr(t, err, "get prompt")
	var b strings.Builder
	for _, msg := range res.Messages {
		if tc, ok := msg.Content.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	testkit.Golden(t, "testdata/guide-prompt.golden", []byte(b.String()))

	req.Params.Arguments = map[string]string{"part": "context"}
	res, err = a.GetPrompt(testkit.Context(t), req)
	testkit.NoErr(t, err, "get prompt block")
	block := res.Messages[0].Content.(mcp.TextContent).Text
	if !strings.HasSuffix(b.String(), block) {
		t.Errorf("the context block alone is not the end of the prompt:\n%s", block)
	}
}

// gate is a projection that applies nothing and can be held, like a slow search index:
// while it is held, what the catalog applied is still processing.
type gate struct {
	mu      sync.Mutex
	held    chan struct{}
	seq     atomic.Uint64
	id, prj string
}

func (g *gate) Name() string       { return "gate" }
func (g *gate) Checkpoint() uint64 { return g.seq.Load() }
func (g *gate) Identity() (string, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.id, g.prj
}
func (g *gate) Reset(st projection.State) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.id, g.prj = st.StreamID, st.Project
	g.seq.Store(0)
	return nil
}
func (g *gate) Apply(b events.Batch) error {
	g.mu.Lock()
	h := g.held
	g.mu.Unlock()
	if h != nil {
		<-h
	}
	if l := b.Last(); l > g.seq.Load() {
		g.seq.Store(l)
	}
	return nil
}

// hold stops the gate until the returned function (also run when the test ends) releases it.
func (g *gate) hold(t *testing.T) func() {
	ch := make(chan struct{})
	g.mu.Lock()
	g.held = ch
	g.mu.Unlock()
	release := sync.OnceFunc(func() {
		g.mu.Lock()
		g.held = nil
		g.mu.Unlock()
		close(ch)
	})
	t.Cleanup(release)
	return release
}

// inProcessWith is inProcess with further projections behind the catalog.
func inProcessWith(t *testing.T, extra []projection.Projection, args ...string) *Main {
	t.Helper()
	m := &Main{Logger: testkit.Logger(), Stdin: eternal{}, Stdout: os.Stderr, Projections: extra}
	testkit.NoErr(t, m.ParseFlags(args), "flags")
	stop := run(t, m)
	t.Cleanup(func() { _ = stop() })
	return m
}

// run starts m in-process and waits until it is ready. stop cancels it, waits for Run to
// return, and closes it.
func run(t *testing.T, m *Main) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m.Ready = make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-m.Ready:
	case err := <-done:
		t.Fatalf("guide-mcp stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("guide-mcp not ready")
	}
	return func() error {
		cancel()
		<-done
		return m.Close()
	}
}

// search returns the hits of a search as "context_type path in_focus|elsewhere".
func search(t *testing.T, c *client.Client, q string, args map[string]any) []string {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	args["query"] = q
	var r struct {
		Hits []struct {
			Path        string `json:"path"`
			ContextType string `json:"context_type"`
			InFocus     bool   `json:"in_focus"`
		} `json:"hits"`
	}
	testkit.Decode(t, testkit.Call(t, c, "search", args), &r)
	out := []string{}
	for _, h := range r.Hits {
		where := "elsewhere"
		if h.InFocus {
			where = "in_focus"
		}
		out = append(out, h.ContextType+" "+h.Path+" "+where)
	}
	return out
}

// TestSearchScope: search covers the focus set by default, marks each hit with its
// context, and widens with a folder or scope "all".
func TestSearchScope(t *testing.T) {
	m, _ := contextsServer(t)
	c := sessionClient(t, m)
	testkit.WaitCaughtUp(t, c)
	focus(t, c, "Acme/Support")
	// about.md says what Acme makes in its opening paragraph, which ranks above the FAQ's
	// passing mention.
	testkit.Equal(t, search(t, c, "skates", nil),
		[]string{"ancestor Acme/about.md in_focus", "focus Acme/Support/faq.md in_focus"}, "a word of the focus set")
	testkit.Equal(t, search(t, c, "Miscellany", nil), []string{}, "a word outside the focus set")
	testkit.Equal(t, search(t, c, "Miscellany", map[string]any{"scope": "all"}),
		[]string{"other Other/misc.md elsewhere"}, "the same with scope all")
	testkit.Equal(t, search(t, c, "Miscellany", map[string]any{"folder": "Other"}),
		[]string{"other Other/misc.md elsewhere"}, "the same with a folder")
}
