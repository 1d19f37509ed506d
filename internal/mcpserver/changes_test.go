package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit"
)

// churn applies random file operations to a tree: create, write, rename, delete, and
// moves of whole folders. Every write gives a file content no other file ever had, so
// that equal content means the same file, moved.
type churn struct {
	t    *testing.T
	r    *rand.Rand
	root string
	n    int
}

func (c *churn) files() []string {
	var out []string
	for p := range testkit.Disk(c.t, c.root) {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (c *churn) folders() []string {
	seen := map[string]bool{}
	for _, f := range c.files() {
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			seen[d] = true
		}
	}
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func (c *churn) text(lines []string) string {
	c.n++
	lines = slices.Clone(lines)
	if len(lines) == 0 {
		lines = []string{"# Note\n", "\n", "first words\n"}
	}
	switch i := c.r.IntN(len(lines) + 1); c.r.IntN(3) {
	case 0:
		lines = slices.Insert(lines, i, fmt.Sprintf("added line %d%s\n", c.n, strings.Repeat(" x", c.r.IntN(4))))
	case 1:
		if i < len(lines) && len(lines) > 1 {
			lines = slices.Delete(lines, i, i+1)
		}
		lines = append(lines, fmt.Sprintf("tail %d\n", c.n))
	default:
		if i == len(lines) {
			i--
		}
		lines[i] = fmt.Sprintf("changed line %d\n", c.n)
	}
	// A token no other file has, whatever the edit did.
	lines[0] = fmt.Sprintf("# Note %d\n", c.n)
	return strings.Join(lines, "")
}

func (c *churn) newPath() string {
	dirs := []string{"", "a", "a/b", "c", "d/e/f"}
	dirs = append(dirs, c.folders()...)
	for {
		p := path.Join(dirs[c.r.IntN(len(dirs))], fmt.Sprintf("n%d.md", c.r.IntN(1000)))
		if _, err := os.Lstat(filepath.Join(c.root, p)); os.IsNotExist(err) {
			return p
		}
	}
}

// step applies one random operation and says what it did.
func (c *churn) step() string {
	files := c.files()
	op := c.r.IntN(6)
	if len(files) == 0 {
		op = 0
	}
	switch op {
	case 0:
		p := c.newPath()
		testkit.WriteFile(c.t, c.root, p, c.text(nil))
		return "create " + p
	case 1, 2:
		p := files[c.r.IntN(len(files))]
		b, err := os.ReadFile(filepath.Join(c.root, p))
		testkit.NoErr(c.t, err, "read")
		testkit.WriteFile(c.t, c.root, p, c.text(strings.SplitAfter(string(b), "\n")))
		return "write " + p
	case 3:
		p, q := files[c.r.IntN(len(files))], c.newPath()
		testkit.NoErr(c.t, os.MkdirAll(filepath.Dir(filepath.Join(c.root, q)), 0o755), "mkdir")
		testkit.NoErr(c.t, os.Rename(filepath.Join(c.root, p), filepath.Join(c.root, q)), "rename")
		return "rename " + p + " " + q
	case 4:
		p := files[c.r.IntN(len(files))]
		testkit.NoErr(c.t, os.Remove(filepath.Join(c.root, p)), "rm")
		return "delete " + p
	default:
		dirs := c.folders()
		if len(dirs) == 0 {
			return "nothing"
		}
		d := dirs[c.r.IntN(len(dirs))]
		c.n++
		to := fmt.Sprintf("moved%d", c.n)
		if c.r.IntN(2) == 0 {
			to = path.Join("c", to)
		}
		if strings.HasPrefix(to+"/", d+"/") {
			return "nothing"
		}
		testkit.NoErr(c.t, os.MkdirAll(filepath.Dir(filepath.Join(c.root, to)), 0o755), "mkdir")
		testkit.NoErr(c.t, os.Rename(filepath.Join(c.root, d), filepath.Join(c.root, to)), "move folder")
		return "move " + d + " " + to
	}
}

// point is the tree as a cursor saw it: its files, and how many times each path changed
// up to then (an event each, since every write is new content).
type point struct {
	cursor  string
	disk    map[string]string
	changes map[string]int
}

// TestChangesEqualsTheDifference: random file operations, with a cursor taken after each
// step; from a random earlier cursor and from the previous one, every changes answer
// equals the difference between the two states: each path that differs is listed once
// (a move as its two paths), sizes before and after are right, every diff applied to the
// old text gives the new, and a move is one entry. Only a path changed more times than the
// stream keeps events may say before_unknown, and then only its state now. The answers are
// read from the catalog's change log.
func TestChangesEqualsTheDifference(t *testing.T) {
	root := t.TempDir()
	p := testkit.NewPipeline(t, nil, root, "")
	c := &churn{t: t, r: rand.New(rand.NewPCG(7, 33)), root: root}
	for range 8 {
		c.step()
	}
	p.Reconcile()
	var points []point
	take := func(prev *point) {
		var v query.ChangesView
		testkit.Decode(t, p.Call("changes", map[string]any{"since": "now"}), &v)
		pt := point{cursor: v.Cursor, disk: testkit.Disk(t, root), changes: map[string]int{}}
		if prev != nil {
			for k, n := range prev.changes {
				pt.changes[k] = n
			}
			for _, k := range union(prev.disk, pt.disk) {
				if a, ok := prev.disk[k]; !ok || a != pt.disk[k] {
					pt.changes[k]++
				} else if _, ok := pt.disk[k]; !ok {
					pt.changes[k]++
				}
			}
		}
		points = append(points, pt)
	}
	take(nil)
	unknown := 0
	kinds := map[string]int{}
	for step := range 40 {
		var did []string
		for range 1 + c.r.IntN(4) {
			did = append(did, c.step())
		}
		p.Reconcile()
		take(&points[len(points)-1])
		now := points[len(points)-1]
		for _, from := range []int{len(points) - 2, c.r.IntN(len(points) - 1)} {
			unknown += checkChanges(t, p, points[from], now, fmt.Sprintf("step %d (%v), from point %d", step, did, from), kinds)
		}
		from := c.r.IntN(len(points) - 1)
		checkPages(t, p, points[from], now, 1+c.r.IntN(3), fmt.Sprintf("step %d, pages from point %d", step, from))
	}
	t.Logf("entries: %v; %d said before_unknown", kinds, unknown)
	// Every answer came from the catalog's change log: it holds the stream from its start,
	// and was never found damaged (which answers from the stream instead).
	if _, from, ok := p.Catalog.LogHorizon(); !ok || from != 0 || len(p.Catalog.Repairs()) > 0 {
		t.Fatalf("the change log: ok %v, from %d, repairs %+v", ok, from, p.Catalog.Repairs())
	}
	for _, k := range []string{query.ChangeAdded, query.ChangeModified, query.ChangeDeleted, query.ChangeMoved} {
		if kinds[k] == 0 {
			t.Errorf("no answer had a change of kind %s: the operations did not test it", k)
		}
	}
}

// side is what an answer says of a path at one end: whether a document is there, its size.
type side struct {
	exists bool
	size   int64
}

// checkPages reads the changes from point from in pages of at most limit documents, each
// from the previous page's cursor, and checks that they compose: for each path, the last
// page that lists it has its state now, a path no page lists did not change, and the first
// page that lists it has its state at from — unless the path changed more times since
// than the stream keeps events: a page whose range held only events no longer kept cannot
// list them, and a later page lists the document from its state at that page's start.
func checkPages(t *testing.T, p *testkit.Pipeline, from, now point, limit int, what string) {
	t.Helper()
	first, last := map[string]side{}, map[string]side{}
	unknown := map[string]bool{}
	note := func(path string, before, after side, beforeUnknown bool) {
		if _, ok := first[path]; !ok {
			first[path] = before
			unknown[path] = beforeUnknown
		}
		last[path] = after
	}
	at := func(s *int64) side {
		if s == nil {
			return side{}
		}
		return side{true, *s}
	}
	cursor := from.cursor
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("%s: no end", what)
		}
		var v query.ChangesView
		testkit.Decode(t, p.Call("changes", map[string]any{"cursor": cursor, "limit": limit}), &v)
		for _, ch := range v.Changes {
			if ch.Kind == query.ChangeMoved {
				note(ch.From, at(ch.SizeBefore), side{}, false)
				note(ch.Path, side{}, at(ch.SizeAfter), false)
				continue
			}
			note(ch.Path, at(ch.SizeBefore), at(ch.SizeAfter), ch.BeforeUnknown)
		}
		cursor = v.Cursor
		if v.Complete {
			break
		}
	}
	testkit.Equal(t, cursor, now.cursor, what+": the last page's cursor")
	state := func(m map[string]string, k string) side {
		c, ok := m[k]
		return side{ok, int64(len(c))}
	}
	for _, k := range union(from.disk, now.disk) {
		a, b := state(from.disk, k), state(now.disk, k)
		if _, listed := first[k]; !listed {
			if a != b || from.disk[k] != now.disk[k] {
				t.Fatalf("%s: %s changed and no page lists it", what, k)
			}
			continue
		}
		lost := now.changes[k]-from.changes[k] > 3
		if !unknown[k] && !lost && first[k] != a {
			t.Fatalf("%s: %s first listed as %+v at the cursor, was %+v", what, k, first[k], a)
		}
		if last[k] != b {
			t.Fatalf("%s: %s last listed as %+v now, is %+v", what, k, last[k], b)
		}
	}
	for k := range first {
		_, was := from.disk[k]
		_, is := now.disk[k]
		lost := now.changes[k]-from.changes[k] > 3
		if !was && !is && (!unknown[k] && !lost && first[k].exists || last[k].exists) {
			t.Fatalf("%s: %s, here neither at the cursor nor now, listed from %+v to %+v", what, k, first[k], last[k])
		}
	}
}

