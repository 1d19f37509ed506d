package web

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/guide/guide/internal/query"
)

// changesBody is the page of recent changes: the changes tool's answer, newest first.
type changesBody struct {
	*query.ChangesView
	Since     string // what the list starts from, for people
	Diff      bool
	NewerHref string // what changed after this page
	MoreHref  string // the rest of a cut answer
	DiffHref  string // this page with or without diffs
}

func changesHref(folder, cursor string, diff bool) string {
	v := url.Values{}
	if folder != "" {
		v.Set("folder", folder)
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if diff {
		v.Set("diff", "1")
	}
	if len(v) == 0 {
		return "/changes"
	}
	return "/changes?" + v.Encode()
}

// changes shows what changed in the project, or below a folder, as the changes tool does:
// the last day by default, or since a cursor of an earlier page.
func (s *Server) changes(w http.ResponseWriter, r *http.Request) {
	if s.Changes == nil {
		s.fail(w, r, http.StatusNotFound, "This server does not read the stream's history.")
		return
	}
	q := r.URL.Query()
	a := query.ChangesArgs{Cursor: q.Get("cursor"), Since: q.Get("since"), Folder: q.Get("folder"), Diff: q.Get("diff") == "1"}
	v, qerr := s.Changes(r.Context(), a)
	if qerr != nil {
		s.failQuery(w, r, qerr)
		return
	}
	pg := s.chrome(r, &page{Title: "Recent changes", Within: v.Folder})
	body := changesBody{ChangesView: v, Diff: a.Diff,
		NewerHref: changesHref(v.Folder, v.Cursor, a.Diff), DiffHref: changesHref(v.Folder, a.Cursor, !a.Diff)}
	switch {
	case a.Cursor != "":
		body.Since = "the previous page"
	case a.Since != "":
		body.Since = a.Since
	default:
		body.Since = "the last 24 hours"
	}
	if !v.Complete {
		body.MoreHref, body.NewerHref = body.NewerHref, ""
	}
	// Newest first, as people read a list of recent changes; the tool lists in stream order.
	body.Changes = slices.Clone(v.Changes)
	slices.Reverse(body.Changes)
	pg.Crumbs = s.crumbs(v.Folder)
	if v.Folder != "" {
		pg.Crumbs = append(pg.Crumbs, crumb{Name: v.Folder, Href: viewHref(v.Folder)})
	}
	pg.Body = body
	s.render(w, r, http.StatusOK, "changes", pg)
}
