package session_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/session"
	"github.com/guide/guide/internal/testkit"
)

// TestAttachPublishFailure: when the document cannot be published, the client reads a
// clean io_error and the cause stays on the error for the operator's log.
func TestAttachPublishFailure(t *testing.T) {
	p := testkit.NewPipeline(t, nil, testkit.CopyTree(t, "../../testdata/sample"), "")
	b := testkit.NATS(t)
	stream := testkit.Stream(t, b)
	b.Conn.Close() // every publish now fails
	r := &session.Registry{Project: p.Project, Catalog: p.Catalog, Stream: stream}
	_, qerr := r.Attach(testkit.Context(t), "client-1", "notes.md", "some notes")
	if qerr == nil {
		t.Fatal("attach succeeded on a closed connection")
	}
	testkit.Equal(t, qerr.Type, query.ErrIO, "error type")
	if !strings.Contains(qerr.Message, "internal error") || strings.Contains(qerr.Message, "nats") {
		t.Errorf("message %q: want a clean internal error", qerr.Message)
	}
	if qerr.Cause == nil || !strings.Contains(qerr.Cause.Error(), "nats") {
		t.Errorf("cause %v: want the publish failure", qerr.Cause)
	}
	if !errors.Is(qerr, qerr.Cause) {
		t.Error("the error does not unwrap to its cause")
	}
}
