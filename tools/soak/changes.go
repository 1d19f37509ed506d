package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/testkit/oracle"
)

// changesStart is where the changes check starts: a cursor of the changes tool taken
// when the stream had caught up with the disk, and the disk then.
type changesStart struct {
	cursor string
	disk   map[string]oracle.Doc
}

// changesMaxPages bounds the calls of the changes check, a guard against a cursor that
// never ends: a page holds up to a thousand changes, fewer when the response bound cuts it,
// and a ten-minute run lists tens of thousands.
const changesMaxPages = 1000

// changesEntry is one entry of a changes answer, as the check reads it.
type changesEntry struct {
	Kind string `json:"change"`
	Path string `json:"path"`
	From string `json:"from"`
}

// startChanges takes the cursor of the changes check and reads the disk: the system has
// settled, nothing changes the tree yet.
func startChanges(ctx context.Context, c *client.Client, root string) (changesStart, error) {
	text, isErr, err := call(ctx, c, "changes", map[string]any{"since": "now"})
	if err != nil || isErr {
		return changesStart{}, fmt.Errorf("changes since now: %v %s", err, clip(text, 300))
	}
	var v struct {
		Cursor string `json:"cursor"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil || v.Cursor == "" {
		return changesStart{}, fmt.Errorf("changes since now: no cursor in %s", clip(text, 300))
	}
	disk, err := oracle.Disk(root, oracle.Options{Project: project})
	if err != nil {
		return changesStart{}, err
	}
	return changesStart{cursor: v.Cursor, disk: disk}, nil
}

// checkChanges pages through the changes since the start's cursor, once the system has
// settled, and compares the state they report of each document with the disk: every
// document the disk differs on since the cursor is listed; none listed as added, modified,
// moved or changed is absent from the disk; none listed as deleted (or moved away) is on
// it; no session's document is listed.
func (r *Report) checkChanges(ctx context.Context, c *client.Client, start changesStart, root string, logf func(string, ...any)) {
	if start.cursor == "" {
		return // the start failed, and said so
	}
	present := map[string]bool{} // the state the answers report: true present, false gone
	var sample []string
	mismatch := func(format string, args ...any) {
		r.ChangesMismatches++
		if len(sample) < 5 {
			sample = append(sample, fmt.Sprintf(format, args...))
		}
	}
	cursor := start.cursor
	for {
		if r.ChangesPages == changesMaxPages {
			r.fail("changes: not complete after %d pages", changesMaxPages)
			return
		}
		text, isErr, err := call(ctx, c, "changes", map[string]any{"cursor": cursor, "limit": 1000})
		r.ChangesPages++
		if err != nil || isErr {
			r.fail("changes from the cursor of the start: %v %s", err, clip(text, 300))
			return
		}
		var v struct {
			Cursor   string         `json:"cursor"`
			Complete bool           `json:"complete"`
			Changes  []changesEntry `json:"changes"`
		}
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			r.fail("changes: %v in %s", err, clip(text, 300))
			return
		}
		for _, e := range v.Changes {
			r.ChangesListed++
			if strings.HasPrefix(e.Path, "session:") || strings.HasPrefix(e.From, "session:") {
				mismatch("a session's document listed: %s %s", e.Kind, e.Path)
				continue
			}
			if e.Kind == "moved" {
				present[e.From] = false
			}
			present[e.Path] = e.Kind != "deleted"
		}
		if v.Complete {
			break
		}
		if v.Cursor == cursor {
			r.fail("changes: the cursor did not move, and the answer is not complete (page %d)", r.ChangesPages)
			return
		}
		cursor = v.Cursor
	}
	disk, err := oracle.Disk(root, oracle.Options{Project: project})
	if err != nil {
		r.fail("read the disk: %v", err)
		return
	}
	paths := map[string]bool{}
	for p := range disk {
		paths[p] = true
	}
	for p := range start.disk {
		paths[p] = true
	}
	for p := range present {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	for _, p := range sorted {
		now, onDisk := disk[p]
		then, before := start.disk[p]
		differs := onDisk != before || onDisk && now != then
		if differs {
			r.ChangesDiffer++
		}
		listed, said := present[p]
		switch {
		case said && listed && !onDisk:
			mismatch("%s listed as present, not on the disk", p)
		case said && !listed && onDisk:
			mismatch("%s listed as deleted, on the disk", p)
		case !said && differs:
			mismatch("%s changed on the disk (%s), not listed", p, map[bool]string{true: "now there", false: "now gone"}[onDisk])
		}
	}
	r.ChangesSample = strings.Join(sample, "; ")
	if r.ChangesMismatches > 0 {
		r.fail("changes: %d documents whose reported state differs from the disk: %s", r.ChangesMismatches, r.ChangesSample)
	}
	logf("changes: %d listed in %d pages, %d documents differ on the disk since the cursor, %d mismatches",
		r.ChangesListed, r.ChangesPages, r.ChangesDiffer, r.ChangesMismatches)
}
