package query_test

import (
	"testing"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// orgTree is three levels of contexts (organization / folder / usecase) and a sibling.
var orgTree = map[string]string{
	"README.md":                  "# Project",
	"Acme/about.md":              "# About Acme",
	"Acme/Sales/plan.md":         "# Sales plan",
	"Acme/Sales/Q1/notes.md":     "# Q1 notes",
	"Acme/Sales/Q1/deep/x.md":    "# X",
	"Acme/Support/faq.md":        "# FAQ",
	"Other/misc.md":              "# Misc",
	"Acme/Sales/Q1/deep/bin.dat": "\x00\x01",
}

func availability(t *testing.T, c *projection.Catalog, sc query.Scope, pend query.Pending) []string {
	t.Helper()
	var out []string
	_ = c.Read(func(s *projection.Snapshot) error {
		for _, e := range query.Available(s, sc, pend) {
			out = append(out, e.Type+" "+e.ID+" "+e.Path+" "+e.Status)
		}
		return nil
	})
	return out
}

// TestAvailability: the focus set on the root, a middle folder and a leaf, exactly; the
// search filter of each scope admits exactly the same documents.
func TestAvailability(t *testing.T) {
	c := testkit.Catalog(t, orgTree)
	for _, tc := range []struct {
		name  string
		focus string
		want  []string
	}{
		{"Root", "", []string{
			"focus  README.md ready",
			"descendant Acme/Sales/Q1/deep Acme/Sales/Q1/deep/bin.dat failed",
			"descendant Acme/Sales/Q1/deep Acme/Sales/Q1/deep/x.md ready",
			"descendant Acme/Sales/Q1 Acme/Sales/Q1/notes.md ready",
			"descendant Acme/Sales Acme/Sales/plan.md ready",
			"descendant Acme/Support Acme/Support/faq.md ready",
			"descendant Acme Acme/about.md ready",
			"descendant Other Other/misc.md ready",
		}},
		{"Middle", "Acme/Sales", []string{
			"focus Acme/Sales Acme/Sales/plan.md ready",
			"ancestor Acme Acme/about.md ready",
			"ancestor  README.md ready",
			"descendant Acme/Sales/Q1/deep Acme/Sales/Q1/deep/bin.dat failed",
			"descendant Acme/Sales/Q1/deep Acme/Sales/Q1/deep/x.md ready",
			"descendant Acme/Sales/Q1 Acme/Sales/Q1/notes.md ready",
		}},
		{"Leaf", "Acme/Sales/Q1/deep", []string{
			"focus Acme/Sales/Q1/deep Acme/Sales/Q1/deep/bin.dat failed",
			"focus Acme/Sales/Q1/deep Acme/Sales/Q1/deep/x.md ready",
			"ancestor Acme/Sales/Q1 Acme/Sales/Q1/notes.md ready",
			"ancestor Acme/Sales Acme/Sales/plan.md ready",
			"ancestor Acme Acme/about.md ready",
			"ancestor  README.md ready",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := query.Scope{Contexts: query.Contexts{Focus: tc.focus}}
			testkit.Equal(t, availability(t, c, sc, query.Pending{}), tc.want, "available")
			f := sc.Filter()
			n := 0
			for p := range orgTree {
				if f.Match("", p) {
					n++
				}
			}
			testkit.Equal(t, n, len(tc.want), "documents the search filter admits")
			if f.Match("someone-else", "notes.md") {
				t.Error("the filter admits another session's document")
			}
		})
	}
}

// TestHistory: earlier foci, most recent first, no duplicates, never the focus.
func TestHistory(t *testing.T) {
	c := query.Contexts{}
	for _, f := range []string{"Acme", "Acme/Sales", "Acme", "Other", "Other"} {
		c = c.WithFocus(f)
	}
	testkit.Equal(t, c.Focus, "Other", "focus")
	testkit.Equal(t, c.History, []string{"Acme", "Acme/Sales"}, "history (the default root was never chosen)")
}

// TestWidenedScopeMarksOrigins: a folder or "all" scope returns documents outside the
// focus set, marked historical or other and not in focus.
func TestWidenedScopeMarksOrigins(t *testing.T) {
	c := testkit.Catalog(t, orgTree)
	ctx := query.Contexts{}.WithFocus("Acme/Support").WithFocus("Acme/Sales/Q1")
	got := availability(t, c, query.Scope{Contexts: ctx, Folder: "Acme/Support"}, query.Pending{})
	testkit.Equal(t, got, []string{"historical Acme/Support Acme/Support/faq.md ready"}, "folder scope")
	_ = c.Read(func(s *projection.Snapshot) error {
		o := query.Scope{Contexts: ctx, All: true}.Annotate("", "Other/misc.md")
		testkit.Equal(t, o, query.Origin{Type: "other", ID: "Other"}, "other")
		return nil
	})
}

// TestStatusTransitions: a document's status as its events travel: uploading (session
// only) → processing (on the stream, not applied) → ready, or failed with the reason.
func TestStatusTransitions(t *testing.T) {
	k := events.DocKey{Session: "tok", Path: "a.md"}
	d := &projection.Document{Path: "a.md", Session: "tok", Status: events.StatusOK, Seq: 5}
	for _, tc := range []struct {
		name string
		pend query.Pending
		doc  *projection.Document
		want string
	}{
		{"Uploading", query.Pending{Uploading: map[string]bool{"a.md": true}}, nil, "uploading"},
		{"ProcessingNew", query.Pending{Events: map[events.DocKey]events.DocState{k: {Op: events.OpUpsert, Seq: 5}}}, nil, "processing"},
		{"ProcessingChange", query.Pending{Events: map[events.DocKey]events.DocState{k: {Op: events.OpUpsert, Seq: 9}}}, d, "processing"},
		{"Ready", query.Pending{}, d, "ready"},
		{"Failed", query.Pending{}, &projection.Document{Status: events.StatusTooLarge, Reason: "over 1 MiB"}, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := tc.pend.Status(k, tc.doc)
			testkit.Equal(t, got, tc.want, "status")
			if got == "failed" && reason != "too large: over 1 MiB" {
				t.Errorf("reason %q", reason)
			}
		})
	}
}

// TestSummaryRefusedUntilReady: get_summary is not_ready while processing or failed.
func TestSummaryRefusedUntilReady(t *testing.T) {
	c := testkit.Catalog(t, orgTree)
	_ = c.Read(func(s *projection.Snapshot) error {
		pend := query.Pending{Events: map[events.DocKey]events.DocState{{Path: "Acme/about.md"}: {Op: events.OpUpsert, Seq: 1000}}}
		for _, p := range []string{"Acme/about.md", "Acme/Sales/Q1/deep/bin.dat"} {
			_, qerr := query.Summary(s, query.Contexts{}, pend, p)
			if qerr == nil || qerr.Type != query.ErrNotReady {
				t.Errorf("get_summary(%s) = %v, want not_ready", p, qerr)
			}
		}
		r, qerr := query.Summary(s, query.Contexts{Focus: "Acme"}, query.Pending{}, "Acme/about.md")
		if qerr != nil {
			t.Fatal(qerr)
		}
		testkit.Equal(t, [3]string{r.Title, r.Status, r.Type}, [3]string{"About Acme", "ready", "focus"}, "summary")
		return nil
	})
}
