package diff_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/guide/guide/internal/diff"
	"github.com/guide/guide/internal/testkit"
)

func randomText(r *rand.Rand, n, alphabet int) string {
	var b strings.Builder
	for range n {
		b.WriteString("line " + strconv.Itoa(r.IntN(alphabet)) + "\n")
	}
	s := b.String()
	if r.IntN(3) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func mutate(r *rand.Rand, s string) string {
	ls := diff.Lines(s)
	for range r.IntN(6) {
		switch i := r.IntN(len(ls) + 1); r.IntN(3) {
		case 0:
			ls = append(ls[:i], append([]string{"new " + strconv.Itoa(r.IntN(100)) + "\n"}, ls[i:]...)...)
		case 1:
			if i < len(ls) {
				ls = append(ls[:i], ls[i+1:]...)
			}
		case 2:
			if i < len(ls) {
				ls[i] = "changed " + strconv.Itoa(r.IntN(100)) + "\n"
			}
		}
	}
	out := strings.Join(ls, "")
	if r.IntN(4) == 0 {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}

// TestUnifiedApplies: for random texts and random edits of them, the diff applied to the
// first text gives the second, at every context size.
func TestUnifiedApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var a, b string
		switch i % 3 {
		case 0:
			a = randomText(r, r.IntN(30), 5)
			b = randomText(r, r.IntN(30), 5)
		default:
			a = randomText(r, r.IntN(60), 40)
			b = mutate(r, a)
		}
		ctx := r.IntN(4)
		d := diff.Unified("a/x", "b/x", a, b, ctx)
		got, err := testkit.ApplyDiff(a, d)
		if err != nil || got != b {
			t.Fatalf("case %d (context %d): %v\na=%q\nb=%q\ndiff:\n%s\ngot=%q", i, ctx, err, a, b, d, got)
		}
		if (d == "") != (a == b) {
			t.Fatalf("case %d: empty diff %v for equal %v", i, d == "", a == b)
		}
	}
}

// TestUnifiedBeyondMaxEdits: texts too different for the bounded search still give an
// exact diff (the middle replaced whole).
func TestUnifiedBeyondMaxEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a := randomText(r, 3000, 1_000_000)
	b := randomText(r, 3000, 1_000_000)
	d := diff.Unified("a/x", "b/x", a, b, 3)
	got, err := testkit.ApplyDiff(a, d)
	if err != nil || got != b {
		t.Fatalf("%v", err)
	}
}

// TestUnifiedFormat pins the format on a small case, as diff -u writes it: changes
// at most twice the context apart share a hunk.
func TestUnifiedFormat(t *testing.T) {
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"
	b := "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine"
	want := `--- a/f.md
+++ b/f.md
@@ -1,8 +1,9 @@
 one
 two
-three
+THREE
 four
 five
 six
 seven
 eight
+nine
\ No newline at end of file
`
	if got := diff.Unified("a/f.md", "b/f.md", a, b, 3); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
