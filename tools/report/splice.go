package report

import "strings"

// Markers delimit the part of BENCHMARKS.md the harness writes; the rest is kept.
const (
	BeginMarker = "<!-- guide-bench: begin (written by make bench; edits here are lost) -->"
	EndMarker   = "<!-- guide-bench: end -->"
)

// Splice puts the block of the cold, latency and restart scenarios into doc between its markers, or appends it.
func Splice(doc, generated string) string { return SpliceBlock(doc, Block{Markdown: generated}) }

// blockMarkers are the markers of a named block.
func blockMarkers(name string) (begin, end string) {
	if name == "" {
		return BeginMarker, EndMarker
	}
	return "<!-- guide-bench " + name + ": begin (written by make bench; edits here are lost) -->",
		"<!-- guide-bench " + name + ": end -->"
}

// SpliceBlock puts a named block into doc between its markers, or appends it.
func SpliceBlock(doc string, blk Block) string {
	begin, end := blockMarkers(blk.Name)
	block := begin + "\n" + blk.Markdown + end + "\n"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		if doc == "" {
			doc = "# Benchmarks\n\n"
		}
		return strings.TrimRight(doc, "\n") + "\n\n" + block
	}
	rest := strings.TrimLeft(doc[j+len(end):], "\n")
	if rest != "" {
		rest = "\n" + rest
	}
	return doc[:i] + block + rest
}
