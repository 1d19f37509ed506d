// Package diff compares two texts line by line and writes the difference as a unified
// diff, the format of `diff -u` and `git diff` that patch applies.
package diff

import (
	"fmt"
	"strings"
)

// MaxEdits bounds the edit distance (lines deleted plus lines inserted, past the common
// start and end) the search for a shortest edit goes up to: its time grows with the
// lines times that distance, its memory with the distance squared. Past it, the differing
// middle is written as deleted whole, then inserted whole: a longer diff, still exact.
const MaxEdits = 1000

// op is one line of an edit script: kept, deleted from a, or inserted from b.
type op struct {
	kind byte // ' ', '-', '+'
	a, b int  // line index in a (kept, deleted) and in b (kept, inserted)
}

// Lines splits s into lines, each with its "\n" but the last when s does not end in one.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Unified returns the unified diff of a and b with context lines around each change,
// under the headers "--- from" and "+++ to"; "" when a and b are equal.
func Unified(from, to, a, b string, context int) string {
	if a == b {
		return ""
	}
	al, bl := Lines(a), Lines(b)
	script := edits(al, bl)
	var w strings.Builder
	fmt.Fprintf(&w, "--- %s\n+++ %s\n", from, to)
	for i := 0; i < len(script); {
		// A hunk starts context lines before a change and ends where two changes are more
		// than 2×context kept lines apart.
		if script[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		end := i
		for j := i; j < len(script); j++ {
			if script[j].kind != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*context {
				break
			}
		}
		stop := min(end+context, len(script))
		writeHunk(&w, script[start:stop], al, bl)
		i = stop
	}
	return w.String()
}

// writeHunk writes one hunk: its header, then its lines.
func writeHunk(w *strings.Builder, h []op, al, bl []string) {
	aStart, bStart := -1, -1
	aCount, bCount := 0, 0
	for _, o := range h {
		if o.kind != '+' {
			if aStart < 0 {
				aStart = o.a
			}
			aCount++
		}
		if o.kind != '-' {
			if bStart < 0 {
				bStart = o.b
			}
			bCount++
		}
	}
	// A side with no line names the line before the hunk (0 when at the start).
	if aStart < 0 {
		aStart = h[0].a
	} else {
		aStart++
	}
	if bStart < 0 {
		bStart = h[0].b
	} else {
		bStart++
	}
	fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", aStart, aCount, bStart, bCount)
	for _, o := range h {
		line := ""
		switch o.kind {
		case '-', ' ':
			line = al[o.a]
		case '+':
			line = bl[o.b]
		}
		w.WriteByte(o.kind)
		w.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// edits returns an edit script turning a into b: the common start and end kept, a
// shortest edit of the middle (Myers' O(ND) search) when within MaxEdits, else the middle
// deleted and inserted whole. Each op's a and b say where it stands in both texts.
func edits(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]op, 0, len(a)+len(b)-pre-suf)
	for i := range pre {
		out = append(out, op{' ', i, i})
	}
	out = middle(out, a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre)
	for i := range suf {
		ai, bi := len(a)-suf+i, len(b)-suf+i
		out = append(out, op{' ', ai, bi})
	}
	return out
}

// middle appends the edit script of a into b, whose lines start at ao and bo.
func middle(out []op, a, b []string, ao, bo int) []op {
	n, m := len(a), len(b)
	whole := func() []op {
		for i := range n {
			out = append(out, op{'-', ao + i, bo})
		}
		for j := range m {
			out = append(out, op{'+', ao + n, bo + j})
		}
		return out
	}
	if n == 0 || m == 0 {
		return whole()
	}
	maxD := min(n+m, MaxEdits)
	// v[k+off] is the furthest x on diagonal k; trace keeps v after each d, for the
	// way back. Only diagonals -d..d are reachable at step d, so each copy is 2d+1 long.
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	var trace [][]int32
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = int(v[off+k+1]) // down: an insertion
			} else {
				x = int(v[off+k-1]) + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				found = d
				break
			}
		}
		snap := make([]int32, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
	}
	if found < 0 {
		return whole()
	}
	// Walk back from (n, m), collecting the script in reverse.
	rev := make([]op, 0, n+m)
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1] // diagonals -(d-1)..d-1
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, op{' ', ao + x, bo + y})
		}
		if pk == k+1 {
			y--
			rev = append(rev, op{'+', ao + x, bo + y})
		} else {
			x--
			rev = append(rev, op{'-', ao + x, bo + y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{' ', ao + x, bo + y})
	}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out
}