func union(a, b map[string]string) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// checkChanges calls changes from point from and compares it with the difference to now;
// it returns how many entries said before_unknown.
func checkChanges(t *testing.T, p *testkit.Pipeline, from, now point, what string, kinds map[string]int) int {
	t.Helper()
	var v query.ChangesView
	testkit.Decode(t, p.Call("changes", map[string]any{"cursor": from.cursor, "diff": true, "limit": query.MaxChangesLimit}), &v)
	if !v.Complete || v.Cursor != now.cursor {
		t.Fatalf("%s: complete %v, cursor %s, want %s", what, v.Complete, v.Cursor, now.cursor)
	}
	const kept = 3
	listed := map[string]bool{}
	list := func(path string) {
		if listed[path] {
			t.Fatalf("%s: %s listed twice: %+v", what, path, v.Changes)
		}
		listed[path] = true
	}
	size := func(s *int64) int {
		if s == nil {
			return -1
		}
		return int(*s)
	}
	sizeOf := func(m map[string]string, k string) int {
		if c, ok := m[k]; ok {
			return len(c)
		}
		return -1
	}
	unknown := 0
	for _, ch := range v.Changes {
		kinds[ch.Kind]++
		list(ch.Path)
		if ch.BeforeUnknown {
			unknown++
			// The first event after the cursor says what the document was before it: the
			// state at the cursor is known while that event is kept.
			if n := now.changes[ch.Path] - from.changes[ch.Path]; n <= kept {
				t.Fatalf("%s: %s before_unknown after %d changes (the stream keeps %d)", what, ch.Path, n, kept)
			}
			if size(ch.SizeAfter) != sizeOf(now.disk, ch.Path) {
				t.Fatalf("%s: %s size now %d, on disk %d", what, ch.Path, size(ch.SizeAfter), sizeOf(now.disk, ch.Path))
			}
			continue
		}
		before, after := ch.Path, ch.Path
		if ch.Kind == query.ChangeMoved {
			list(ch.From)
			before = ch.From
			if from.disk[ch.From] != now.disk[ch.Path] {
				t.Fatalf("%s: move %s → %s of different content", what, ch.From, ch.Path)
			}
			if _, ok := now.disk[ch.From]; ok {
				t.Fatalf("%s: moved from %s, which is still there", what, ch.From)
			}
		}
		if size(ch.SizeBefore) != sizeOf(from.disk, before) || size(ch.SizeAfter) != sizeOf(now.disk, after) {
			t.Fatalf("%s: %+v: sizes on disk %d → %d", what, ch, sizeOf(from.disk, before), sizeOf(now.disk, after))
		}
		_, existed := from.disk[before]
		_, exists := now.disk[after]
		want := map[[2]bool]string{{false, true}: query.ChangeAdded, {true, false}: query.ChangeDeleted, {true, true}: query.ChangeModified}[[2]bool{existed, exists}]
		if ch.Kind == query.ChangeMoved {
			want = query.ChangeMoved
		}
		if ch.Kind != want {
			t.Fatalf("%s: %s is %s, want %s", what, ch.Path, ch.Kind, want)
		}
		if ch.Kind == query.ChangeModified && ch.Diff == "" {
			// The text at the cursor is in the event before the first one after it: gone
			// once the document changed as many times as the stream keeps events.
			if n := now.changes[ch.Path] - from.changes[ch.Path]; n < kept || ch.DiffNote == "" {
				t.Fatalf("%s: %s modified %d times, no diff: %q", what, ch.Path, n, ch.DiffNote)
			}
			kinds["no diff"]++
		} else if ch.Kind == query.ChangeModified {
			got, err := testkit.ApplyDiff(from.disk[ch.Path], ch.Diff)
			if err != nil || got != now.disk[ch.Path] {
				t.Fatalf("%s: the diff of %s does not give the new text (%v):\n%s", what, ch.Path, err, ch.Diff)
			}
		}
	}
	// Every path that differs is listed, and a move of unchanged content is one entry.
	for _, k := range union(from.disk, now.disk) {
		a, had := from.disk[k]
		b, has := now.disk[k]
		if had == has && a == b {
			continue
		}
		if !listed[k] {
			t.Fatalf("%s: %s changed (%v → %v) and is not listed: %+v", what, k, had, has, v.Changes)
		}
	}
	for _, ch := range v.Changes {
		if ch.Kind != query.ChangeAdded || ch.BeforeUnknown {
			continue
		}
		for _, d := range v.Changes {
			if d.Kind == query.ChangeDeleted && !d.BeforeUnknown && from.disk[d.Path] == now.disk[ch.Path] {
				t.Fatalf("%s: %s deleted and %s added with the same content: not paired as a move", what, d.Path, ch.Path)
			}
		}
	}
	if len(listed) == 0 && len(v.Changes) != 0 {
		t.Fatalf("%s: entries without paths", what)
	}
	return unknown
}

