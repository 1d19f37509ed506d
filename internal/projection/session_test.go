package projection_test

import (
	"testing"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/testkit"
)

func (f *fold) attach(token, name, content string) *fold {
	f.put(name, content)
	f.evs[len(f.evs)-1].Session = token
	return f
}

func (f *fold) detach(token, name string) *fold {
	f.del(name)
	f.evs[len(f.evs)-1].Session = token
	return f
}

// TestSessionDocumentsStayOutOfTheTree: a session document is a catalog record with its
// summary, kept apart from the tree (no folder, no count), reloaded after a restart, and
// gone when detached; a tree document of the same name is another record.
func TestSessionDocumentsStayOutOfTheTree(t *testing.T) {
	dir := t.TempDir()
	c := &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, c.Open(), "open")
	f := (&fold{}).put("notes.md", "# Tree notes").attach("tokA", "notes.md", "# Session notes\n\nFirst words.").
		attach("tokB", "other.md", "b").scan()
	testkit.NoErr(t, c.Apply(f.batch()), "apply")
	check := func(c *projection.Catalog) {
		t.Helper()
		_ = c.Read(func(s *projection.Snapshot) error {
			testkit.Equal(t, s.Len(), 1, "tree documents")
			root, _ := s.Folder("")
			testkit.Equal(t, root.Documents, 1, "root count")
			d, ok := s.SessionDocument("tokA", "notes.md")
			if !ok {
				t.Fatal("session document missing")
			}
			sum, err := s.Summary(d)
			testkit.NoErr(t, err, "summary")
			testkit.Equal(t, [3]string{d.Title, sum.FirstParagraph, d.Session}, [3]string{"Session notes", "First words.", "tokA"}, "summary")
			testkit.Equal(t, sum.Outline, []projection.Heading{{Level: 1, Text: "Session notes"}}, "outline")
			b, err := s.Content(d)
			testkit.NoErr(t, err, "content")
			testkit.Equal(t, string(b), "# Session notes\n\nFirst words.", "content")
			tree, _ := s.Document("notes.md")
			testkit.Equal(t, tree.Title, "Tree notes", "tree document of the same name")
			testkit.Equal(t, s.SessionTokens(), []string{"tokA", "tokB"}, "tokens")
			return nil
		})
	}
	check(c)
	testkit.NoErr(t, c.Close(), "close")
	c = &projection.Catalog{Dir: dir, Logger: testkit.Logger()}
	testkit.NoErr(t, c.Open(), "reopen")
	defer c.Close()
	check(c)

	f.evs = nil
	f.detach("tokA", "notes.md")
	testkit.NoErr(t, c.Apply(f.batch()), "apply detach")
	_ = c.Read(func(s *projection.Snapshot) error {
		if _, ok := s.SessionDocument("tokA", "notes.md"); ok {
			t.Error("detached document still there")
		}
		testkit.Equal(t, len(s.SessionDocuments("tokA")), 0, "tokA documents")
		testkit.Equal(t, s.SessionTokens(), []string{"tokB"}, "tokens")
		return nil
	})
}
