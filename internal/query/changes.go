package query

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guide/guide/internal/diff"
	"github.com/guide/guide/internal/events"
)

// History is what changes reads of the event stream; *events.Stream is one.
type History interface {
	Horizon(ctx context.Context) (events.Horizon, error)
	Window(ctx context.Context, h events.Horizon, project, folder string, after uint64, limit int) ([]events.Event, uint64, bool, error)
	At(ctx context.Context, project string, seqs []uint64) (map[uint64]events.Event, error)
	SeqAt(ctx context.Context, h events.Horizon, t time.Time) (uint64, error)
}

// ChangeLog is a copy of what Window reads of the stream, kept beside a projection and
// read without a message per event: the catalog's change log (projection.Catalog).
type ChangeLog interface {
	// LogHorizon is what the log answers for: Last, the sequence up to which it holds
	// every document event the stream keeps; Kept and ID, the stream's as the log knows
	// them. It holds every event above from. ok is false when there is no log.
	LogHorizon() (h events.Horizon, from uint64, ok bool)
	// LogWindow is Window, read from the log, for a window it answers for.
	LogWindow(ctx context.Context, h events.Horizon, project, folder string, after uint64, limit int) ([]events.Event, uint64, bool, error)
}

// WithLog is hist with the events after a cursor read from log whenever it answers for
// them (see Changes); everything else is read from hist.
func WithLog(hist History, log ChangeLog) History { return &withLog{History: hist, log: log} }

type withLog struct {
	History
	log ChangeLog
}

// logFor returns the log of hist and its horizon when it has one that answers for the
// stream h describes: the same incarnation, keeping as many events of each document.
func logFor(hist History, h events.Horizon) (ChangeLog, events.Horizon, uint64, bool) {
	w, ok := hist.(*withLog)
	if !ok || w.log == nil {
		return nil, h, 0, false
	}
	lh, from, ok := w.log.LogHorizon()
	if !ok || lh.ID != h.ID || lh.Kept != h.Kept && (lh.Kept > 0 || h.Kept > 0) {
		return nil, h, 0, false
	}
	// The catalog may have applied past the stream's end as it was read a moment ago.
	lh.Last = min(lh.Last, h.Last)
	return w.log, lh, from, true
}

// Bounds of changes: documents per answer, and the default look back without a cursor.
const (
	DefaultChangesLimit = 200
	MaxChangesLimit     = 1000
	DefaultChangesSince = 24 * time.Hour
	// diffContext is the kept lines shown around each change of a diff, as diff -u.
	diffContext = 3
	// diffShare: one diff takes at most this part of the response bound.
	diffShare = 2
)

// Kinds of change.
const (
	ChangeAdded    = "added"
	ChangeModified = "modified"
	ChangeDeleted  = "deleted"
	ChangeMoved    = "moved"
	// ChangeChanged: the document exists now, and its state at the cursor is unknown (the
	// stream no longer keeps it).
	ChangeChanged = "changed"
)

// ChangesArgs are the arguments of changes.
type ChangesArgs struct {
	Project string
	// Cursor is a previous answer's cursor; Since is a time instead: RFC 3339, a duration
	// before now ("90m", "2h"), or "now". Neither: DefaultChangesSince.
	Cursor string
	Since  string
	Folder string
	Diff   bool
	Limit  int       // documents; 0 for DefaultChangesLimit
	Now    time.Time // zero for time.Now()
}

// Change is one document's change between the cursor and the answer's cursor.
type Change struct {
	Kind       string        `json:"change"` // added, modified, deleted, moved or changed
	Path       string        `json:"path"`
	From       string        `json:"from,omitempty"` // where a moved document was
	Time       time.Time     `json:"time"`           // when the stream recorded its latest change
	SizeBefore *int64        `json:"size_before,omitempty"`
	SizeAfter  *int64        `json:"size_after,omitempty"`
	Status     events.Status `json:"status,omitempty"` // its status now, when not ok
	// BeforeUnknown: the cursor is older than the history the stream keeps of this
	// document; the entry says what it is now.
	BeforeUnknown bool   `json:"before_unknown,omitempty"`
	Diff          string `json:"diff,omitempty"`
	DiffNote      string `json:"diff_note,omitempty"` // why a diff is cut or absent
}