// TestChangesOlderThanKeptHistory: a document changed more times since the cursor than the
// stream keeps events of it is listed with before_unknown and its state now, and the
// answer says how much history is kept and where to get the whole state; a document
// changed fewer times is still exact beside it.
func TestChangesOlderThanKeptHistory(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFile(t, root, "often.md", "# Often\n\nzero\n")
	testkit.WriteFile(t, root, "once.md", "# Once\n\nzero\n")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	var start query.ChangesView
	testkit.Decode(t, p.Call("changes", map[string]any{"since": "now"}), &start)
	for i := range 4 {
		testkit.WriteFile(t, root, "often.md", fmt.Sprintf("# Often\n\nversion %d\n", i+1))
		if i == 0 {
			testkit.WriteFile(t, root, "once.md", "# Once\n\none\n")
		}
		p.Reconcile()
	}
	var v query.ChangesView
	testkit.Decode(t, p.Call("changes", map[string]any{"cursor": start.Cursor, "diff": true}), &v)
	testkit.Equal(t, v.HistoryKept, int64(3), "history kept")
	testkit.Equal(t, v.BeforeUnknown, 1, "documents before_unknown")
	testkit.Equal(t, len(v.Changes), 2, "entries")
	often, once := v.Changes[0], v.Changes[1]
	if often.Path != "often.md" {
		often, once = once, often
	}
	if !often.BeforeUnknown || often.Kind != query.ChangeChanged || often.SizeBefore != nil || *often.SizeAfter != int64(len("# Often\n\nversion 4\n")) || often.Diff != "" {
		t.Fatalf("often.md: %+v", often)
	}
	if once.BeforeUnknown || once.Kind != query.ChangeModified || once.Diff == "" {
		t.Fatalf("once.md: %+v", once)
	}
	for _, want := range []string{"older than the history the stream keeps", "last 3 events of each document", "tree"} {
		if !strings.Contains(v.Message, want) {
			t.Fatalf("message %q does not say %q", v.Message, want)
		}
	}
}

