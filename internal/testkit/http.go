package testkit

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// HTTP says how an MCP client connects over Streamable HTTP; the zero value connects
// without credentials at the latest protocol version.
type HTTP struct {
	// Token, when set, is sent as a bearer token.
	Token string
	// Header holds further request headers.
	Header map[string]string
	// ProtocolVersion is the version the client asks for; mcp.LATEST_PROTOCOL_VERSION when "".
	ProtocolVersion string
	// Listen keeps a standing event stream open for server notifications.
	Listen bool
	// OnNotification, when set, receives the server's notifications.
	OnNotification func(mcp.JSONRPCNotification)
}

// DialHTTP connects an MCP client to url (http://host:port/mcp) and initializes it. On an
// error the client is closed; tests that expect a refusal use it directly.
func DialHTTP(ctx context.Context, url string, o HTTP) (*client.Client, error) {
	var opts []transport.StreamableHTTPCOption
	header := map[string]string{}
	for k, v := range o.Header {
		header[k] = v
	}
	if o.Token != "" {
		header["Authorization"] = "Bearer " + o.Token
	}
	if len(header) > 0 {
		opts = append(opts, transport.WithHTTPHeaders(header))
	}
	if o.Listen {
		opts = append(opts, transport.WithContinuousListening())
	}
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		return nil, err
	}
	if o.OnNotification != nil {
		c.OnNotification(o.OnNotification)
	}
	if err := c.Start(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = o.ProtocolVersion
	if req.Params.ProtocolVersion == "" {
		req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	}
	req.Params.ClientInfo = mcp.Implementation{Name: "guide-test", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// HTTPClient is DialHTTP for a test: it fails the test on an error and closes the client
// when the test ends.
func HTTPClient(t testing.TB, url string, o HTTP) *client.Client {
	t.Helper()
	c, err := DialHTTP(Context(t), url, o)
	if err != nil {
		t.Fatalf("MCP over HTTP at %s: %v", url, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
