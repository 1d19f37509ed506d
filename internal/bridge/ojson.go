package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// object is a JSON object that keeps its keys in order, so that an answer the front
// rewrites reads as the owner wrote it. A JSON value here is *object, []any, string,
// json.Number, bool or nil.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) any { return o.vals[k] }

func (o *object) has(k string) bool { _, ok := o.vals[k]; return ok }

// set sets k, after the other keys when it is new.
func (o *object) set(k string, v any) *object {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) str(k string) string { s, _ := o.vals[k].(string); return s }

func (o *object) boolean(k string) bool { b, _ := o.vals[k].(bool); return b }

func (o *object) obj(k string) *object { x, _ := o.vals[k].(*object); return x }

func (o *object) list(k string) []any { x, _ := o.vals[k].([]any); return x }

// num is the number at k, 0 when there is none.
func (o *object) num(k string) float64 {
	switch n := o.vals[k].(type) {
	case json.Number:
		f, _ := n.Float64()
		return f
	case float64:
		return n
	case int:
		return float64(n)
	}
	return 0
}

func (o *object) int(k string) int { return int(o.num(k)) }

// parseJSON reads one JSON value, its objects in order and its numbers as written.
func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return readValue(dec)
}

// parseObject reads a JSON object.
func parseObject(b []byte) (*object, error) {
	v, err := parseJSON(b)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("not a JSON object: %.80s", b)
	}
	return o, nil
}

func readValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := t.(json.Delim)
	if !ok {
		return t, nil
	}
	switch d {
	case '{':
		o := newObject()
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(k.(string), v)
		}
		_, err = dec.Token()
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = dec.Token()
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// encode writes v as compact JSON, its characters as written (no \u003c for <), as the
// owner writes its answers.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	writeValue(&b, enc, v)
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, enc *json.Encoder, v any) {
	switch x := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, enc, k)
			b.WriteByte(':')
			writeValue(b, enc, x.vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, enc, e)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(string(x))
	case json.RawMessage:
		b.Write(x)
	default:
		n := b.Len()
		_ = enc.Encode(x)
		if b.Len() > n && b.Bytes()[b.Len()-1] == '\n' {
			b.Truncate(b.Len() - 1)
		}
	}
}

// sessionPrefix starts the path of a session document, which belongs to no root.
const sessionPrefix = "session:"

// under is the path p of a root's tree as the client sees it, below the root's name.
func under(name, p string) string {
	switch {
	case strings.HasPrefix(p, sessionPrefix):
		return p
	case p == "":
		return name
	}
	return name + "/" + p
}

// prefixPaths rewrites, in an answer of a root's owner, every path of the root's tree into
// the client's: below the root's name. Paths are the values of path, folder and focus,
// context_id (but "session") and the entries of history; a node at the root's own top
// ("" ) takes the root's name as its name.
func prefixPaths(v any, name string) {
	switch x := v.(type) {
	case *object:
		for _, k := range x.keys {
			switch val := x.vals[k].(type) {
			case string:
				switch k {
				case "path":
					if val == "" && x.has("name") {
						x.vals["name"] = name
					}
					x.vals[k] = under(name, val)
				case "folder", "focus":
					x.vals[k] = under(name, val)
				case "context_id":
					if val != "session" {
						x.vals[k] = under(name, val)
					}
				}
			case []any:
				if k == "history" {
					for i, h := range val {
						if s, ok := h.(string); ok {
							val[i] = under(name, s)
						}
					}
					continue
				}
				prefixPaths(val, name)
			case *object:
				prefixPaths(val, name)
			}
		}
	case []any:
		for _, e := range x {
			prefixPaths(e, name)
		}
	}
}

// clone is a copy of o that shares its values.
func (o *object) clone() *object {
	c := newObject()
	for _, k := range o.keys {
		c.set(k, o.vals[k])
	}
	return c
}
