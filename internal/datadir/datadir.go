// Package datadir says where guide keeps a project's state on this machine, and keeps the
// indexer out of that state when it lies inside the content root.
package datadir

import (
	"crypto/sha256"
	"encoding/hex"
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

// Canonical is root as one path whatever way it is named: absolute, cleaned, with its
// symbolic links resolved (root as given when it cannot be resolved).
func Canonical(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return filepath.Clean(root)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// ProjectName is the default name of the project at root: the root's base name and a
// short hash of its canonical path, e.g. docs-3f9a2c1b, so that two folders of the same
// name never share a project, and every path to one folder names the same project.
func ProjectName(root string) string {
	c := Canonical(root)
	sum := sha256.Sum256([]byte(c))
	base := filepath.Base(c)
	if base == string(filepath.Separator) || base == "." {
		base = "root"
	}
	return base + "-" + hex.EncodeToString(sum[:4])
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