// ChangesView is what changes returns.
type ChangesView struct {
	// Cursor covers this answer: pass it back to hear only what changed after it.
	Cursor string `json:"cursor"`
	From   string `json:"from"` // the cursor the answer starts at
	Folder string `json:"folder,omitempty"`
	// Complete: every change up to the stream's end, as the call began, is here (with a
	// change log, up to what the catalog had applied); when false, call again with cursor
	// for the rest.
	Complete bool     `json:"complete"`
	Count    int      `json:"count"`
	Changes  []Change `json:"changes"`
	// HistoryKept is how many events of each document the stream keeps.
	HistoryKept   int64  `json:"history_kept"`
	BeforeUnknown int    `json:"before_unknown,omitempty"`
	Message       string `json:"message,omitempty"`
}

// cursorTag names the stream incarnation in a cursor, so that a cursor of a stream deleted
// and made again is not read as one of the new.
func cursorTag(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}

// Cursor is the cursor of the stream sequence seq of the stream incarnation id.
func Cursor(seq uint64, id string) string { return strconv.FormatUint(seq, 10) + "." + cursorTag(id) }

// parseCursor reads a cursor; same is false when it is of another stream incarnation.
func parseCursor(c, id string) (seq uint64, same bool, qerr *Error) {
	n, tag, ok := strings.Cut(c, ".")
	seq, err := strconv.ParseUint(n, 10, 64)
	if !ok || err != nil || len(tag) != 8 {
		return 0, false, Errorf(ErrInvalidArgument, "cursor %q is not one changes gave", c).
			WithInstruction("Pass the cursor of a previous changes answer as it is, or call changes with since instead.")
	}
	return seq, tag == cursorTag(id), nil
}

// since resolves the since argument to a time.
func since(s string, now time.Time) (t time.Time, isNow bool, qerr *Error) {
	switch {
	case s == "":
		return now.Add(-DefaultChangesSince), false, nil
	case s == "now":
		return now, true, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, false, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), false, nil
	}
	return time.Time{}, false, Errorf(ErrInvalidArgument, "since %q is neither a time (RFC 3339, like 2026-01-02T15:04:05Z), a duration (like 90m or 2h) nor \"now\"", s)
}

// track is what the window holds of one document: its events in order.
type track struct {
	path string
	evs  []*events.Event // into the window's events
}

