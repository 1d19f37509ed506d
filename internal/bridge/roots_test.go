package bridge

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

// FuzzFirstFolder: whatever URIs a client sends as its roots, the folder chosen is absolute,
// clean, free of symbolic links and a folder, or none; and every root after it is named.
func FuzzFirstFolder(f *testing.F) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "docs"), 0o755); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"file://" + base + "/docs", "file://localhost" + base, "file:///etc/passwd",
		"https://example.com/x", "file://host/share", "file:docs", "file://" + base + "/%2e%2e/docs", "\x00", "%zz"} {
		f.Add(s, "file://"+base)
	}
	f.Fuzz(func(t *testing.T, first, second string) {
		root, others := FirstFolder([]Root{{URI: first}, {URI: second}})
		if root == "" {
			if len(others) > 1 {
				t.Fatalf("no folder chosen, yet %d roots named as others", len(others))
			}
			return
		}
		if !filepath.IsAbs(root) || filepath.Clean(root) != root {
			t.Fatalf("root %q is not an absolute clean path", root)
		}
		if real, err := filepath.EvalSymlinks(root); err != nil || real != root {
			t.Fatalf("root %q resolves to %q (%v)", root, real, err)
		}
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			t.Fatalf("root %q is not a folder", root)
		}
	})
}
