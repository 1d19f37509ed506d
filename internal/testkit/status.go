package testkit

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/query"
)

// ReadStatus reads the status resource.
func ReadStatus(t testing.TB, c client.MCPClient) query.Status {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "guide://_status"
	res, err := c.ReadResource(Context(t), req)
	if err != nil {
		t.Fatalf("read status: %v", err)
	}
	var st query.Status
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &st); err != nil {
		t.Fatalf("status: %v", err)
	}
	return st
}

// WaitCaughtUp waits until the status resource says the initial scan is applied and every
// projection (the catalog and the search index) has applied the whole stream. caught_up is
// required, not only sequences: until the runner has checked which stream the projections
// were built from, the status shows what they hold from before, and after the stream was
// deleted and created again, their old sequences may well exceed the new stream's last.
func WaitCaughtUp(t testing.TB, c client.MCPClient) query.Status {
	t.Helper()
	var st query.Status
	Eventually(t, 30*time.Second, func() (bool, string) {
		st = ReadStatus(t, c)
		return st.CaughtUp && st.InitialScanDone && st.Lag == 0 && st.AppliedSeq >= st.StreamLastSeq && st.StreamLastSeq > 0 &&
			(st.Index == nil || st.Index.AppliedSeq >= st.StreamLastSeq), fmt.Sprintf("not caught up: %+v", st)
	})
	return st
}
