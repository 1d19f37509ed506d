package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/guide/guide/internal/query"
)

// validator checks a call's arguments against its tool's input schema, and refuses those
// that do not match with the Result pattern's failure: invalid_argument and a sentence
// that names the argument. (mcp-go's own validation answers with the validator's Go
// values, such as "&{Got:-1/1 Want:0/1}", before any middleware could reword it.)
type validator struct {
	m       *server.MCPServer
	schemas sync.Map // tool name → *jsonschema.Schema, or nil when it does not compile
}

var printer = message.NewPrinter(language.English)

func (v *validator) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if sch := v.schema(req.Params.Name); sch != nil {
			if msg := check(sch, req.Params.Arguments); msg != "" {
				return toolError(query.Errorf(query.ErrInvalidArgument, "%s", msg).
					WithInstruction("Correct the arguments as the tool's input schema says, then call it again.")), nil
			}
		}
		return next(ctx, req)
	}
}

func (v *validator) schema(name string) *jsonschema.Schema {
	if s, ok := v.schemas.Load(name); ok {
		sch, _ := s.(*jsonschema.Schema)
		return sch
	}
	var sch *jsonschema.Schema
	if t := v.m.GetTool(name); t != nil {
		sch = compile(name, t.Tool)
	}
	v.schemas.Store(name, sch)
	return sch
}

// compile compiles a tool's input schema; nil when there is none to check or it does not
// compile (then the tool's handler checks its arguments alone).
func compile(name string, t mcp.Tool) *jsonschema.Schema {
	raw := []byte(t.RawInputSchema)
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(t.InputSchema); err != nil {
			return nil
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	url := "guide:///tools/" + name
	if c.AddResource(url, doc) != nil {
		return nil
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil
	}
	return sch
}

// check returns "" when args match the schema, else a sentence saying what does not.
func check(sch *jsonschema.Schema, args any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return "the arguments are not a JSON object"
	}
	if string(b) == "null" {
		b = []byte("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return "the arguments are not a JSON object"
	}
	err = sch.Validate(v)
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		if err != nil {
			return "the arguments do not match the tool's input schema"
		}
		return ""
	}
	var parts []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		what := "the arguments"
		if len(e.InstanceLocation) > 0 {
			what = "argument " + strings.Join(e.InstanceLocation, ".")
		}
		parts = append(parts, fmt.Sprintf("%s: %s", what, e.ErrorKind.LocalizedString(printer)))
	}
	walk(verr)
	return "invalid arguments: " + strings.Join(parts, "; ")
}
