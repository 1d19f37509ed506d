package owner

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFirstFolder: the first root that is a local folder is served, named by its canonical
// path; roots that are not local folders are passed over, and those after it are listed.
func TestFirstFolder(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(base, "a b"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(base, "f.md")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	uri := func(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }
	for _, tc := range []struct {
		name   string
		roots  []string
		root   string
		others []string
	}{
		{"none", nil, "", nil},
		{"one folder", []string{uri(a)}, a, nil},
		{"escaped path", []string{"file://" + filepath.ToSlash(base) + "/a%20b"}, a, nil},
		{"localhost", []string{"file://localhost" + b}, b, nil},
		{"symbolic link", []string{uri(link)}, b, nil},
		{"several: the first", []string{uri(a), uri(b)}, a, []string{uri(b)}},
		{"not local folders passed over", []string{"https://example.com/docs", "file://host/x", uri(file),
			uri(filepath.Join(base, "missing")), "file:relative", uri(b), uri(a)}, b, []string{uri(a)}},
		{"no folder", []string{uri(file), "https://example.com"}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var roots []Root
			for _, r := range tc.roots {
				roots = append(roots, Root{URI: r})
			}
			root, others := FirstFolder(roots)
			if root != tc.root || !slices.Equal(others, tc.others) {
				t.Errorf("FirstFolder(%v) = %q, %v; want %q, %v", tc.roots, root, others, tc.root, tc.others)
			}
		})
	}
}
