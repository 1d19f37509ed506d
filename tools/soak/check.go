package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/testkit/oracle"
)

// Report is what a run did and what it found. A run passes when Failures is empty.
type Report struct {
	Seed        uint64         `json:"seed"`
	Docs        int            `json:"docs"`
	Sessions    int            `json:"sessions"`
	Elapsed     time.Duration  `json:"elapsed_ns"`
	OpsDuration time.Duration  `json:"ops_duration_ns"`
	Operations  int            `json:"operations"`
	Ops         map[string]int `json:"ops_by_kind"`
	OpErrors    int            `json:"op_errors"` // operations the file system refused (chmod through a link whose target is gone, say)

	KillsIndexer int `json:"kills_indexer"` // each one also restarts the embedded NATS server
	KillsQuery   int `json:"kills_query"`
	// KillsAllInOne counts the kills of the all-in-one process the read-your-writes
	// writer calls.
	KillsAllInOne int `json:"kills_all_in_one"`

	// Read-your-writes through the all-in-one process: changes each checked at once,
	// answers that missed one unmarked (a failure), answers marked partial, and trials cut
	// short by a kill.
	RYWTrials  int `json:"ryw_trials"`
	RYWStale   int `json:"ryw_stale"`
	RYWPartial int `json:"ryw_partial"`
	RYWErrors  int `json:"ryw_transport_errors"`

	// Corruptions are the projection files damaged while guide-mcp was down ("scribble
	// query/catalog.db"); the checks below hold after them as after kills.
	Corruptions []string `json:"corruptions,omitempty"`

	// DiskFull says how the disk-full phase went, or why it was skipped; DiskFullStatus is
	// guide-mcp's write_error at its end ("" if it had nothing to write meanwhile).
	DiskFull       string `json:"disk_full,omitempty"`
	DiskFullStatus string `json:"disk_full_write_error,omitempty"`

	SessionCalls  int64 `json:"session_calls"`
	SessionErrors int64 `json:"session_transport_errors"`
	ToolErrors    int64 `json:"session_tool_errors"`
	Attached      int64 `json:"attached"`
	Detached      int64 `json:"detached"`
	SessionsEnded int64 `json:"sessions_ended"`
	// ToolErrorKinds counts the error results by tool and error type: not_found of a
	// document just deleted is expected, internal is not.
	ToolErrorKinds map[string]int64 `json:"session_tool_error_kinds,omitempty"`
	Reconnects     int64            `json:"reconnects"`

	Settled  time.Duration `json:"settled_ns"` // from the end of the operations to the disk check passing (or giving up)
	DiskDocs int           `json:"disk_documents"`
	Lost     int           `json:"lost"`    // on disk, not in tree
	Phantom  int           `json:"phantom"` // in tree, not on disk
	Stale    int           `json:"stale"`   // view differs from the file
	// Links is how many of the lost, phantom and stale documents are symbolic links (or
	// below one) on disk: a link whose target changed, vanished or appeared.
	Links        int    `json:"of_which_links"`
	SearchDiffer string `json:"search_mismatch,omitempty"`
	DiffSample   string `json:"diff_sample,omitempty"`

	// Changes: the changes tool from a cursor taken before the operations, paged through
	// once settled, against the disk then and now.
	ChangesPages      int    `json:"changes_pages"`
	ChangesListed     int    `json:"changes_listed"`
	ChangesDiffer     int    `json:"changes_disk_differs"` // documents the disk differs on since the cursor
	ChangesMismatches int    `json:"changes_mismatches"`   // documents whose reported state is not the disk's
	ChangesSample     string `json:"changes_sample,omitempty"`

	Escaped       int      `json:"escaped"`        // stream messages carrying bytes from outside the root
	EscapedHits   int      `json:"escaped_search"` // search hits for the word only outside files hold
	EscapedIn     []string `json:"escaped_subjects,omitempty"`
	StreamLost    int      `json:"stream_lost"`    // on disk, no upsert as the last event of its subject
	StreamPhantom int      `json:"stream_phantom"` // an upsert as the last event of a path not on disk
	StreamStale   int      `json:"stream_stale"`   // the last upsert's status or content differs from the file
	Messages      int      `json:"stream_messages"`

	Orphans []string `json:"orphans,omitempty"` // session documents left on the stream after every session ended

	ConsumersBaseline int `json:"consumers_baseline"`
	ConsumersEnd      int `json:"consumers_end"`
	// Consumers describes each consumer at the end, when their count is not the baseline.
	Consumers []string `json:"consumers,omitempty"`

	GoroutinesStart int     `json:"goroutines_start"`
	GoroutinesEnd   int     `json:"goroutines_end"`   // after churn, every session ended
	GoroutinesFresh int     `json:"goroutines_fresh"` // the same process restarted on the same data, idle
	RSSStartMiB     float64 `json:"rss_start_mib"`
	RSSEndMiB       float64 `json:"rss_end_mib"`
	RSSFreshMiB     float64 `json:"rss_fresh_mib"`

	Marker   string   `json:"marker"`
	Work     string   `json:"work"`
	OpLog    string   `json:"op_log"`
	Failures []string `json:"failures"`
}

