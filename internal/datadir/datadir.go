// Package datadir says where guide keeps a project's state on this machine, and keeps the
// indexer out of that state when it lies inside the content root.
package datadir

import (
	"os"
	"path/filepath"
	"strings"
)

// DataHome is where guide keeps its state by default: $XDG_DATA_HOME/guide, or
// ~/.local/share/guide.
func DataHome() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "guide")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "guide")
	}
	return filepath.Join(home, ".local", "share", "guide")
}

// ProjectName is the default name of the project at root: the root's base name.
func ProjectName(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return filepath.Base(root)
	}
	return filepath.Base(abs)
}

// SkipInside returns a Skip rule that keeps an indexer out of data, its own data directory,
// when that lies inside the content root; nil when it does not.
func SkipInside(root, data string) func(rel string, dir bool) bool {
	r, err1 := filepath.Abs(root)
	d, err2 := filepath.Abs(data)
	if err1 != nil || err2 != nil {
		return nil
	}
	rel, err := filepath.Rel(r, d)
	if err != nil || rel == "." || rel == ".." || filepath.IsAbs(rel) ||
		strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	rel = filepath.ToSlash(rel)
	return func(p string, dir bool) bool { return dir && p == rel }
}
