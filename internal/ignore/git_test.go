package ignore_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/ignore"
	"github.com/guide/guide/internal/testkit"
)

// gitEnv is a user with nothing configured but what a test writes under home: the
// oracle and the matcher read the same global files.
type gitEnv struct {
	home string
	vars map[string]string
}

func newGitEnv(t testing.TB) gitEnv {
	home := t.TempDir()
	return gitEnv{home: home, vars: map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "xdg"), "GIT_CONFIG_NOSYSTEM": "1",
	}}
}

func (e gitEnv) get(k string) string { return e.vars[k] }

// gitIgnored asks git which of paths (relative to dir, a folder of a repository) it
// ignores: git check-ignore is the oracle of .gitignore semantics.
func (e gitEnv) gitIgnored(t testing.TB, dir string, paths []string) map[string]bool {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed as the oracle of .gitignore semantics")
	}
	cmd := exec.Command(git, "check-ignore", "--no-index", "--stdin")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	out = append(out, stderr.String()...)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) { // 1: none ignored
		t.Fatalf("git check-ignore: %v: %s", err, out)
	}
	got := map[string]bool{}
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p != "" {
			got[p] = true
		}
	}
	return got
}

func gitInit(t testing.TB, e gitEnv, dir string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
}

// tree lists every file and folder below root (relative slash paths), leaving out .git.
func tree(t testing.TB, root string) (paths []string, dirs map[string]bool) {
	t.Helper()
	dirs = map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		paths = append(paths, rel)
		dirs[rel] = d.IsDir()
		return nil
	})
	testkit.NoErr(t, err, "walk")
	return paths, dirs
}

// compare checks the matcher of root against git's decisions on every path below it;
// prefix is root's path from the top of the repository.
func compare(t testing.TB, e gitEnv, top, prefix string) {
	t.Helper()
	root := filepath.Join(top, filepath.FromSlash(prefix))
	if prefix != "" {
		// A root that git ignores is still indexed when asked for (its rules below still
		// apply): only the decisions below a root git does not ignore can be compared.
		var folders []string
		for d := prefix; d != "."; d = path.Dir(d) {
			folders = append(folders, d)
		}
		if len(e.gitIgnored(t, top, folders)) > 0 {
			return
		}
	}
	paths, dirs := tree(t, root)
	asked := make([]string, len(paths))
	for i, p := range paths {
		asked[i] = path.Join(prefix, p)
	}
	want := e.gitIgnored(t, top, asked)
	m, err := ignore.Load(root, ignore.Options{Git: true, Env: e.get})
	testkit.NoErr(t, err, "load")
	var diffs []string
	for i, p := range paths {
		got := m.Ignored(p, dirs[p])
		if got != want[asked[i]] {
			diffs = append(diffs, fmt.Sprintf("%s (dir %v): ignored %v, git says %v", p, dirs[p], got, want[asked[i]]))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("the matcher disagrees with git check-ignore on %d paths (root %q):\n  %s\n%s%s",
			len(diffs), prefix, strings.Join(diffs, "\n  "), describe(t, top), describe(t, e.home))
	}
}

// describe prints every rule file of a tree, for a failure message.
func describe(t testing.TB, top string) string {
	var b strings.Builder
	_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if err == nil && (d.Name() == ".gitignore" || strings.HasSuffix(p, "info/exclude") || d.Name() == "ignore") {
			body, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "--- %s\n%s", p, body)
		}
		return nil
	})
	return b.String()
}

func write(t testing.TB, root, rel, content string) { testkit.WriteFile(t, root, rel, content) }

