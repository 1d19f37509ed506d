package relevance

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The npm set's packages are pinned by the package-lock.json beside this file (in
// tools/relevance/npm), so that every run installs the same READMEs.
const npmDir = "tools/relevance/npm"

// InstallNPM installs the pinned packages into dir (dir/node_modules) with npm ci, unless
// they are there already. repo is the repository's root.
func InstallNPM(repo, dir string) error {
	lock := filepath.Join(repo, npmDir, "package-lock.json")
	want, err := os.ReadFile(lock)
	if err != nil {
		return err
	}
	if have, err := os.ReadFile(filepath.Join(dir, "package-lock.json")); err == nil && string(have) == string(want) {
		if _, err := os.Stat(filepath.Join(dir, "node_modules")); err == nil {
			return nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"package.json", "package-lock.json", ".npmrc"} {
		b, err := os.ReadFile(filepath.Join(repo, npmDir, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w: %s", dir, err, out)
	}
	return nil
}

// NPM builds the set of the packages installed in dir/node_modules (not those nested in
// another package's node_modules): each package's README.md is a document, at
// NAME/README.md, and its package.json description the query that names it. Descriptions
// of fewer than four words, or shared by two packages, are left out: they name no one
// document.
func NPM(dir string) (*Set, error) {
	s := &Set{Name: "npm", About: "npm packages: package.json description → the package's README.md",
		Docs: map[string]string{}}
	nm := filepath.Join(dir, "node_modules")
	var pkgs []string
	entries, err := os.ReadDir(nm)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		switch {
		case !e.IsDir() || strings.HasPrefix(e.Name(), "."):
		case strings.HasPrefix(e.Name(), "@"):
			sub, _ := os.ReadDir(filepath.Join(nm, e.Name()))
			for _, f := range sub {
				if f.IsDir() {
					pkgs = append(pkgs, e.Name()+"/"+f.Name())
				}
			}
		default:
			pkgs = append(pkgs, e.Name())
		}
	}
	slices.Sort(pkgs)
	byDesc := map[string][]string{}
	for _, p := range pkgs {
		var meta struct {
			Description string `json:"description"`
		}
		b, err := os.ReadFile(filepath.Join(nm, p, "package.json"))
		if err != nil || json.Unmarshal(b, &meta) != nil {
			continue
		}
		readme := findReadme(filepath.Join(nm, p))
		if readme == "" {
			continue
		}
		text, err := os.ReadFile(readme)
		if err != nil || len(strings.TrimSpace(string(text))) == 0 {
			continue
		}
		doc := p + "/README.md"
		s.Docs[doc] = string(text)
		d := strings.Join(strings.Fields(meta.Description), " ")
		if len(strings.Fields(d)) >= 4 {
			byDesc[strings.ToLower(d)] = append(byDesc[strings.ToLower(d)], doc)
			s.Queries = append(s.Queries, Query{Text: d, Answer: doc})
		}
	}
	s.Queries = slices.DeleteFunc(s.Queries, func(q Query) bool { return len(byDesc[strings.ToLower(q.Text)]) > 1 })
	return s, nil
}

// findReadme returns the package's Markdown README, whatever its case.
func findReadme(dir string) string {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := strings.ToLower(e.Name()); !e.IsDir() && (n == "readme.md" || n == "readme.markdown") {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}