// Changes answers changes: what changed in the project, or below a folder, since a cursor
// or a time, read from the stream's history. With a change log (WithLog), the events
// after the cursor are read from it, and the answer goes up to the sequence it holds (the
// catalog's applied sequence, which read-your-writes waits for), so that its cursor is
// exact; a cursor past that, or before the log's start, is answered from the stream.
// Moves (a delete and an upsert of the same content in one answer) are paired; with Diff,
// each modified text document comes with a unified diff against its text at the cursor.
// The answer is bounded by lim: a cut answer is not complete and its cursor continues
// where it stopped.
func Changes(ctx context.Context, hist History, a ChangesArgs, lim Limits) (*ChangesView, *Error) {
	lim = lim.orDefault()
	if a.Now.IsZero() {
		a.Now = time.Now()
	}
	if a.Limit == 0 {
		a.Limit = DefaultChangesLimit
	}
	if a.Limit < 1 || a.Limit > MaxChangesLimit {
		return nil, Errorf(ErrInvalidArgument, "limit %d is out of range; it is 1 to %d", a.Limit, MaxChangesLimit)
	}
	if a.Cursor != "" && a.Since != "" {
		return nil, Errorf(ErrInvalidArgument, "give cursor or since, not both")
	}
	folder := ""
	if a.Folder != "" {
		var qerr *Error
		if folder, qerr = CleanPath(a.Folder); qerr != nil {
			return nil, qerr
		}
	}
	if hist == nil {
		return nil, Errorf(ErrIO, "the event stream is not connected yet")
	}
	h, err := hist.Horizon(ctx)
	if err != nil {
		return nil, Internal(ErrIO, err, "reading the stream")
	}
	log, lh, logFrom, useLog := logFor(hist, h)
	var after uint64
	reset := false // the cursor is of an earlier stream: nothing is known of before
	switch {
	case a.Cursor != "":
		seq, same, qerr := parseCursor(a.Cursor, h.ID)
		if qerr != nil {
			return nil, qerr
		}
		if same {
			after = seq
		} else {
			reset = true
		}
	default:
		t, isNow, qerr := since(a.Since, a.Now)
		if qerr != nil {
			return nil, qerr
		}
		if isNow {
			after = h.Last
			if useLog {
				after = lh.Last
			}
		} else if after, err = hist.SeqAt(ctx, h, t); err != nil {
			return nil, Internal(ErrIO, err, "reading the stream")
		}
	}
	stream := h
	useLog = useLog && after >= logFrom && after <= lh.Last
	if useLog {
		h = lh
	}
	after = min(after, h.Last)
	kept := max(h.Kept, 1)
	limit := int(min(int64(a.Limit)*kept+1, 50_000))
	var evs []events.Event
	var upTo uint64
	var complete bool
	if useLog {
		evs, upTo, complete, err = log.LogWindow(ctx, h, a.Project, folder, after, limit)
		if err != nil {
			// The log is damaged (the catalog rebuilds it) or gone: the stream answers.
			h, useLog = stream, false
		}
	}
	if !useLog {
		evs, upTo, complete, err = hist.Window(ctx, h, a.Project, folder, after, limit)
	}
	if err != nil {
		return nil, Internal(ErrIO, err, "reading the stream")
	}
	// The documents in the order of their first event; past the limit, the answer stops
	// before the first event of the first document left out.
	var docs []*track
	byPath := make(map[string]*track, min(len(evs), a.Limit))
	for i := range evs {
		e := &evs[i]
		if e.Op != events.OpUpsert && e.Op != events.OpDelete {
			continue
		}
		tr := byPath[e.Path]
		if tr == nil {
			if len(docs) == a.Limit {
				upTo, complete = e.Seq-1, false
				break
			}
			tr = &track{path: e.Path}
			byPath[e.Path] = tr
			docs = append(docs, tr)
		}
		tr.evs = append(tr.evs, e)
	}
	// A document's state at the cursor is what the event its first event after the cursor
	// follows (PrevSeq) says: none when 0; unknown when that is after the cursor too
	// (events in between are no longer kept). The first event says it in its Prev headers;
	// an event of an older publisher does not, and the previous event is read, if kept.
	var prevs []uint64
	for _, d := range docs {
		if e0 := d.evs[0]; e0.PrevSeq != 0 && e0.PrevSeq <= after && e0.Prev == nil {
			prevs = append(prevs, e0.PrevSeq)
		}
	}
	before := map[uint64]events.Event{}
	if !reset && len(prevs) > 0 {
		if before, err = hist.At(ctx, a.Project, prevs); err != nil {
			return nil, Internal(ErrIO, err, "reading the stream")
		}
	}
	b := &changeBuilder{ctx: ctx, hist: hist, project: a.Project, after: after, before: before, reset: reset,
		diff: a.Diff, lim: lim, texts: map[uint64]string{}}
	for seq, e := range before {
		if e.Status == events.StatusOK {
			b.texts[seq] = string(e.Content)
		}
	}
	v := &ChangesView{From: Cursor(after, h.ID), Folder: folder, HistoryKept: h.Kept}
	if a.Cursor != "" {
		v.From = a.Cursor
	}
	// Cut at the response bound: keep the documents whose entries fit, end the answer just
	// before the first event of the first one left out, and build again (the others' later
	// events fall after the new end).
	budget := lim.MaxChars - 600
	n := len(docs)
	for {
		end := upTo
		if n < len(docs) {
			end, complete = docs[n].evs[0].Seq-1, false
		}
		changes, orders, qerr := b.build(docs[:n], end)
		if qerr != nil {
			return nil, qerr
		}
		fit := fitting(changes, orders, budget)
		if fit >= n || n <= 1 {
			v.Changes, upTo = changes, end
			break
		}
		n = max(fit, 1)
	}
	v.Cursor, v.Complete, v.Count = Cursor(upTo, h.ID), complete, len(v.Changes)
	if v.Changes == nil {
		v.Changes = []Change{}
	}
	for _, c := range v.Changes {
		if c.BeforeUnknown {
			v.BeforeUnknown++
		}
	}
	var notes []string
	switch {
	case reset:
		notes = append(notes, "This cursor is of an earlier stream (the index was rebuilt since): every change of the current stream follows, with before_unknown. For the whole current state, use tree.")
	case v.BeforeUnknown > 0:
		notes = append(notes, fmt.Sprintf("The cursor is older than the history the stream keeps (the last %d events of each document) for %s: %s state at the cursor is unknown (before_unknown) and %s %s state now. For the whole current state, use tree or view.",
			h.Kept, plural(v.BeforeUnknown, "document"), pick(v.BeforeUnknown, "its", "their"), pick(v.BeforeUnknown, "its entry shows", "their entries show"), pick(v.BeforeUnknown, "its", "their")))
	}
	if !complete {
		notes = append(notes, fmt.Sprintf("More changes follow: call changes again with cursor %q.", v.Cursor))
	}
	v.Message = strings.Join(notes, " ")
	return v, nil
}

