package relevance

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// GoDoc builds two sets from the Go toolchain's packages (goroot/src): each package's
// documentation is rendered as a Markdown page, PATH/README.md — the package comment, then
// a "## func Name" section per documented function and method — and the queries are
// the package synopsis less its "Package x" (set "go-synopsis"), and a documented
// function's first sentence less its name (set "go-func", whose answer's section is that
// function's). maxFunc caps the function queries, taken evenly across the packages.
func GoDoc(goroot string, maxFunc int) (synopsis, funcs *Set, err error) {
	docs := map[string]string{}
	synopsis = &Set{Name: "go-synopsis", About: "Go packages: the package synopsis less \"Package x\" → the package's page", Docs: docs}
	funcs = &Set{Name: "go-func", About: "Go packages: a function's first doc sentence less its name → the package's page (section: the function's)", Docs: docs}
	src := filepath.Join(goroot, "src")
	var dirs []string
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "internal", "vendor":
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(src, dir)
		importPath := filepath.ToSlash(rel)
		p, err := parsePackage(dir, importPath)
		if err != nil || p == nil || strings.TrimSpace(p.Doc) == "" {
			continue
		}
		page, fqs := render(p, importPath)
		doc := importPath + "/README.md"
		docs[doc] = page
		if syn := strings.TrimSpace(p.Synopsis(p.Doc)); syn != "" {
			text := stripLead(syn, "Package "+p.Name)
			if len(strings.Fields(text)) >= 4 {
				synopsis.Queries = append(synopsis.Queries, Query{Text: text, Answer: doc})
			}
		}
		for i := range fqs {
			fqs[i].Answer = doc
		}
		funcs.Queries = append(funcs.Queries, fqs...)
	}
	// Function sentences that appear for two functions name neither.
	count := map[string]int{}
	for _, q := range funcs.Queries {
		count[strings.ToLower(q.Text)]++
	}
	funcs.Queries = slices.DeleteFunc(funcs.Queries, func(q Query) bool { return count[strings.ToLower(q.Text)] > 1 })
	if n := len(funcs.Queries); maxFunc > 0 && n > maxFunc {
		var kept []Query
		for i := range maxFunc {
			kept = append(kept, funcs.Queries[i*n/maxFunc])
		}
		funcs.Queries = kept
	}
	return synopsis, funcs, nil
}

func parsePackage(dir, importPath string) (*doc.Package, error) {
	// The files of one platform, fixed, so that a function with a file per system is
	// documented once, and the same on every machine.
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", true
	bp, err := ctx.ImportDir(dir, 0)
	if err != nil {
		return nil, nil
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range append(bp.GoFiles, bp.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}
	return doc.NewFromFiles(fset, files, importPath)
}

// render writes a package's page and the function queries it answers.
func render(p *doc.Package, importPath string) (string, []Query) {
	var b strings.Builder
	pr := p.Printer()
	pr.HeadingLevel = 2
	fmt.Fprintf(&b, "# %s\n\n", importPath)
	b.Write(pr.Markdown(p.Parser().Parse(p.Doc)))
	pr.HeadingLevel = 3
	var qs []Query
	section := func(heading, name, text string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n", heading)
		b.Write(pr.Markdown(p.Parser().Parse(text)))
		first := stripLead(strings.TrimSpace(p.Synopsis(text)), name)
		if len(strings.Fields(first)) >= 5 {
			qs = append(qs, Query{Text: first, Section: heading})
		}
	}
	fn := func(f *doc.Func) {
		heading := "func " + f.Name
		if f.Recv != "" {
			heading = "func (" + f.Recv + ") " + f.Name
		}
		section(heading, f.Name, f.Doc)
	}
	for _, f := range p.Funcs {
		fn(f)
	}
	for _, t := range p.Types {
		section("type "+t.Name, t.Name, t.Doc)
		for _, f := range t.Funcs {
			fn(f)
		}
		for _, f := range t.Methods {
			fn(f)
		}
	}
	return b.String(), qs
}

// stripLead removes a leading name ("Marshal returns …" → "returns …"), so that a query
// does not hold the identifier it is about.
func stripLead(s, lead string) string {
	if rest, ok := strings.CutPrefix(s, lead+" "); ok {
		return rest
	}
	return s
}
