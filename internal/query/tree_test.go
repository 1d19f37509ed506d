package query_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

func tree(t *testing.T, c *projection.Catalog, folder string, depth int, lim query.Limits) (out *query.TreeView, err *query.Error) {
	t.Helper()
	_ = c.Read(func(s *projection.Snapshot) error {
		out, err = query.Tree(s, folder, depth, lim)
		return nil
	})
	return out, err
}

// shape renders a tree as paths, folders marked with a slash.
func shape(n *query.TreeNode) []string {
	var out []string
	for _, c := range n.Children {
		if c.Type == "folder" {
			out = append(out, c.Path+"/")
			out = append(out, shape(c)...)
		} else {
			out = append(out, c.Path)
		}
	}
	return out
}

func TestTree(t *testing.T) {
	c := testkit.Catalog(t, files)
	t.Run("DepthOne", func(t *testing.T) {
		v, err := tree(t, c, "", 1, query.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		testkit.Equal(t, shape(v.TreeNode), []string{"Characters/", "Worldbuilding/", "guidelines/", "README.md"}, "depth 1")
	})
	t.Run("DepthTwoOfFolder", func(t *testing.T) {
		v, _ := tree(t, c, "Worldbuilding", 2, query.Limits{})
		testkit.Equal(t, shape(v.TreeNode), []string{"Worldbuilding/Creatures/", "Worldbuilding/Creatures/Drake.md", "Worldbuilding/map.bin"}, "depth 2")
		testkit.Equal(t, v.Documents, 2, "documents below")
	})
	t.Run("CountsAtTheDepthLimit", func(t *testing.T) {
		v, _ := tree(t, c, "", 1, query.Limits{})
		for _, ch := range v.Children {
			if ch.Path == "Worldbuilding" {
				testkit.Equal(t, [2]any{ch.Documents, len(ch.Children)}, [2]any{2, 0}, "folder at the limit")
			}
		}
	})
	t.Run("TruncatesBreadthFirst", func(t *testing.T) {
		v, _ := tree(t, c, "", 5, query.Limits{MaxEntries: 4})
		testkit.Equal(t, [2]any{v.Truncated, v.Entries}, [2]any{true, 4}, "truncated")
		testkit.Equal(t, shape(v.TreeNode), []string{"Characters/", "Worldbuilding/", "guidelines/", "README.md"}, "the top level is kept whole")
	})
	for name, tc := range map[string]struct {
		folder string
		depth  int
		want   query.ErrorType
	}{
		"ErrDepthZero":     {"", 0, query.ErrInvalidArgument},
		"ErrDepthSix":      {"", 6, query.ErrInvalidArgument},
		"ErrNotAFolder":    {"README.md", 2, query.ErrInvalidPath},
		"ErrNoSuchFolder":  {"Nowhere", 2, query.ErrNotFound},
		"ErrOutsideRoot":   {"..", 2, query.ErrInvalidPath},
		"ErrAbsoluteInput": {"/", 2, query.ErrInvalidPath},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tree(t, c, tc.folder, tc.depth, query.Limits{})
			if err == nil || err.Type != tc.want {
				t.Fatalf("err = %v; want %s", err, tc.want)
			}
		})
	}
}

// TestTreeTakesHalfTheBound: a tree is an overview; it stops at half the response bound,
// complete near the top, and says so.
func TestTreeTakesHalfTheBound(t *testing.T) {
	big := map[string]string{}
	for i := range 40 {
		for j := range 20 {
			big[fmt.Sprintf("folder-%02d/document-number-%03d.md", i, j)] = fmt.Sprintf("# Title of document %d in folder %d\n\nwords", j, i)
		}
	}
	c := testkit.Catalog(t, big)
	const bound = 20_000
	v, qerr := tree(t, c, "", 2, query.Limits{MaxChars: bound})
	if qerr != nil {
		t.Fatal(qerr)
	}
	b, err := json.Marshal(v)
	testkit.NoErr(t, err, "encode")
	if !v.Truncated || len(b) > bound/2 {
		t.Fatalf("tree of %d entries: %d characters, truncated %v; want at most %d and truncated", v.Entries, len(b), v.Truncated, bound/2)
	}
	testkit.Equal(t, len(v.Children), 40, "the top level is kept whole")
	unbounded, _ := tree(t, c, "", 2, query.Limits{MaxChars: 1_000_000})
	testkit.Equal(t, [2]any{unbounded.Truncated, unbounded.Entries}, [2]any{false, 840}, "with room, every entry")
}