// TestChangesToolAndResource: the arguments are checked against the input schema; the
// resource is the tool without arguments; a session's attached documents are never listed.
func TestChangesToolAndResource(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	p := testkit.NewPipeline(t, nil, root, "")
	p.Reconcile()
	for name, args := range map[string]map[string]any{
		"ErrLimitZero":     {"limit": 0},
		"ErrLimitTooLarge": {"limit": query.MaxChangesLimit + 1},
		"ErrDiffNotBool":   {"diff": "yes"},
		"ErrSinceTooLong":  {"since": strings.Repeat("1", 65)},
	} {
		t.Run(name, func(t *testing.T) {
			f := testkit.DecodeFailure(t, p.Call("changes", args))
			testkit.Equal(t, f.ErrorType, "invalid_argument", "error type")
		})
	}
	t.Run("AttachmentsNeverListed", func(t *testing.T) {
		var r struct{ Status string }
		testkit.Decode(t, p.Call("attach", map[string]any{"filename": "mine.md", "content": "# Mine\n\nsecret plans"}), &r)
		testkit.WriteFile(t, root, "Characters/Mira.md", "# Mira\n")
		p.Reconcile()
		var v query.ChangesView
		testkit.Decode(t, p.Call("changes", map[string]any{"since": "1h"}), &v)
		paths := map[string]bool{}
		for _, c := range v.Changes {
			paths[c.Path] = true
		}
		if !paths["Characters/Mira.md"] || paths["mine.md"] || strings.Contains(testkit.Text(t, p.Call("changes", map[string]any{"since": "1h"})), "mine.md") {
			t.Fatalf("changes: %+v", v.Changes)
		}
	})
	t.Run("Resource", func(t *testing.T) {
		text, mime := p.ReadResource("guide://_changes")
		testkit.Equal(t, mime, "application/json", "MIME type")
		var v query.ChangesView
		testkit.NoErr(t, json.Unmarshal([]byte(text), &v), "decode")
		if v.Cursor == "" || v.Count == 0 || !v.Complete {
			t.Fatalf("resource: %s", text)
		}
	})
}
