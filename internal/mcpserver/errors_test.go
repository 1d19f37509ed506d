package mcpserver_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/testkit"
)

// syncBuffer is a log sink that the server's goroutines may write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestInternalFailure: a failure of the server itself reaches the client as its error type
// and a clean message; its cause goes to the operator's log only.
func TestInternalFailure(t *testing.T) {
	var log syncBuffer
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "", func(s *mcpserver.Server) {
		s.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	p.Reconcile()
	const cause = "catalog is closed"
	if err := p.Catalog.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tool, arg string }{
		{"view", "path"},
		{"get_content", "category_or_collection"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			res := p.Call(tc.tool, map[string]any{tc.arg: "Characters/Elara.md"})
			f := testkit.DecodeFailure(t, res)
			testkit.Equal(t, f.ErrorType, "io_error", "error type")
			if !strings.Contains(f.Error, "internal error") {
				t.Errorf("message %q does not say it is an internal error", f.Error)
			}
			if strings.Contains(testkit.Text(t, res), cause) {
				t.Errorf("the cause reached the client: %s", testkit.Text(t, res))
			}
			if !strings.Contains(log.String(), cause) || !strings.Contains(log.String(), "call="+tc.tool) {
				t.Errorf("the cause is not in the log:\n%s", log.String())
			}
		})
	}
}

// TestInputSchemaFailures: arguments that do not match a tool's input schema come back as
// the Result pattern's failure (invalid_argument and a sentence naming the argument),
// never as the validator's Go values.
func TestInputSchemaFailures(t *testing.T) {
	p := testkit.NewPipeline(t, nil, testkit.CopyTree(t, "../../testdata/sample"), "")
	p.Reconcile()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string // in the message
	}{
		{"tree", map[string]any{"depth": -1}, "argument depth"},
		{"tree", map[string]any{"depth": 9}, "argument depth"},
		{"view", map[string]any{"path": "", "offset": -1}, "argument offset"},
		{"view", map[string]any{"path": 3}, "argument path"},
		{"search", map[string]any{}, "query"},
		{"list", map[string]any{"scope": "everything"}, "argument scope"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			f := testkit.DecodeFailure(t, testkit.Call(t, p.Client, tc.tool, tc.args))
			testkit.Equal(t, f.ErrorType, "invalid_argument", "error type")
			if !strings.Contains(f.Error, tc.want) || strings.Contains(f.Error, "&{") || strings.Contains(f.Error, "Got:") {
				t.Errorf("message %q: want a sentence about %q", f.Error, tc.want)
			}
		})
	}
}
