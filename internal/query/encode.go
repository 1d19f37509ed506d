package query

import (
	"bytes"
	"encoding/json"
)

// EncodeJSON encodes v as the JSON of an answer, with its characters as written:
// encoding/json writes <, > and & as \u003c, \u003e and \u0026 (for JSON inside HTML), and
// a client shows a tool's text to its model as it is, where a snippet of code reading
// "a \u003c b \u0026\u0026 c" costs tokens and reads wrong.
func EncodeJSON(v any) ([]byte, error) { return encodeJSON(v, "") }

// EncodeJSONIndent is EncodeJSON with each level indented by indent, for a resource a
// person reads as well as a model.
func EncodeJSONIndent(v any, indent string) ([]byte, error) { return encodeJSON(v, indent) }

func encodeJSON(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
