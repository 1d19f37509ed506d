package bridge

import (
	"context"
	"encoding/json"
)

// Handshake is what a project's MCP server answers before any project is open: the result
// of initialize, and the tools. A Front answers with it before it serves a root, so that a
// process that links no MCP server (a bridge) answers as guide-mcp does.
type Handshake struct {
	// Initialize is the server's initialize result, but for its protocolVersion.
	Initialize map[string]json.RawMessage `json:"initialize"`
	// Versions maps a protocol version a client may ask for ("" for none) to the one the
	// server answers; any other is answered with Latest.
	Versions map[string]string `json:"versions"`
	Latest   string            `json:"latest"`
	// Tools is the server's tools/list result.
	Tools json.RawMessage `json:"tools"`
	// ToolPrefix is put before every tool's name (guide-mcp --tool-prefix).
	ToolPrefix string `json:"tool_prefix,omitempty"`
}

// Answer is the answer to initialize or tools/list, and nil to any other message.
func (h *Handshake) Answer(_ context.Context, msg []byte) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &req) != nil {
		return nil
	}
	switch req.Method {
	case "initialize":
		v, ok := h.Versions[req.Params.ProtocolVersion]
		if !ok {
			v = h.Latest
		}
		r := make(map[string]json.RawMessage, len(h.Initialize)+1)
		for k, x := range h.Initialize {
			r[k] = x
		}
		r["protocolVersion"] = mustJSON(v)
		return result(req.ID, r)
	case "tools/list":
		return result(req.ID, h.Tools)
	}
	return nil
}