func TestNestedGitignoreMatchesGit(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string // path → content; rule files included
		root  string            // the content root's path in the repository
	}{
		{name: "RulesRelativeToTheirFolder", files: map[string]string{
			".gitignore":          "*.log\n",
			"docs/.gitignore":     "/draft.md\nbuild/\n!keep.log\n",
			"docs/draft.md":       "",
			"docs/sub/draft.md":   "",
			"draft.md":            "",
			"docs/build/out.md":   "",
			"build/out.md":        "",
			"docs/keep.log":       "",
			"keep.log":            "",
			"docs/sub/a.log":      "",
			"docs/sub/.gitignore": "!a.log\n*.md\n",
			"docs/sub/b.md":       "",
			"docs/other/b.md":     "",
		}},
		{name: "ReincludeInsideExcludedFolder", files: map[string]string{
			".gitignore":     "vendor/\n!vendor/keep.md\ngen/*\n!gen/keep.md\n",
			"vendor/keep.md": "",
			"vendor/x.md":    "",
			"gen/keep.md":    "",
			"gen/x.md":       "",
			"gen/.gitignore": "!x.md\n",
		}},
		{name: "DoubleStar", files: map[string]string{
			".gitignore":   "deep/**\n!deep/keep.md\n**/tmp\na/**/b\n",
			"deep/keep.md": "", "deep/x/y.md": "", "deep.md": "",
			"tmp/x.md": "", "q/tmp/y.md": "",
			"a/b": "", "a/x/b": "", "a/x/y/b": "", "a/c": "",
		}},
		{name: "DirOnlyAndAnchors", files: map[string]string{
			".gitignore": "out/\n/top.md\nsub/*.md\nnotes\n",
			"out/x.md":   "", "a/out/x.md": "", "q/out": "",
			"top.md": "", "a/top.md": "",
			"sub/x.md": "", "a/sub/x.md": "", "sub/y/x.md": "",
			"notes/a.md": "", "a/notes": "",
		}},
		{name: "RootBelowTopOfRepository", root: "site/docs", files: map[string]string{
			".gitignore":           "*.log\nsite/docs/build/\n/site/docs/private.md\n",
			"site/.gitignore":      "docs/cache/\n",
			"site/docs/a.log":      "",
			"site/docs/build/x.md": "",
			"site/docs/private.md": "",
			"site/docs/cache/x.md": "",
			"site/docs/ok.md":      "",
			"site/docs/.gitignore": "!b.log\n",
			"site/docs/b.log":      "",
		}},
		{name: "IgnoredRuleFilesAreStillRead", files: map[string]string{
			".gitignore":   ".gitignore\n",
			"a/.gitignore": "x.md\n",
			"a/x.md":       "",
			"a/y.md":       "",
		}},
		{name: "ByteOrderMarkAndCRLF", files: map[string]string{
			".gitignore": "\ufeff*.bom\r\n!keep.bom\r\n",
			"a.bom":      "", "keep.bom": "", "b.md": "",
		}},
		{name: "EscapesAndClasses", files: map[string]string{
			".gitignore": "\\#hash.md\n\\!bang.md\ntrail.md   \nsp\\ ace.md\n[!x]y.md\ntmp?.md\n",
			"#hash.md":   "", "!bang.md": "", "trail.md": "", "sp ace.md": "",
			"ay.md": "", "xy.md": "", "tmp1.md": "", "tmp12.md": "",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newGitEnv(t)
			top := t.TempDir()
			gitInit(t, e, top)
			for p, body := range c.files {
				write(t, top, p, body)
			}
			compare(t, e, top, c.root)
		})
	}
}