// Passed says whether the run found nothing wrong.
func (r Report) Passed() bool { return len(r.Failures) == 0 }

func (r *Report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// goroutineSlack is how many goroutines above a fresh process's count the process that
// lived through the run may keep: pools that grew and stay warm, not one per session.
const goroutineSlack = 25

// check settles the system and runs every check at the end of a run.
func (r *Report) check(ctx context.Context, cfg Config, d *deployment, sv *streamView, t *tree, chStart changesStart, logf func(string, ...any)) {
	t.restore()
	end := time.Now()
	checker, err := Connect(ctx, d.mcpURL, "soak-checker")
	if err != nil {
		r.fail("checker session: %v", err)
		return
	}
	defer func() { _ = checker.Close() }()
	defer func() {
		for _, p := range []*proc{d.indexer, d.query} {
			for _, e := range p.died() {
				r.fail("while checking: %s", e)
			}
		}
	}()
	if _, err := settle(ctx, checker, sv, cfg.Settle); err != nil {
		r.fail("status never said caught up: %v", err)
	}

	// tree, view and search against the disk, until they agree or the time is up.
	deadline := end.Add(cfg.Settle)
	said := time.Now()
	for {
		files, err := oracle.Disk(t.root, oracle.Options{Project: project})
		if err != nil {
			r.fail("read the disk: %v", err)
			return
		}
		r.DiskDocs = len(files)
		diff, err := compare(ctx, checker, files)
		if err == nil && diff.Empty() {
			r.Lost, r.Phantom, r.Stale, r.SearchDiffer, r.DiffSample = 0, 0, 0, "", ""
			break
		}
		if err != nil {
			diff.Other = err.Error()
		}
		r.Lost, r.Phantom, r.Stale, r.SearchDiffer = len(diff.Lost), len(diff.Phantom), len(diff.Stale), ""
		r.Links = 0
		for _, p := range append(append(append([]string{}, diff.Lost...), diff.Phantom...), diff.Stale...) {
			if isLink(t.root, p) {
				r.Links++
			}
		}
		if len(diff.Lost)+len(diff.Phantom)+len(diff.Stale) == 0 {
			r.SearchDiffer = diff.Other
		}
		r.DiffSample = diff.String()
		if len(diff.Lost)+len(diff.Phantom)+len(diff.Stale) > 0 {
			r.DiffSample = fmt.Sprintf("lost %q, phantom %q, stale %q; %s", head(diff.Lost), head(diff.Phantom), head(diff.Stale), diff.Sample)
		}
		if time.Now().After(deadline) {
			break
		}
		if time.Since(said) > 15*time.Second {
			said = time.Now()
			logf("not equal to the disk yet: %d lost, %d phantom, %d stale", r.Lost, r.Phantom, r.Stale)
		}
		sleep(ctx, time.Second)
	}
	r.Settled = time.Since(end).Round(100 * time.Millisecond)
	if r.Lost+r.Phantom+r.Stale > 0 {
		r.fail("tree/view differ from the disk %s after the operations: %d lost, %d phantom, %d stale (%d of them links): %s",
			r.Settled, r.Lost, r.Phantom, r.Stale, r.Links, clip(r.DiffSample, 500))
	} else if r.SearchDiffer != "" {
		r.fail("search differs from the disk: %s", r.SearchDiffer)
	}
	logf("disk check: %d documents, %d lost, %d phantom, %d stale (%s)", r.DiskDocs, r.Lost, r.Phantom, r.Stale, r.Settled)
	r.checkChanges(ctx, checker, chStart, t.root, logf)

	// The word only the outside files hold is found nowhere.
	if text, isErr, err := call(ctx, checker, "search", map[string]any{"query": t.marker, "scope": "all"}); err != nil {
		r.fail("search for the outside marker: %v", err)
	} else if !isErr {
		var res struct {
			Hits []struct{ Path string } `json:"hits"`
		}
		if json.Unmarshal([]byte(text), &res) == nil {
			r.EscapedHits = len(res.Hits)
			if len(res.Hits) > 0 {
				var p []string
				for _, h := range res.Hits {
					p = append(p, h.Path)
				}
				r.fail("search finds bytes from outside the root in %d documents: %v", len(p), head(p))
			}
		}
	}

	// Consumers: what the processes hold after churn equals what they held at the start.
	r.ConsumersEnd, _, err = sv.info(ctx)
	if err != nil {
		r.fail("stream info: %v", err)
	} else if r.ConsumersEnd != r.ConsumersBaseline {
		r.Consumers = sv.consumers(ctx)
		r.fail("consumers: %d at the end, %d at the start", r.ConsumersEnd, r.ConsumersBaseline)
	}

	// Session documents: every session ended, so none may be left once the sweep of
	// abandoned ones (those of sessions on a killed process) has had its turn.
	orphanWait := cfg.SessionTTL + cfg.SessionTTL/4 + 30*time.Second
	for until := time.Now().Add(orphanWait); ; {
		r.Orphans, err = sv.sessionDocuments(ctx)
		if err != nil {
			r.fail("session documents: %v", err)
			break
		}
		if len(r.Orphans) == 0 || time.Now().After(until) {
			break
		}
		sleep(ctx, time.Second)
	}
	if len(r.Orphans) > 0 {
		r.fail("%d session documents left after every session ended (waited %s): %v", len(r.Orphans), orphanWait, head(r.Orphans))
	}
	logf("consumers %d (start %d), orphaned session documents %d", r.ConsumersEnd, r.ConsumersBaseline, len(r.Orphans))

	// Goroutines: the process that lived through the run against the same process
	// started afresh on the same data.
	_ = checker.Close()
	if m, err := d.scrape(ctx, "go_goroutines", "process_resident_memory_bytes"); err == nil {
		r.GoroutinesEnd, r.RSSEndMiB = int(m["go_goroutines"]), m["process_resident_memory_bytes"]/(1<<20)
	} else {
		r.fail("metrics: %v", err)
	}
	d.query.kill()
	if err := d.query.start(ctx); err != nil {
		r.fail("restart guide-mcp: %v", err)
		return
	}
	fresh, err := Connect(ctx, d.mcpURL, "soak-checker")
	if err != nil {
		r.fail("checker session: %v", err)
		return
	}
	_, serr := settle(ctx, fresh, sv, cfg.Settle)
	_ = fresh.Close()
	if serr != nil {
		r.fail("restarted guide-mcp: %v", serr)
	}
	if m, err := d.scrape(ctx, "go_goroutines", "process_resident_memory_bytes"); err == nil {
		r.GoroutinesFresh, r.RSSFreshMiB = int(m["go_goroutines"]), m["process_resident_memory_bytes"]/(1<<20)
	}
	if r.GoroutinesFresh > 0 && r.GoroutinesEnd > r.GoroutinesFresh+goroutineSlack {
		r.fail("goroutines: %d in guide-mcp after the run, %d when restarted on the same data", r.GoroutinesEnd, r.GoroutinesFresh)
	}
	logf("goroutines %d after the run, %d fresh", r.GoroutinesEnd, r.GoroutinesFresh)

	// The stream: no message carries the marker, and the last event of every document
	// says what the disk holds.
	sc, err := sv.scanAll(ctx, t.marker)
	if err != nil {
		r.fail("read the stream: %v", err)
		return
	}
	r.Messages, r.Escaped, r.EscapedIn = sc.Messages, len(sc.Escaped), head(sc.Escaped)
	if r.Escaped > 0 {
		r.fail("%d stream messages carry bytes from outside the root: %v", r.Escaped, r.EscapedIn)
	}
	files, err := oracle.Disk(t.root, oracle.Options{Project: project})
	if err != nil {
		r.fail("read the disk: %v", err)
		return
	}
	var sample []string
	for p, doc := range files {
		switch {
		case !sc.Listed[p]:
			r.StreamLost++
			sample = append(sample, "lost "+p)
		case sc.Status[p] != doc.Status:
			r.StreamStale++
			sample = append(sample, fmt.Sprintf("stale %s (%s, disk says %s)", p, sc.Status[p], doc.Status))
		case doc.Status == events.StatusOK && sc.Latest[p] != doc.Content:
			r.StreamStale++
			sample = append(sample, "stale "+p)
		}
	}
	for p, listed := range sc.Listed {
		if _, ok := files[p]; listed && !ok {
			r.StreamPhantom++
			sample = append(sample, "phantom "+p)
		}
	}
	if r.StreamLost+r.StreamPhantom+r.StreamStale > 0 {
		r.fail("the stream's last events differ from the disk: %d lost, %d phantom, %d stale: %v",
			r.StreamLost, r.StreamPhantom, r.StreamStale, head(sample))
	}
	logf("stream: %d messages, %d with outside bytes", r.Messages, r.Escaped)
}

// compare compares the checker's view with the disk, bounded so that a hung call ends it.
func compare(ctx context.Context, c client.MCPClient, files map[string]oracle.Doc) (oracle.Diff, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return oracle.Compare(ctx, c, files)
}

// isLink says whether rel, or a folder on its way, is a symbolic link under root.
func isLink(root, rel string) bool {
	p := root
	for _, seg := range strings.Split(rel, "/") {
		p = filepath.Join(p, seg)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// String is the summary for a person.
func (r Report) String() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.Passed() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "soak %s  seed %d  %d documents  %d sessions  %s of operations (%s in all)\n",
		verdict, r.Seed, r.Docs, r.Sessions, r.OpsDuration, r.Elapsed)
	fmt.Fprintf(&b, "  operations     %d (%d refused by the file system)\n", r.Operations, r.OpErrors)
	var kinds []string
	for _, k := range sortedKeys(r.Ops) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, r.Ops[k]))
	}
	fmt.Fprintf(&b, "                 %s\n", strings.Join(kinds, ", "))
	fmt.Fprintf(&b, "  kills          indexer+NATS %d, guide-mcp %d, guide-mcp --root %d\n", r.KillsIndexer, r.KillsQuery, r.KillsAllInOne)
	fmt.Fprintf(&b, "  read-your-writes %d changes checked at once through guide-mcp --root: %d stale, %d answers partial, %d cut short by a kill\n",
		r.RYWTrials, r.RYWStale, r.RYWPartial, r.RYWErrors)
	fmt.Fprintf(&b, "  corruptions    %d %v\n", len(r.Corruptions), r.Corruptions)
	if r.DiskFull != "" {
		fmt.Fprintf(&b, "  disk full      %s; guide-mcp's write_error: %q\n", r.DiskFull, clip(r.DiskFullStatus, 200))
	}
	fmt.Fprintf(&b, "  sessions       %d calls, %d transport errors, %d tool errors, %d attached, %d detached, %d ended, %d reconnected\n",
		r.SessionCalls, r.SessionErrors, r.ToolErrors, r.Attached, r.Detached, r.SessionsEnded, r.Reconnects)
	if len(r.ToolErrorKinds) > 0 {
		var kinds []string
		for _, k := range sortedKeys(r.ToolErrorKinds) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, r.ToolErrorKinds[k]))
		}
		fmt.Fprintf(&b, "                 tool errors: %s\n", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(&b, "  disk           %d documents; lost %d, phantom %d, stale %d, of which %d links (settled in %s)\n",
		r.DiskDocs, r.Lost, r.Phantom, r.Stale, r.Links, r.Settled)
	if r.SearchDiffer != "" {
		fmt.Fprintf(&b, "  search         %s\n", r.SearchDiffer)
	}
	fmt.Fprintf(&b, "  changes        %d listed in %d pages from a cursor of the start; %d documents differ on the disk since; %d mismatches\n",
		r.ChangesListed, r.ChangesPages, r.ChangesDiffer, r.ChangesMismatches)
	fmt.Fprintf(&b, "  stream         %d messages; lost %d, phantom %d, stale %d\n", r.Messages, r.StreamLost, r.StreamPhantom, r.StreamStale)
	fmt.Fprintf(&b, "  escaped        %d stream messages, %d search hits\n", r.Escaped, r.EscapedHits)
	fmt.Fprintf(&b, "  orphans        %d session documents\n", len(r.Orphans))
	fmt.Fprintf(&b, "  consumers      %d at the end, %d at the start\n", r.ConsumersEnd, r.ConsumersBaseline)
	for _, c := range head(r.Consumers) {
		fmt.Fprintf(&b, "                 %s\n", c)
	}
	fmt.Fprintf(&b, "  goroutines     %d at the start, %d at the end, %d fresh; RSS %.0f / %.0f / %.0f MiB\n",
		r.GoroutinesStart, r.GoroutinesEnd, r.GoroutinesFresh, r.RSSStartMiB, r.RSSEndMiB, r.RSSFreshMiB)
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "  FAILED: %s\n", f)
	}
	return b.String()
}
