package ignore_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/guide/guide/internal/ignore"
	"github.com/guide/guide/internal/testkit"
)

var rules = `
# comment
*.log
!keep.log
build/
/root-only.md
docs/**/draft-*.md
**/secret
a/**/b
tmp?.txt
[!x]y.txt
\#hash.md
trailing-space.md   
notes/*.bak
deep/**
`

var paths = []string{
	"a.log", "keep.log", "sub/x.log", "sub/keep.log",
	"build/out.md", "sub/build/out.md", "build.md",
	"root-only.md", "sub/root-only.md",
	"docs/draft-1.md", "docs/x/y/draft-2.md", "docs/final.md", "other/docs/x/draft-3.md",
	"secret", "x/secret", "x/y/secret/inner.md",
	"a/b", "a/x/b", "a/x/y/b", "a/c",
	"tmp1.txt", "tmp12.txt",
	"ay.txt", "xy.txt",
	"#hash.md",
	"trailing-space.md",
	"notes/old.bak", "notes/sub/old.bak",
	"deep/a/b/c.md", "deep.md",
}

// TestMatchesGit compares the matcher with git's own decisions on the same tree.
func TestMatchesGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed as the oracle of .gitignore semantics")
	}
	dir := t.TempDir()
	run := func(stdin string, args ...string) string {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		out, _ := cmd.Output() // check-ignore exits 1 when nothing matches
		return string(out)
	}
	run("", "init", "-q")
	testkit.NoErr(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(rules), 0o644), "write .gitignore")
	for _, p := range paths {
		testkit.WriteFile(t, dir, p, "x")
	}
	want := strings.Fields(run(strings.Join(paths, "\n"), "check-ignore", "--stdin"))
	sort.Strings(want)

	m, err := ignore.New(ignore.Parse(".gitignore", rules))
	testkit.NoErr(t, err, "compile")
	var got []string
	for _, p := range paths {
		if m.Ignored(p, false) {
			got = append(got, p)
		}
	}
	sort.Strings(got)
	testkit.Equal(t, got, want, "ignored paths (git check-ignore is the oracle)")
}

func TestDefaults(t *testing.T) {
	m, err := ignore.New(ignore.DefaultSource())
	testkit.NoErr(t, err, "compile")
	for p, want := range map[string]bool{
		".git/config": true, "sub/.hg/x": true, "notes.md": false,
		".notes.md.swp": true, "notes.md~": true, ".#notes.md": true, "4913": true,
		"notes.md.tmp": true, "notes.md___jb_tmp___": true, "swp.md": false,
	} {
		if got := m.Ignored(p, false); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestBadRuleNamesLine(t *testing.T) {
	_, err := ignore.New(ignore.Parse(".guideignore", "ok.md\n[unclosed\n"))
	if err == nil || !strings.Contains(err.Error(), ".guideignore:2:") {
		t.Fatalf("err = %v; want one naming .guideignore:2", err)
	}
}

// FuzzIgnore: any rule text compiles or fails with a line number, and matching never panics.
func FuzzIgnore(f *testing.F) {
	f.Add(rules, "docs/x/draft-1.md")
	f.Add("**/**/a\n!b/\n[", "a/b")
	f.Fuzz(func(t *testing.T, text, p string) {
		m, err := ignore.New(ignore.Parse("f", text))
		if err != nil {
			if !strings.Contains(err.Error(), "f:") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		_ = m.Ignored(p, false)
		_ = m.Ignored(p, true)
	})
}
