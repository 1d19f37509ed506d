package projection

import (
	"bufio"
	"bytes"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/guide/guide/internal/text"
)

type scannedLine struct {
	n     int
	line  string
	front bool
}

func scanAll(b []byte, maxLine int) []scannedLine {
	var out []scannedLine
	scanLines(b, maxLine, func(n int, line string, front bool) bool {
		out = append(out, scannedLine{n, line, front})
		return true
	})
	return out
}

// linesByScanner is what scanLines passed when it read b through a bufio.Scanner (lines
// split at "\n", a trailing "\r" dropped, no empty line after a final newline), with the
// delimiters of front matter left out as scanLines leaves them out.
func linesByScanner(b []byte) []scannedLine {
	_, body, hasFront := text.FrontMatter(b)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+2)
	var out []scannedLine
	n, off := 0, 0
	for sc.Scan() {
		line := sc.Text()
		n++
		start := off
		off += len(line) + 1
		front := hasFront && start < body
		if t := strings.TrimSpace(line); front && (n == 1 || off >= body && (t == "---" || t == "...")) {
			continue
		}
		out = append(out, scannedLine{n, line, front})
	}
	return out
}

func TestScanLines(t *testing.T) {
	for _, in := range []string{
		"", "\n", "\n\n", "a", "a\n", "a\nb", "a\r\nb\r\n", "a\r\r\nb", "\r", "a\n\nb\n\n",
		"---\ntitle: t\n---\n# h\nbody", "---\r\ntitle: t\r\n...\r\ntext", "---\nno end\n# h",
	} {
		got, want := scanAll([]byte(in), 1<<20), linesByScanner([]byte(in))
		if !slices.Equal(got, want) {
			t.Errorf("scanLines(%q) = %v, want %v", in, got, want)
		}
	}
	long := "short\n" + strings.Repeat("x", 100) + "\nafter\n"
	if got := scanAll([]byte(long), 99); !slices.Equal(got, []scannedLine{{1, "short", false}}) {
		t.Errorf("a line over the limit: %v, want the lines before it only", got)
	}
	if got := scanAll([]byte(long), 100); len(got) != 3 {
		t.Errorf("a line at the limit: %v, want every line", got)
	}
}

// FuzzScanLines compares scanLines with the bufio.Scanner it replaced.
func FuzzScanLines(f *testing.F) {
	for _, s := range []string{"a\r\nb", "---\nt: 1\n---\nx", "\n\n\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := scanAll(b, len(b)+1), linesByScanner(b); !slices.Equal(got, want) {
			t.Fatalf("scanLines(%q) = %v, want %v", b, got, want)
		}
	})
}

// TestTitleAllocatesOnlyItsLines: finding a title allocates the lines it reads, not a
// reader's buffer (4 KB a call, two calls a document in a first index).
func TestTitleAllocatesOnlyItsLines(t *testing.T) {
	doc := []byte("intro line\n\n# The title\n" + strings.Repeat("body text\n", 500))
	if Title(doc) != "The title" {
		t.Fatalf("Title = %q", Title(doc))
	}
	const runs = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		Title(doc)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 256 {
		t.Fatalf("Title allocated %d bytes a call for three short lines", per)
	}
}