func TestGitExcludeFiles(t *testing.T) {
	t.Run("InfoExclude", func(t *testing.T) {
		e := newGitEnv(t)
		top := t.TempDir()
		gitInit(t, e, top)
		write(t, top, ".git/info/exclude", "*.secret\nlocal/\n")
		write(t, top, "a.secret", "")
		write(t, top, "local/x.md", "")
		write(t, top, "docs/b.secret", "")
		write(t, top, "docs/ok.md", "")
		compare(t, e, top, "")
		compare(t, e, top, "docs")
	})
	t.Run("GlobalDefaultIsXDG", func(t *testing.T) {
		e := newGitEnv(t)
		top := t.TempDir()
		gitInit(t, e, top)
		write(t, e.home, "xdg/git/ignore", "*.bak\n.DS_Store\n")
		write(t, top, "a.bak", "")
		write(t, top, "x/.DS_Store", "")
		write(t, top, "ok.md", "")
		compare(t, e, top, "")
		m, err := ignore.Load(top, ignore.Options{Git: true, Env: e.get})
		testkit.NoErr(t, err, "load")
		testkit.Equal(t, m.Ignored("a.bak", false), true, "a.bak, left out by the global excludes file")
	})
	t.Run("GlobalFromGitconfig", func(t *testing.T) {
		e := newGitEnv(t)
		top := t.TempDir()
		gitInit(t, e, top)
		write(t, e.home, ".gitconfig", "[user]\n\tname = x\n[core]\n\texcludesFile = ~/my-excludes # mine\n")
		write(t, e.home, "my-excludes", "*.orig\n")
		write(t, e.home, "xdg/git/ignore", "*.bak\n") // not read: core.excludesFile is set
		write(t, top, "a.orig", "")
		write(t, top, "a.bak", "")
		compare(t, e, top, "")
	})
	t.Run("RepositoryConfigWins", func(t *testing.T) {
		e := newGitEnv(t)
		top := t.TempDir()
		gitInit(t, e, top)
		write(t, e.home, ".gitconfig", "[core]\n\texcludesfile = ~/global\n")
		write(t, e.home, "global", "*.a\n")
		write(t, e.home, "repo-excludes", "*.b\n")
		cfg, err := os.ReadFile(filepath.Join(top, ".git/config"))
		testkit.NoErr(t, err, "read config")
		write(t, top, ".git/config", string(cfg)+"[core]\n\texcludesFile = \""+filepath.Join(e.home, "repo-excludes")+"\"\n")
		write(t, top, "x.a", "")
		write(t, top, "x.b", "")
		compare(t, e, top, "")
	})
	t.Run("Worktree", func(t *testing.T) {
		// A worktree's .git is a file; the exclude file is the main repository's.
		e := newGitEnv(t)
		main := t.TempDir()
		gitInit(t, e, main)
		write(t, main, "README.md", "x")
		git := func(args ...string) {
			cmd := exec.Command("git", args...)
			cmd.Dir = main
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "GIT_CONFIG_NOSYSTEM=1",
				"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v: %s", args, err, out)
			}
		}
		git("add", ".")
		git("commit", "-q", "-m", "x")
		wt := filepath.Join(t.TempDir(), "wt")
		git("worktree", "add", "-q", wt)
		write(t, main, ".git/info/exclude", "*.local\n")
		write(t, wt, "a.local", "")
		write(t, wt, "b.md", "")
		compare(t, e, wt, "")
		m, err := ignore.Load(wt, ignore.Options{Git: true, Env: e.get})
		testkit.NoErr(t, err, "load")
		testkit.Equal(t, m.Ignored("a.local", false), true, "a.local, left out by the main repository's info/exclude")
	})
}

func TestNoGitLeavesGitRulesOut(t *testing.T) {
	e := newGitEnv(t)
	top := t.TempDir()
	gitInit(t, e, top)
	write(t, top, ".gitignore", "*.log\n")
	write(t, top, ".guideignore", "drafts/\n")
	write(t, top, "a.log", "")
	m, err := ignore.Load(top, ignore.Options{Env: e.get, Extra: []string{"*.tmp2"}})
	testkit.NoErr(t, err, "load")
	testkit.Equal(t, m.Ignored("a.log", false), false, "a.log without git's rules")
	testkit.Equal(t, m.Ignored("drafts/x.md", false), true, ".guideignore still in force")
	testkit.Equal(t, m.Ignored("x.tmp2", false), true, "--ignore still in force")
	testkit.Equal(t, m.Ignored(".git/config", false), true, "the defaults still in force")
}

