package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestOnceGitignore: indexer --once honours the repository's .gitignore files, and
// --no-gitignore leaves them out; the rule files are never documents.
func TestOnceGitignore(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, ".gitignore", "node_modules/\n*.log\n")
	testkit.WriteFile(t, root, "docs/.gitignore", "draft-*\n")
	testkit.WriteFile(t, root, "docs/guide.md", "# Guide\n")
	testkit.WriteFile(t, root, "docs/draft-1.md", "wip\n")
	testkit.WriteFile(t, root, "node_modules/x/README.md", "dependency\n")
	testkit.WriteFile(t, root, "build.log", "noise\n")
	for _, c := range []struct {
		flags []string
		want  int
	}{
		{nil, 1},
		{[]string{"--no-gitignore"}, 4},
	} {
		var out bytes.Buffer
		m := &Main{Stdout: &out, Logger: testkit.Logger()}
		args := append([]string{"--once", "--json", "--root", root, "--data", t.TempDir()}, c.flags...)
		testkit.NoErr(t, m.ParseFlags(args), "flags")
		code := m.Run(context.Background())
		m.Close()
		testkit.Equal(t, code, ExitOK, "exit code")
		var sum struct{ Documents int }
		testkit.NoErr(t, json.Unmarshal(out.Bytes(), &sum), "summary "+out.String())
		testkit.Equal(t, sum.Documents, c.want, fmt.Sprintf("documents with flags %v", c.flags))
	}
}
