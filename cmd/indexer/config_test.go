package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestOnceInvalidConfig: indexer --once with a broken guide.yaml publishes the documents,
// not the configuration, and exits with ExitUsage. guide.yaml itself is configuration, not a
// document.
func TestOnceInvalidConfig(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, "a/doc.md", "# Doc\n")
	testkit.WriteFile(t, root, "guide.yaml", "categories:\n  a:\n    dir: a\n  b:\n    nope: 1\n")
	var out bytes.Buffer
	m := &Main{Stdout: &out, Logger: testkit.Logger()}
	testkit.NoErr(t, m.ParseFlags([]string{"--once", "--root", root, "--data", t.TempDir()}), "flags")
	code := m.Run(context.Background())
	m.Close()
	testkit.Equal(t, code, ExitUsage, "exit code")
	if !strings.Contains(out.String(), "1 documents: 1 published") || !strings.Contains(out.String(), `guide.yaml:5: category "b": unknown key "nope"`) {
		t.Errorf("summary %q", out.String())
	}
}
