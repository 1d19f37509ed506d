package query

import (
	"time"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/projection"
)

// Status is the content of the status resource (guide://_status): how fresh the
// projections are. The MCP server encodes it; tests and the benchmark harness decode it.
type Status struct {
	Project         string       `json:"project"`
	Documents       int          `json:"documents"`
	AppliedSeq      uint64       `json:"applied_seq"`
	StreamLastSeq   uint64       `json:"stream_last_seq,omitempty"`
	Lag             uint64       `json:"lag"` // events of this project not yet applied
	InitialScanDone bool         `json:"initial_scan_done"`
	CaughtUp        bool         `json:"caught_up"` // has applied everything the stream held when it started following
	LastScan        *events.Scan `json:"last_scan,omitempty"`
	AppliedAt       *time.Time   `json:"applied_at,omitempty"`
	StreamError     string       `json:"stream_error,omitempty"` // why the stream cannot be read now
	// WriteError says what cannot be written now, and why (a full disk): a projection
	// ("index: ...", "catalog: ..."), the stream's store, or the indexer's publishing.
	// Answers may then miss recent changes; each part retries by itself.
	WriteError string `json:"write_error,omitempty"`
	// Index is the full-text index's own progress: its applied sequence may trail the
	// catalog's by a batch while it catches up.
	Index *index.State `json:"index,omitempty"`
	// Repairs are the damaged files the projections found since the process started, and
	// what they did: rebuilt from the stream, or bodies read again from it.
	Repairs []projection.Repair `json:"repairs,omitempty"`
}
