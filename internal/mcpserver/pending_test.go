package mcpserver_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// TestListWhileEventsPendingKeepsConsumersConstant: while the stream holds events the
// projections have not applied, every list reads them to tell processing from ready; many
// calls at once must not grow the consumers on the server, which has a limit on them.
func TestListWhileEventsPendingKeepsConsumersConstant(t *testing.T) {
	b := testkit.NATS(t)
	stream := testkit.Stream(t, b)
	ctx := testkit.Context(t)
	testkit.PublishDocs(t, stream, "test", "p%d.md", "pending %d", 30)
	// No runner: what the stream holds stays unapplied for the whole test.
	srv := &mcpserver.Server{Project: "test", Catalog: testkit.Catalog(t, map[string]string{"a.md": "applied"}),
		Stream: stream, Logger: testkit.Logger()}
	c, err := client.NewInProcessClient(srv.New())
	testkit.NoErr(t, err, "client")
	testkit.NoErr(t, c.Start(ctx), "start client")
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, err = c.Initialize(ctx, init)
	testkit.NoErr(t, err, "initialize")

	var most atomic.Int64
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			if info, err := stream.Info(ctx); err == nil {
				most.Store(max(most.Load(), int64(info.State.Consumers)))
			}
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				var l query.ListResult
				testkit.Decode(t, testkit.Call(t, c, "list", map[string]any{"scope": "all", "status": "processing"}), &l)
				// The catalog has applied sequences 1 and 2 (its document and its scan).
				if l.Total != 28 {
					t.Errorf("list shows %d documents processing, want the 28 above the catalog's checkpoint", l.Total)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	<-watched
	if n := most.Load(); n > 1 {
		t.Errorf("up to %d consumers on the stream during 200 list calls; want at most 1", n)
	}
	info, err := stream.Info(ctx)
	testkit.NoErr(t, err, "stream info")
	testkit.Equal(t, info.State.Consumers, 0, "consumers left after the calls")
}
