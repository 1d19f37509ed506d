package main

import (
	"strings"
	"testing"

	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/testkit"
)

// TestDefaultConfig: a command line that gives only the root leaves every other setting at
// DefaultConfig's value, so the defaults live in one place.
func TestDefaultConfig(t *testing.T) {
	root := t.TempDir()
	m := &Main{Logger: testkit.Logger()}
	testkit.NoErr(t, m.ParseFlags([]string{"--root", root}), "flags")
	want := DefaultConfig()
	want.Root, want.Project = root, datadir.ProjectName(root)
	testkit.Equal(t, m.Config, want, "config")
}

// TestNoRootNamesTheFix: over HTTP with neither --root nor --nats, the error is the command
// line that works; over stdio the folder may come from the client's roots.
func TestNoRootNamesTheFix(t *testing.T) {
	m := &Main{Logger: testkit.Logger()}
	testkit.NoErr(t, m.ParseFlags(nil), "stdio with no --root")
	err := m.ParseFlags([]string{"--http", "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "guide-mcp --root /path/to/docs") {
		t.Fatalf("err = %v; want one that shows guide-mcp --root /path/to/docs", err)
	}
	err = m.ParseFlags([]string{"--root", t.TempDir(), "--nats", "nats://127.0.0.1:4222"})
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("err = %v; want --root and --nats refused together", err)
	}
}