// fitting returns how many leading documents (by order, each entry's document's place in
// the window) have entries that fit in budget characters of JSON; a large number when all do.
func fitting(changes []Change, orders []int, budget int) int {
	for i, c := range changes {
		budget -= jsonLen(c) + 1
		if budget < 0 {
			return orders[i]
		}
	}
	return 1 << 30
}

// jsonLen is the length of c in JSON, as json.Marshal writes it, counted without writing
// it: an answer of a thousand changes measures each.
func jsonLen(c Change) int {
	n := len(`{"change":,"path":,"time":}`) + jsonStringLen(c.Kind) + jsonStringLen(c.Path)
	t, err := c.Time.MarshalJSON()
	if err != nil {
		b, _ := json.Marshal(c) // as json.Marshal fails on such a time
		return len(b)
	}
	n += len(t)
	str := func(key, v string) {
		if v != "" {
			n += len(key) + 4 + jsonStringLen(v) // ,"key":
		}
	}
	str("from", c.From)
	str("status", string(c.Status))
	str("diff", c.Diff)
	str("diff_note", c.DiffNote)
	size := func(key string, v *int64) {
		if v != nil {
			n += len(key) + 4 + len(strconv.FormatInt(*v, 10))
		}
	}
	size("size_before", c.SizeBefore)
	size("size_after", c.SizeAfter)
	if c.BeforeUnknown {
		n += len(`,"before_unknown":true`)
	}
	return n
}

// jsonStringLen is the length of s as a JSON string: its length and quotes when no byte of
// it is escaped, else what json.Marshal writes.
func jsonStringLen(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return len(b)
		}
	}
	return len(s) + 2
}

// changeBuilder turns the documents' events into entries.
type changeBuilder struct {
	ctx     context.Context
	hist    History
	project string
	after   uint64                  // the cursor's sequence
	before  map[uint64]events.Event // previous events read, by sequence
	reset   bool
	diff    bool
	lim     Limits
	texts   map[uint64]string // content by event sequence, read for diffs
}

// entry is one document's change, before moves are paired.
type entry struct {
	Change
	order   int // the document's place in the window
	hash    string
	status  events.Status
	inode   uint64
	before  events.Prev // the document at the cursor, when it existed
	prevSeq uint64      // the event that says so
	last    *events.Event
	removed bool
}

// build returns the entries of docs as of the sequence end, and the place of each one's
// document in docs.
func (b *changeBuilder) build(docs []*track, end uint64) ([]Change, []int, *Error) {
	var entries []*entry
	for i, d := range docs {
		var last *events.Event
		for j := range d.evs {
			if d.evs[j].Seq <= end {
				last = d.evs[j]
			}
		}
		if last == nil {
			continue
		}
		e := &entry{order: i, last: last}
		e.Path, e.Time = d.path, last.Time.UTC()
		exists := last.Op == events.OpUpsert
		if exists {
			e.SizeAfter = ptr(last.Size)
			e.hash, e.status, e.inode = last.Hash, last.Status, last.Inode
			if last.Status != events.StatusOK {
				e.Status = last.Status
			}
		}
		prev, known := b.stateAtCursor(d)
		existed := known && prev.Op == events.OpUpsert
		e.prevSeq = d.evs[0].PrevSeq
		switch {
		case !known:
			e.BeforeUnknown = true
			e.Kind = ChangeDeleted
			if exists {
				e.Kind = ChangeChanged
			}
		case !existed && !exists:
			continue // came and went
		case !existed:
			e.Kind = ChangeAdded
		case !exists:
			e.Kind, e.SizeBefore, e.before = ChangeDeleted, ptr(prev.Size), prev
			e.hash, e.status, e.inode = prev.Hash, prev.Status, prev.Inode
		case prev.Hash == last.Hash && prev.Status == last.Status:
			continue // back as it was
		default:
			e.Kind, e.SizeBefore, e.before = ChangeModified, ptr(prev.Size), prev
		}
		entries = append(entries, e)
	}
	pairMoves(entries)
	if qerr := b.readTexts(entries); qerr != nil {
		return nil, nil, qerr
	}
	out := make([]Change, 0, len(entries))
	orders := make([]int, 0, len(entries))
	for _, e := range entries {
		if e.removed {
			continue
		}
		if b.diff && e.Kind == ChangeModified {
			if qerr := b.addDiff(e); qerr != nil {
				return nil, nil, qerr
			}
		}
		out, orders = append(out, e.Change), append(orders, e.order)
	}
	return out, orders, nil
}

