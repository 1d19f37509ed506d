package query

import (
	"fmt"
	"path"
	"strings"

	"github.com/cbroglie/mustache"

	"github.com/guide/guide/internal/projection"
)

// TemplateContext is what a template sees. Rendering is mustache without HTML escaping:
// {{project}}, {{category}}, {{collection}} (empty unless asked for through a collection),
// {{document}} (the basename, e.g. "prompt.md"), {{path}} (the basename's path in the
// project), {{date}} (YYYY-MM-DD) and {{time}} (HH:MM:SS), in the query process's time zone.
type TemplateContext struct {
	Project    string `json:"project"`
	Category   string `json:"category"`
	Collection string `json:"collection"`
	Document   string `json:"document"`
	Path       string `json:"path"`
	Date       string `json:"date"`
	Time       string `json:"time"`
}

func (c TemplateContext) values() map[string]any {
	return map[string]any{"project": c.Project, "category": c.Category, "collection": c.Collection,
		"document": c.Document, "path": c.Path, "date": c.Date, "time": c.Time}
}

// partials resolves {{> name}} from the catalog: name (or name.mustache) beside the
// template, else from the project root. A missing partial is an error, not silence.
type partials struct {
	s     *projection.Snapshot
	dir   string
	depth int
}

func (p *partials) Get(name string) (string, error) {
	p.depth++
	if p.depth > 100 {
		return "", fmt.Errorf("partials nest too deeply (at %q)", name)
	}
	clean, qerr := CleanPath(name)
	if qerr != nil || clean == "" {
		return "", fmt.Errorf("partial %q: not a path inside the project", name)
	}
	for _, cand := range []string{path.Join(p.dir, clean), clean} {
		for _, n := range []string{cand, cand + projection.TemplateExt} {
			if d, ok := p.s.Document(n); ok && d.Readable() {
				b, err := p.s.Content(d)
				if err != nil {
					return "", err
				}
				return string(b), nil
			}
		}
	}
	return "", fmt.Errorf("partial %q not found beside the template or at the project root", name)
}

// Render renders a template document's body with the context.
func Render(s *projection.Snapshot, d *projection.Document, body []byte, ctx TemplateContext) ([]byte, error) {
	t, err := mustache.ParseStringPartialsRaw(string(body), &partials{s: s, dir: d.Dir()}, true)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := t.FRender(&b, ctx.values()); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
