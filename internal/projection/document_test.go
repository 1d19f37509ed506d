package projection_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/text"
)

// TestDescribe: the title, word count and summary the catalog records of a document come
// from one reading of its Markdown, bounded as a summary is.
func TestDescribe(t *testing.T) {
	doc := []byte("---\ntitle: Front\n---\n<!-- a note\nstill -->\n# Elara Voss\n\n```\n# not a heading\n```\n" +
		"Elara is a cartographer\nfrom the north.\n\nSecond paragraph.\n\n## Early life ##\n### Work\n####### too deep\n")
	words, title, sum := projection.Describe(doc)
	if title != "Front" || words != text.ReaderWords(doc) {
		t.Errorf("title %q, %d words; want %q, %d", title, words, "Front", text.ReaderWords(doc))
	}
	want := projection.Summary{Outline: []projection.Heading{{1, "Elara Voss"}, {2, "Early life"}, {3, "Work"}},
		FirstParagraph: "Elara is a cartographer from the north."}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("summary %+v, want %+v", sum, want)
	}

	_, _, sum = projection.Describe([]byte(strings.Repeat("word ", 400)))
	if p := sum.FirstParagraph; len(p) > projection.MaxFirstParagraph || !strings.HasSuffix(p, "…") {
		t.Errorf("a long paragraph is not clipped: %d bytes", len(p))
	}
	var many strings.Builder
	for i := range projection.MaxOutline + 5 {
		fmt.Fprintf(&many, "## %d %s\n", i, strings.Repeat("long ", 60))
	}
	_, _, sum = projection.Describe([]byte(many.String()))
	if len(sum.Outline) != projection.MaxOutline {
		t.Errorf("%d headings in the outline, want %d", len(sum.Outline), projection.MaxOutline)
	}
	for _, h := range sum.Outline {
		if len(h.Text) > projection.MaxHeadingLen || !strings.HasSuffix(h.Text, "…") {
			t.Fatalf("heading of %d bytes: %q", len(h.Text), h.Text)
		}
	}
}
