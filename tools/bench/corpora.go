package bench

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/guide/guide/internal/guideyaml"
	"github.com/guide/guide/internal/ignore"
	"github.com/guide/guide/tools/corpus"
	"github.com/guide/guide/tools/report"
)

// manifest records how a stored corpus was made, beside (not inside) its tree.
type manifest struct {
	Docs    int          `json:"docs"`
	Seed    uint64       `json:"seed"`
	Version int          `json:"generator_version"`
	Stats   corpus.Stats `json:"stats"`
}

// vcsDirs are left out, as the indexer leaves them out.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, "_darcs": true, ".jj": true, ".fossil": true}

// generated returns the generated corpus of docs documents, made again only when the
// stored one was made with other parameters or did not finish.
func generated(dir string, docs int, seed uint64, logf func(string, ...any)) (*report.Corpus, error) {
	name := fmt.Sprintf("gen-%d", docs)
	root, err := filepath.Abs(filepath.Join(dir, "corpora", name))
	if err != nil {
		return nil, err
	}
	mfile := root + ".json"
	want := manifest{Docs: docs, Seed: seed, Version: corpus.Version}
	var have manifest
	c := &report.Corpus{Name: fmt.Sprintf("generated %d", docs), Root: root, Generated: true}
	if b, err := os.ReadFile(mfile); err == nil && json.Unmarshal(b, &have) == nil &&
		have.Docs == want.Docs && have.Seed == want.Seed && have.Version == want.Version {
		logf("reusing %s", root)
	} else {
		logf("generating %d documents in %s", docs, root)
		_ = os.Remove(mfile)
		if err := os.RemoveAll(root); err != nil {
			return nil, err
		}
		start := time.Now()
		st, err := corpus.Generate(root, corpus.Options{Docs: docs, Seed: seed})
		if err != nil {
			return nil, err
		}
		c.GenTime = time.Since(start)
		want.Stats = st
		b, _ := json.MarshalIndent(want, "", "  ")
		if err := os.WriteFile(mfile, b, 0o644); err != nil {
			return nil, err
		}
	}
	return c, listTree(c)
}

// realTree is an existing tree, such as the Go toolchain's sources.
func realTree(name, root string) (*report.Corpus, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, err
	}
	c := &report.Corpus{Name: name, Root: abs}
	return c, listTree(c)
}

// list walks the tree once for the files and folders to ask about: the documents guide
// lists, leaving out what its ignore rules leave out (the built-in ones, the repository's,
// a root .guideignore) and the files of rules and configuration (view would answer
// not_found for those).
func listTree(c *report.Corpus) error {
	rules, err := ignore.Load(c.Root, ignore.Options{Git: true})
	if err != nil {
		return err
	}
	folders := map[string]bool{"": true}
	c.Files, c.Bytes = nil, 0
	err = filepath.WalkDir(c.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == c.Root {
			return nil
		}
		rel := filepath.ToSlash(p[len(c.Root)+1:])
		if d.IsDir() {
			if vcsDirs[d.Name()] || rules.Self(rel, true) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || rules.Self(rel, false) || ignore.RuleFile(rel) || rel == guideyaml.FileName {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		c.Files = append(c.Files, rel)
		c.Bytes += info.Size()
		for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
			if folders[dir] {
				break
			}
			folders[dir] = true
		}
		return nil
	})
	c.Folders = c.Folders[:0]
	for f := range folders {
		c.Folders = append(c.Folders, f)
	}
	slices.Sort(c.Folders)
	slices.Sort(c.Files)
	return err
}