func TestGuideignoreOverridesGitignore(t *testing.T) {
	e := newGitEnv(t)
	top := t.TempDir()
	write(t, top, ".gitignore", "*.log\n")
	write(t, top, "sub/.gitignore", "!important.log\n")
	write(t, top, ".guideignore", "!keep.log\n")
	m, err := ignore.Load(top, ignore.Options{Git: true, Env: e.get, Extra: []string{"sub/important.log"}})
	testkit.NoErr(t, err, "load")
	for p, want := range map[string]bool{"a.log": true, "keep.log": false, "sub/keep.log": false, "sub/important.log": true, "sub/x.log": true} {
		testkit.Equal(t, m.Ignored(p, false), want, p)
	}
}

// randomTree writes a random tree of files, .gitignore files and exclude files, seeded.
func randomTree(t testing.TB, e gitEnv, top string, seed uint64) (root string) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	names := []string{"a", "b", "c.md", "d.log", "e", "x.txt", ".h", "ab"}
	var dirs = []string{""}
	isFile := map[string]bool{}
	for range 6 + r.IntN(10) {
		depth := 1 + r.IntN(4)
		var parts []string
		ok := true
		for range depth {
			parts = append(parts, names[r.IntN(len(names))])
			if isFile[strings.Join(parts, "/")] {
				ok = false
				break
			}
		}
		p := strings.Join(parts, "/")
		if !ok || slices.Contains(dirs, p) {
			continue
		}
		write(t, top, p, "x")
		isFile[p] = true
		for i := 1; i < len(parts); i++ {
			if d := strings.Join(parts[:i], "/"); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	segs := []string{"a", "b", "*", "?", "**", "*.md", "[ab]", "[!a]*", "d*", "e", "c.md", "x.*", ".h", "a*", "*b"}
	pattern := func() string {
		var s strings.Builder
		if r.IntN(4) == 0 {
			s.WriteString("!")
		}
		if r.IntN(5) == 0 {
			s.WriteString("/")
		}
		n := 1 + r.IntN(3)
		for i := range n {
			if i > 0 {
				s.WriteString("/")
			}
			s.WriteString(segs[r.IntN(len(segs))])
		}
		if r.IntN(4) == 0 {
			s.WriteString("/")
		}
		return s.String()
	}
	rules := func() string {
		var lines []string
		for range 1 + r.IntN(4) {
			lines = append(lines, pattern())
		}
		return strings.Join(lines, "\n") + "\n"
	}
	for range r.IntN(4) {
		d := dirs[r.IntN(len(dirs))]
		write(t, top, path.Join(d, ".gitignore"), rules())
	}
	if r.IntN(3) == 0 {
		write(t, top, ".git/info/exclude", rules())
	}
	if r.IntN(3) == 0 {
		write(t, e.home, "xdg/git/ignore", rules())
	}
	if r.IntN(3) == 0 {
		return dirs[r.IntN(len(dirs))]
	}
	return ""
}

func checkRandomTree(t *testing.T, seed uint64) {
	e := newGitEnv(t)
	top := t.TempDir()
	gitInit(t, e, top)
	root := randomTree(t, e, top, seed)
	compare(t, e, top, root)
}

// TestRandomTreesMatchGit generates trees, rule files at every level and exclude files,
// and compares every decision with git check-ignore.
func TestRandomTreesMatchGit(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 30
	}
	for seed := range uint64(n) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkRandomTree(t, seed) })
	}
}

// FuzzTreesMatchGit explores more seeds of the same generator: go test -fuzz=FuzzTreesMatchGit.
func FuzzTreesMatchGit(f *testing.F) {
	f.Add(uint64(1))
	f.Fuzz(func(t *testing.T, seed uint64) { checkRandomTree(t, seed) })
}
