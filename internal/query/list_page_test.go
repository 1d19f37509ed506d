package query_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// TestListPagesInListingOrder: a page of the default listing of a focus, at every offset
// and with several limits, is the same page as cut from the whole listing in order
// (which a pending event elsewhere forces List to collect), in a tree whose names order
// documents and folders tightly: "c.md" before "c/", "c/" before "c-" is not the case.
func TestListPagesInListingOrder(t *testing.T) {
	files := map[string]string{}
	for _, p := range []string{
		"README.md", "a.md", "c.md", "c-d.md", "c/x.md", "c/y/z.md", "c/y.md", "c0.md", "cc/a.md",
		"B/one.md", "B/two/three.md", "B/two/four.md", "B/two/five/six.md", "b.md", "c/y/w/v.md",
		"c/y/w.md", "c/y/w0/u.md", "c/bin.dat",
	} {
		files[p] = "# " + p
	}
	files["c/bin.dat"] = "\x00\x01"
	c := testkit.Catalog(t, files)
	// A pending delete of a document nobody has changes no entry, and makes List collect
	// the whole listing before cutting the page.
	whole := query.Pending{Events: map[events.DocKey]events.DocState{{Path: "gone.md"}: {Op: events.OpDelete, Seq: 1}}}
	var folders []string
	_ = c.Read(func(s *projection.Snapshot) error {
		root, _ := s.Folder("")
		root.Walk(func(f *projection.Folder) { folders = append(folders, f.Path) })
		return nil
	})
	pages := 0
	for _, focus := range folders {
		sc := query.Scope{Contexts: query.Contexts{Focus: focus, Session: "tok", History: []string{"B"}}}
		for _, limit := range []int{1, 2, 3, 100} {
			for offset := 0; offset <= len(files)+1; offset++ {
				f := query.ListFilter{Offset: offset, Limit: limit}
				_ = c.Read(func(s *projection.Snapshot) error {
					got, gerr := query.List(s, sc, query.Pending{}, f, query.Limits{})
					want, werr := query.List(s, sc, whole, f, query.Limits{})
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					if string(g) != string(w) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
						t.Errorf("focus %q, offset %d, limit %d:\n got %s %v\nwant %s %v", focus, offset, limit, g, gerr, w, werr)
					}
					pages++
					return nil
				})
			}
		}
	}
	if pages == 0 {
		t.Fatal("no page compared")
	}
}
