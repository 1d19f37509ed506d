package main

import (
	"path/filepath"
	"testing"

	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/testkit"
)

// TestDefaultConfig: a command line that gives only the root leaves every other setting at
// DefaultConfig's value, or derived from the root.
func TestDefaultConfig(t *testing.T) {
	root := t.TempDir()
	m := &Main{Logger: testkit.Logger()}
	testkit.NoErr(t, m.ParseFlags([]string{"--root", root}), "flags")
	want := DefaultConfig()
	want.Root, want.Project = root, datadir.ProjectName(root)
	want.DataDir = filepath.Join(datadir.DataHome(), want.Project, "nats")
	testkit.Equal(t, m.Config, want, "config")
}
