package bridge

import (
	"bytes"
	"encoding/json"
)

// mustJSON marshals v, a message the front builds.
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
