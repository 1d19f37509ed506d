package query

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/guide/guide/internal/projection"
)

// PromptTemplate is THE system prompt of guide, kept in this one place: one base
// template, the tool access rules, and the context block that is rendered per session
// from PromptContext. Every client gets it as the MCP prompt
// "guide"; change the wording here and only here. The README shows a rendered example.
const PromptTemplate = `You are an assistant working with the documents of the project "{{.Project}}" through the guide tools.

## How to reach the documents
- Start with list: it shows the documents available in the focus context plus the session documents, with their origin (context_type, context_id) and status.
- A document that is not ready (uploading or processing): use analyze(path); it reads the latest version even before indexing finishes.
- A ready document: read it with view(path); for a long one, get_summary(path) first.
- get_summary works only on ready documents; it is refused with not_ready otherwise.
- A failed document has no text: tell the user why (list gives the reason).
- search(query) and list cover the focus context plus the session documents; pass folder, or scope "all", to look elsewhere. Results with in_focus false come from outside the focus context.
- Session documents are attached to this conversation only (attach, detach); their paths begin with "session:".
- Prioritize the focus context; use historical contexts only if needed, and say so when you do (for example: "From the folder Characters, an earlier context: ...").

## Context
{{template "contextBlock" .}}`

// contextBlockTemplate is the per-session part of PromptTemplate, also rendered alone
// (the prompt's "block" argument) for clients that build their own system prompt.
const contextBlockTemplate = `{{define "contextBlock"}}Focus context: {{.FocusType}} {{quote .Focus}}{{if eq .Focus ""}} (the project root){{end}}
Historical contexts (most recent first):{{if not .History}} none{{end}}
{{- range $i, $h := .History}}
{{inc $i}}. {{if eq $h ""}}root "" (the project root){{else}}folder {{quote $h}}{{end}}
{{- end}}

Available documents ({{.Total}}):
{{- range .Groups}}
{{.Heading}}:
{{- range .Documents}}
- {{.Path}} ({{.Status}}{{if .Reason}}: {{.Reason}}{{end}}){{if .Title}} — {{.Title}}{{end}}
{{- end}}
{{- if .More}}
- … and {{.More}} more: call list with context_type {{.Type}}
{{- end}}
{{- else}}
none
{{- end}}
{{end}}`

var promptTmpl = template.Must(template.New("prompt").Funcs(template.FuncMap{
	"quote": func(s string) string { return fmt.Sprintf("%q", s) },
	"inc":   func(i int) int { return i + 1 },
}).Parse(PromptTemplate + contextBlockTemplate))

// MaxPromptDocuments bounds the documents a context group names in the prompt; list has
// the rest.
const MaxPromptDocuments = 30

// PromptContext is the data of the context block.
type PromptContext struct {
	Project   string
	Focus     string
	FocusType string
	History   []string
	Total     int
	Groups    []PromptGroup
}

// PromptGroup is the available documents of one context.
type PromptGroup struct {
	Type      string
	ID        string
	Heading   string
	Documents []ListEntry
	More      int
}

// BuildPromptContext gathers a session's contexts and available documents, grouped by
// context: the session's documents, the focus, each ancestor (nearest first), and the
// folders below the focus.
func BuildPromptContext(s *projection.Snapshot, project string, c Contexts, pend Pending) PromptContext {
	pc := PromptContext{Project: project, Focus: c.Focus, FocusType: FocusType(c.Focus), History: c.History}
	entries := Available(s, Scope{Contexts: c}, pend)
	pc.Total = len(entries)
	index := map[string]int{}
	for _, e := range entries {
		key := e.Type + "\x00" + e.ID
		if e.Type == ContextDescendant {
			key = e.Type // one group for everything below the focus
		}
		i, ok := index[key]
		if !ok {
			i = len(pc.Groups)
			index[key] = i
			pc.Groups = append(pc.Groups, PromptGroup{Type: e.Type, ID: e.ID, Heading: groupHeading(e, c.Focus)})
		}
		g := &pc.Groups[i]
		if len(g.Documents) < MaxPromptDocuments {
			g.Documents = append(g.Documents, e)
		} else {
			g.More++
		}
	}
	return pc
}

func groupHeading(e ListEntry, focus string) string {
	folder := func(id string) string {
		if id == "" {
			return `the project root ""`
		}
		return fmt.Sprintf("folder %q", id)
	}
	switch e.Type {
	case ContextSession:
		return "Session documents (attached to this conversation)"
	case ContextFocus:
		return "Focus context, " + folder(e.ID)
	case ContextAncestor:
		return "Ancestor context, " + folder(e.ID) + " (its own documents only)"
	case ContextDescendant:
		return "Below the focus context " + fmt.Sprintf("%q", focus)
	}
	return e.Type + " " + folder(e.ID)
}

// RenderPrompt renders the whole prompt: the base template with the context block.
func RenderPrompt(pc PromptContext) (string, error) {
	var b strings.Builder
	if err := promptTmpl.ExecuteTemplate(&b, "prompt", pc); err != nil {
		return "", fmt.Errorf("prompt: %w", err)
	}
	return b.String(), nil
}

// RenderContextBlock renders the context block alone.
func RenderContextBlock(pc PromptContext) (string, error) {
	var b strings.Builder
	if err := promptTmpl.ExecuteTemplate(&b, "contextBlock", pc); err != nil {
		return "", fmt.Errorf("prompt context block: %w", err)
	}
	return b.String(), nil
}
