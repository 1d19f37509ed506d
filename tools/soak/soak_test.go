package soak

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/corpus"
)

// A seed replays: two trees built from one corpus and one seed go through the same
// operations and end up holding the same files.
func TestSameSeedSameOperations(t *testing.T) {
	run := func() ([]string, map[string]string) {
		dir := t.TempDir()
		root := filepath.Join(dir, "root")
		_, err := corpus.Generate(root, corpus.Options{Docs: 60, Seed: 3})
		testkit.NoErr(t, err, "corpus")
		tr, err := newTree(root, filepath.Join(dir, "outside"), "soakoutsidemarker", rand.New(rand.NewPCG(3, 0x50a4)))
		testkit.NoErr(t, err, "tree")
		var log []string
		for range 400 {
			o := tr.step()
			if o.Err != "" {
				t.Fatalf("%s", o)
			}
			log = append(log, strings.ReplaceAll(o.String(), dir, "DIR"))
		}
		files, err := disk(root)
		testkit.NoErr(t, err, "disk")
		return log, files
	}
	log1, files1 := run()
	log2, files2 := run()
	testkit.Equal(t, log2, log1, "operations")
	testkit.Equal(t, files2, files1, "files")
	kinds := map[string]bool{}
	for _, l := range log1 {
		kinds[strings.Fields(l)[0]] = true
	}
	for _, k := range fsKinds {
		if !kinds[k.kind] {
			t.Errorf("400 operations never did %s", k.kind)
		}
	}
}

// The disk oracle reads links as the indexer does.
func TestDiskReadsLinksAsTheIndexer(t *testing.T) {
	dir := t.TempDir()
	root, outside := filepath.Join(dir, "root"), filepath.Join(dir, "outside")
	testkit.WriteFile(t, root, "a.md", "alpha")
	testkit.WriteFile(t, root, "sub/b.md", "beta")
	testkit.WriteFile(t, outside, "secret.md", "secret")
	for link, target := range map[string]string{
		"inside.md":  filepath.Join(root, "a.md"),              // a document with a.md's content
		"outside.md": filepath.Join(outside, "secret.md"),      // listed, never read
		"broken.md":  filepath.Join(root, "gone.md"),           // listed, unreadable
		"folder":     filepath.Join(root, "sub"),               // not followed: sub is indexed where it is
		"away":       outside,                                  // listed as leaving the root, never read
		"sub/up.md":  filepath.Join(root, "sub", "..", "a.md"), // a link inside a folder
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := disk(root)
	testkit.NoErr(t, err, "disk")
	testkit.Equal(t, got, map[string]string{
		"a.md": "alpha", "sub/b.md": "beta", "inside.md": "alpha", "outside.md": "", "broken.md": "", "sub/up.md": "alpha", "away": "",
	}, "documents")
}