// stateAtCursor is what d was at the cursor (an Op of "" when it had no event then), and
// whether that is known.
func (b *changeBuilder) stateAtCursor(d *track) (events.Prev, bool) {
	e0 := d.evs[0]
	switch {
	case b.reset || e0.PrevSeq > b.after:
		return events.Prev{}, false
	case e0.PrevSeq == 0:
		return events.Prev{}, true
	case e0.Prev != nil:
		return *e0.Prev, true
	}
	prev, ok := b.before[e0.PrevSeq]
	if !ok || prev.Path != d.path {
		return events.Prev{}, false // no longer kept
	}
	return events.Prev{Op: prev.Op, Size: prev.Size, Hash: prev.Hash, Status: prev.Status, Inode: prev.Inode}, true
}

// movable reports whether an entry's hash is of its content, so that the same hash means
// the same bytes (a status the indexer sets before reading has a hash of its reason).
func movable(s events.Status) bool {
	return s == events.StatusOK || s == events.StatusBinary || s == events.StatusInvalidUTF8
}

// pairMoves pairs each deleted document with an added one of the same content, preferring
// the same inode (a rename), then the same name; the added entry becomes the move.
func pairMoves(entries []*entry) {
	deleted := map[string][]*entry{}
	for _, e := range entries {
		if e.Kind == ChangeDeleted && !e.BeforeUnknown && movable(e.status) {
			deleted[e.hash] = append(deleted[e.hash], e)
		}
	}
	if len(deleted) == 0 {
		return
	}
	for _, e := range entries {
		if e.Kind != ChangeAdded || !movable(e.status) {
			continue
		}
		var d *entry
		bestScore := -1
		for _, c := range deleted[e.hash] {
			if c.removed {
				continue
			}
			score := 0
			if e.inode != 0 && c.inode == e.inode {
				score += 2
			}
			if path.Base(c.Path) == path.Base(e.Path) {
				score++
			}
			if score > bestScore {
				d, bestScore = c, score
			}
		}
		if d == nil {
			continue
		}
		d.removed = true
		e.Kind, e.From, e.SizeBefore = ChangeMoved, d.Path, d.SizeBefore
		if d.Time.After(e.Time) {
			e.Time = d.Time
		}
	}
}

// readTexts reads, in one round trip, the texts the diffs of entries need and that no
// earlier build read.
func (b *changeBuilder) readTexts(entries []*entry) *Error {
	if !b.diff {
		return nil
	}
	var seqs []uint64
	for _, e := range entries {
		if e.removed || e.Kind != ChangeModified || e.last.Status != events.StatusOK || e.before.Status != events.StatusOK {
			continue
		}
		for _, seq := range []uint64{e.prevSeq, e.last.Seq} {
			if _, ok := b.texts[seq]; !ok {
				seqs = append(seqs, seq)
			}
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	got, err := b.hist.At(b.ctx, b.project, seqs)
	if err != nil {
		return Internal(ErrIO, err, "reading the stream")
	}
	for seq, ev := range got {
		if ev.Status == events.StatusOK {
			b.texts[seq] = string(ev.Content)
		}
	}
	return nil
}

// addDiff gives a modified text document its diff against its text at the cursor.
func (b *changeBuilder) addDiff(e *entry) *Error {
	if e.before.Status != events.StatusOK || e.last.Status != events.StatusOK {
		e.DiffNote = "no diff: not text on both sides"
		return nil
	}
	old, okOld := b.texts[e.prevSeq]
	cur, okCur := b.texts[e.last.Seq]
	if !okOld || !okCur {
		e.DiffNote = "no diff: the stream no longer keeps the text at the cursor; use view"
		if !okCur {
			e.DiffNote = "no diff: the stream no longer keeps this version; use view"
		}
		return nil
	}
	d := diff.Unified("a/"+e.Path, "b/"+e.Path, old, cur, diffContext)
	if maxLen := b.lim.MaxChars / diffShare; len(d) > maxLen {
		cut := strings.LastIndexByte(d[:maxLen], '\n') + 1
		e.DiffNote = fmt.Sprintf("diff cut at %d of %d characters; view(%q) shows the whole document", cut, len(d), e.Path)
		d = d[:cut]
	}
	e.Diff = d
	return nil
}

func ptr[T any](v T) *T { return &v }

// plural is "1 document", "2 documents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// pick is one when n is 1, else many.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
