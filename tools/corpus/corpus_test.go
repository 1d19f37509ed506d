package corpus_test

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guide/guide/internal/testkit"
	"github.com/guide/guide/tools/corpus"
)

// digest maps every file of a tree to the hash of its bytes.
func digest(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = sha256.Sum256(b)
		return nil
	})
	testkit.NoErr(t, err, "walk")
	return out
}

func TestGenerateIsDeterministic(t *testing.T) {
	o := corpus.Options{Docs: 300, Seed: 7}
	a, b := t.TempDir(), t.TempDir()
	sa, err := corpus.Generate(a, o)
	testkit.NoErr(t, err, "generate a")
	sb, err := corpus.Generate(b, o)
	testkit.NoErr(t, err, "generate b")
	testkit.Equal(t, sa, sb, "stats")
	da, db := digest(t, a), digest(t, b)
	testkit.Equal(t, len(da), o.Docs, "documents written")
	testkit.Equal(t, da, db, "trees of the same seed")

	t.Run("OtherSeedDiffers", func(t *testing.T) {
		c := t.TempDir()
		_, err := corpus.Generate(c, corpus.Options{Docs: 300, Seed: 8})
		testkit.NoErr(t, err, "generate c")
		same := 0
		for p, h := range digest(t, c) {
			if da[p] == h {
				same++
			}
		}
		if same > 10 {
			t.Fatalf("%d of 300 documents identical across seeds", same)
		}
	})
}

func TestGenerateIsRealistic(t *testing.T) {
	root := t.TempDir()
	st, err := corpus.Generate(root, corpus.Options{Docs: 2000, Seed: 1})
	testkit.NoErr(t, err, "generate")
	if st.Folders < 20 || st.MaxDepth < 3 || st.Templates == 0 || st.LargestFolder < 60 {
		t.Fatalf("tree too plain: %+v", st)
	}
	var small, large, foreign int
	for p := range digest(t, root) {
		b, err := os.ReadFile(filepath.Join(root, p))
		testkit.NoErr(t, err, "read")
		if !utf8.Valid(b) || !utf8.ValidString(p) {
			t.Fatalf("%s: not UTF-8", p)
		}
		if len(b) < corpus.MinSize-100 || len(b) > corpus.MaxSize {
			t.Fatalf("%s: %d bytes", p, len(b))
		}
		if len(b) < 1000 {
			small++
		}
		if len(b) > 10_000 {
			large++
		}
		if strings.ContainsAny(string(b), "ДдИиВв文的이는ßäöü") {
			foreign++
		}
		if !strings.Contains(string(b), "# ") {
			t.Fatalf("%s: no heading", p)
		}
	}
	if small == 0 || large == 0 || foreign == 0 {
		t.Fatalf("sizes or languages too uniform: %d small, %d large, %d with other scripts", small, large, foreign)
	}
}
