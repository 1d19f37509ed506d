package soak

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/internal/testkit/oracle"
	"github.com/guide/guide/tools/corpus"
)

// A seed replays: two trees built from one corpus and one seed go through the same
// operations and end up holding the same files.
func TestSameSeedSameOperations(t *testing.T) {
	run := func() ([]string, map[string]oracle.Doc) {
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
		files, err := oracle.Disk(root, oracle.Options{Project: project})
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
