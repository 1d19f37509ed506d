package main

import (
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
