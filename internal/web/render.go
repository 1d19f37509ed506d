package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/guide/guide/internal/query"
	mdtext "github.com/guide/guide/internal/text"
)

// newMarkdown is goldmark with GitHub's extensions, raw HTML shown as text (the
// renderer's own default omits it; either way none reaches the page as markup), and
// dangerous link destinations dropped by goldmark itself.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkRewriter{}, 100))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawAsText{}, 100))),
	)
}

// rawAsText renders raw HTML in Markdown as the text it is.
type rawAsText struct{}

func (rawAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		_, _ = w.WriteString(`<pre class="raw-html"><code>`)
		for i := 0; i < b.Lines().Len(); i++ {
			seg := b.Lines().At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(src))))
		}
		if b.HasClosure() {
			seg := b.ClosureLine
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(src))))
		}
		_, _ = w.WriteString("</code></pre>\n")
		return ast.WalkContinue, nil
	})
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		segs := n.(*ast.RawHTML).Segments
		_, _ = w.WriteString(`<code class="raw-html">`)
		for i := 0; i < segs.Len(); i++ {
			seg := segs.At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(src))))
		}
		_, _ = w.WriteString(`</code>`)
		return ast.WalkSkipChildren, nil
	})
}

// linkRewriter points relative links between documents at their pages here: a link
// to "../Plot/outline.md" from Characters/Elara.md goes to /view/Plot/outline.md.
type linkRewriter struct{}

// docDirKey carries the folder of the document being rendered.
var docDirKey = parser.NewContextKey()

func (linkRewriter) Transform(doc *ast.Document, _ text.Reader, pc parser.Context) {
	dir, _ := pc.Get(docDirKey).(string)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if l, ok := n.(*ast.Link); ok {
			if h, ok := relativeHref(dir, string(l.Destination)); ok {
				l.Destination = []byte(h)
			}
		}
		return ast.WalkContinue, nil
	})
}

func relativeHref(dir, dest string) (string, bool) {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" || strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	p := path.Clean(path.Join("/", dir, u.Path))[1:]
	if p == "" {
		return "/", true
	}
	h := viewHref(p)
	if u.Fragment != "" {
		h += "#" + url.PathEscape(u.Fragment)
	}
	return h, true
}

func isMarkdown(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".mdown", ".mkd", ".mdx":
		return true
	}
	return false
}

// renderContent renders a document's text: Markdown as HTML, anything else (templates
// too, whose tags are not Markdown) as preformatted text.
func (s *Server) renderContent(v *query.DocumentView) template.HTML {
	if v.Content == "" {
		return ""
	}
	if !isMarkdown(v.Name) || v.Template {
		return template.HTML(`<pre class="text">` + html.EscapeString(v.Content) + `</pre>`)
	}
	var b bytes.Buffer
	pc := parser.NewContext()
	dir := ""
	if !strings.HasPrefix(v.Path, query.SessionPrefix) {
		dir = parentDir(v.Path)
	}
	pc.Set(docDirKey, dir)
	src := []byte(v.Content)
	// Front matter is the document's metadata, not its text: shown as the block it is,
	// where goldmark would read "---" as a rule and its last line as a heading.
	if body := mdtext.ParseMarkdown(src).Body; body > 0 {
		b.WriteString(`<pre class="front-matter" aria-label="Front matter"><code>`)
		b.WriteString(html.EscapeString(frontMatterText(v.Content[:body])))
		b.WriteString("</code></pre>\n")
		src = src[body:]
	}
	if err := s.md.Convert(src, &b, parser.WithContext(pc)); err != nil {
		s.Logger.Warn("rendering Markdown; showing the text", "path", v.Path, "err", err)
		return template.HTML(`<pre class="text">` + html.EscapeString(v.Content) + `</pre>`)
	}
	return template.HTML(b.String()) // goldmark escapes text and omits or escapes raw HTML
}

// frontMatterText is a front matter block without its delimiter lines.
func frontMatterText(block string) string {
	_, inner, _ := strings.Cut(block, "\n")  // the opening "---"
	inner = strings.TrimRight(inner, "\r\n") // the closing line's end
	if i := strings.LastIndexByte(inner, '\n'); i >= 0 {
		return inner[:i+1]
	}
	return "" // nothing between the delimiters
}

// snippetHTML turns a search snippet's **marks** into <mark> elements, escaping the rest.
// A match is one word: a marked stretch with a space in it is the document's own bold.
func snippetHTML(snip string) template.HTML {
	parts := strings.Split(snip, query.MarkOpen)
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 1 && i < len(parts)-1 && p != "" && !strings.ContainsAny(p, " \t"):
			b.WriteString("<mark>" + html.EscapeString(p) + "</mark>")
		case i%2 == 1:
			b.WriteString(html.EscapeString(query.MarkOpen + p))
			if i < len(parts)-1 {
				b.WriteString(html.EscapeString(query.MarkClose))
			}
		default:
			b.WriteString(html.EscapeString(p))
		}
	}
	return template.HTML(b.String())
}

// asset is an embedded file, served with a long cache life under a versioned address.
type asset struct {
	body    []byte
	ctype   string
	version string
}

func loadAssets() map[string]asset {
	out := map[string]asset{}
	_ = fs.WalkDir(assetFS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assetFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[path.Base(p)] = asset{body: b, ctype: mime.TypeByExtension(path.Ext(p)), version: hex.EncodeToString(sum[:6])}
		return nil
	})
	return out
}

func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	a, ok := s.assets[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	_, _ = w.Write(a.body)
}

// assetHref is an asset's address with its version, so that a new binary's assets are
// never taken from an old cache.
var assetVersions = func() map[string]string {
	m := map[string]string{}
	for n, a := range loadAssets() {
		m[n] = a.version
	}
	return m
}()

var funcs = template.FuncMap{
	"asset":     func(name string) string { return "/assets/" + name + "?v=" + assetVersions[name] },
	"viewHref":  viewHref,
	"sessHref":  sessionHref,
	"availHref": availableHref,
	"commas":    commas,
	"deref":     func(p *int64) int64 { return *p },
	"chgHref":   func(folder string) string { return changesHref(folder, "", false) },
	"int":       func(u uint64) int { return int(u) },
	"plural":    plural,
	"snippet":   snippetHTML,
	"sessName":  func(p string) string { return strings.TrimPrefix(p, query.SessionPrefix) },
	"isSession": func(p string) bool { return strings.HasPrefix(p, query.SessionPrefix) },
	"hitHref": func(p string) string {
		if n, ok := strings.CutPrefix(p, query.SessionPrefix); ok {
			return sessionHref(n)
		}
		return viewHref(p)
	},
	"bytes": func(n int64) string {
		switch {
		case n >= 1<<20:
			return formatFloat(float64(n)/(1<<20)) + " MB"
		case n >= 1<<10:
			return formatFloat(float64(n)/(1<<10)) + " KB"
		}
		return plural(int(n), "byte", "bytes")
	},
}

func formatFloat(f float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
}
