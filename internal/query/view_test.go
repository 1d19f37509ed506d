package query_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

var files = map[string]string{
	"README.md":                        "# Root\n",
	"Characters/Elara.md":              "# Elara\n\nA cartographer.",
	"Characters/Kael Stormborn.md":     "# Kael\n",
	"Characters/Twins.md":              "md twin",
	"Characters/Twins.txt":             "txt twin",
	"guidelines/prompt.md.mustache":    "{{project}}",
	"guidelines/review.md":             "review",
	"guidelines/review.md.mustache":    "template loses",
	"Worldbuilding/Creatures/Drake.md": "drake",
	"Worldbuilding/map.bin":            "bin\x00ary",
}

func view(t *testing.T, c *projection.Catalog, path string, offset int, lim query.Limits) (out any, err *query.Error) {
	t.Helper()
	_ = c.Read(func(s *projection.Snapshot) error {
		out, err = query.View(s, path, offset, lim)
		return nil
	})
	return out, err
}

func TestView(t *testing.T) {
	c := testkit.Catalog(t, files)
	t.Run("Document", func(t *testing.T) {
		out, err := view(t, c, "Characters/Elara.md", 0, query.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		d := out.(*query.DocumentView)
		testkit.Equal(t, [3]string{d.Type, d.Content, d.Title}, [3]string{"document", "# Elara\n\nA cartographer.", "Elara"}, "document")
	})
	t.Run("Folder", func(t *testing.T) {
		out, err := view(t, c, "Characters", 0, query.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		f := out.(*query.FolderView)
		var names []string
		for _, d := range f.Documents {
			names = append(names, d.Name)
		}
		testkit.Equal(t, names, []string{"Elara.md", "Kael Stormborn.md", "Twins.md", "Twins.txt"}, "documents")
		testkit.Equal(t, f.TotalDocuments, 4, "total documents")
	})
	t.Run("RootListsImmediateChildrenOnly", func(t *testing.T) {
		out, _ := view(t, c, "", 0, query.Limits{})
		f := out.(*query.FolderView)
		testkit.Equal(t, len(f.Folders), 3, "folders at the root")
		testkit.Equal(t, len(f.Documents), 1, "documents at the root")
		testkit.Equal(t, f.TotalDocuments, len(files), "total documents")
	})
	t.Run("WithoutExtension", func(t *testing.T) {
		out, err := view(t, c, "Characters/Elara", 0, query.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		testkit.Equal(t, out.(*query.DocumentView).Path, "Characters/Elara.md", "resolved path")
	})
	t.Run("ErrAmbiguousName", func(t *testing.T) {
		_, err := view(t, c, "Characters/Twins", 0, query.Limits{})
		if err == nil || err.Type != query.ErrNotFound || !strings.Contains(err.Message, "Twins.md, Twins.txt") {
			t.Fatalf("err = %v; want not_found listing both", err)
		}
	})
	t.Run("TemplateByBasename", func(t *testing.T) {
		out, err := view(t, c, "guidelines/prompt.md", 0, query.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		d := out.(*query.DocumentView)
		testkit.Equal(t, [3]any{d.Path, d.Template, d.Basename}, [3]any{"guidelines/prompt.md.mustache", true, "prompt.md"}, "template")
	})
	t.Run("DocumentWinsOverTemplate", func(t *testing.T) {
		out, _ := view(t, c, "guidelines/review", 0, query.Limits{})
		testkit.Equal(t, out.(*query.DocumentView).Content, "review", "content")
	})
	t.Run("BinaryHasStatusNotContent", func(t *testing.T) {
		out, err := view(t, c, "Worldbuilding/map.bin", 0, query.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		d := out.(*query.DocumentView)
		testkit.Equal(t, [2]string{string(d.Status), d.Content}, [2]string{"binary", ""}, "binary")
	})
	for name, tc := range map[string]struct {
		path string
		want query.ErrorType
	}{
		"ErrNotFound":       {"Characters/Nobody.md", query.ErrNotFound},
		"ErrNoSuchFolder":   {"Nowhere/x", query.ErrNotFound},
		"ErrTraversal":      {"../secret", query.ErrInvalidPath},
		"ErrAbsolute":       {"/etc/passwd", query.ErrInvalidPath},
		"ErrNUL":            {"README.md\x00", query.ErrInvalidPath},
		"ErrEncodedEscape":  {"%2e%2e/secret", query.ErrInvalidPath},
		"ErrOffsetPastEnd":  {"README.md", query.ErrInvalidArgument},
		"ErrNegativeOffset": {"README.md", query.ErrInvalidArgument},
	} {
		t.Run(name, func(t *testing.T) {
			offset := 0
			switch name {
			case "ErrOffsetPastEnd":
				offset = 1000
			case "ErrNegativeOffset":
				offset = -1
			}
			_, err := view(t, c, tc.path, offset, query.Limits{})
			if err == nil || err.Type != tc.want || err.Instruction == "" {
				t.Fatalf("err = %#v; want %s with an instruction", err, tc.want)
			}
		})
	}
}

// TestViewPagesLongDocuments: a document over the limit comes in pages that join up to the
// whole, split on character boundaries.
func TestViewPagesLongDocuments(t *testing.T) {
	long := strings.Repeat("Größe 大きさ size. ", 2000)
	c := testkit.Catalog(t, map[string]string{"long.md": long})
	lim := query.Limits{MaxChars: 5000}
	var b strings.Builder
	offset, pages := 0, 0
	for {
		out, err := view(t, c, "long.md", offset, lim)
		if err != nil {
			t.Fatal(err)
		}
		d := out.(*query.DocumentView)
		if !utf8.ValidString(d.Content) || len(d.Content) > lim.MaxChars {
			t.Fatalf("page at %d: %d bytes, valid UTF-8 %v", offset, len(d.Content), utf8.ValidString(d.Content))
		}
		b.WriteString(d.Content)
		pages++
		if !d.Truncated {
			break
		}
		if d.NextOffset <= offset || !strings.Contains(d.Message, "offset") {
			t.Fatalf("page at %d: next offset %d, message %q", offset, d.NextOffset, d.Message)
		}
		offset = d.NextOffset
	}
	testkit.Equal(t, b.String() == long, true, "pages join up to the document")
	if pages < 2 {
		t.Fatalf("%d pages; want several", pages)
	}
}

func TestViewTruncatesLargeFolders(t *testing.T) {
	many := map[string]string{}
	for i := range 300 {
		many["big/doc-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+"-"+strconv.Itoa(i)+".md"] = "x"
	}
	c := testkit.Catalog(t, many)
	out, err := view(t, c, "big", 0, query.Limits{MaxEntries: 50})
	if err != nil {
		t.Fatal(err)
	}
	f := out.(*query.FolderView)
	testkit.Equal(t, [3]any{len(f.Documents), f.Truncated, f.NextOffset}, [3]any{50, true, 50}, "entries, truncation, next offset")
	if !strings.Contains(f.Message, "50 of 300") || !strings.Contains(f.Message, "offset 50") {
		t.Errorf("message %q does not say what was left out and how to get it", f.Message)
	}
	// Paging with next_offset lists every entry exactly once.
	seen := map[string]bool{}
	for offset := 0; ; {
		out, err := view(t, c, "big", offset, query.Limits{MaxEntries: 50})
		if err != nil {
			t.Fatal(err)
		}
		page := out.(*query.FolderView)
		for _, d := range page.Documents {
			if seen[d.Path] {
				t.Fatalf("%s listed twice", d.Path)
			}
			seen[d.Path] = true
		}
		if !page.Truncated {
			break
		}
		offset = page.NextOffset
	}
	testkit.Equal(t, len(seen), 300, "entries over all pages")
	if _, err := view(t, c, "big", 301, query.Limits{}); err == nil || err.Type != query.ErrInvalidArgument {
		t.Errorf("offset past the end: %v", err)
	}
}
