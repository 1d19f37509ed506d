package reconcile

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/nats-io/nuid"

	"github.com/guide/guide/internal/events"
)

// flushWait bounds the wait for the acks of one publish.
const flushWait = 2 * time.Minute

// publish compares files with what is known, reads those that may differ, and publishes
// the changes and the deletions; a full scan is framed by scan events. On failure the
// stream may hold some of what was published: it is read afresh next time.
func (x *Indexer) publish(ctx context.Context, files []file, deleted []string, full bool) (Summary, error) {
	p := &publication{x: x, pub: x.Stream.Publisher(), full: full, scan: &events.Scan{ID: nuid.Next()}}
	n := len(files)
	p.sum.Documents = n
	changed := p.changed(files) // files' array is changed's from here
	if err := p.run(ctx, changed, deleted); err != nil {
		x.fresh = false
		return p.sum, err
	}
	if x.Progress != nil && full {
		x.Progress(Progress{Files: n, Read: p.sum.Read, Total: len(changed), Published: p.sum.Published, Done: true})
	}
	return p.sum, nil
}

// publication is one publish: its publisher, the scan that frames it when it is full,
// and its summary so far. It alone touches x.known while it runs.
type publication struct {
	x     *Indexer
	pub   *events.Publisher
	full  bool
	scan  *events.Scan
	began bool // the scan's begin event is published
	sum   Summary
	acks  ackRun // the acks taken so far
}

// run publishes the configuration (on a full scan), the changed documents and the
// deletions, frames them in a scan, and waits for the acks.
func (p *publication) run(ctx context.Context, changed []file, deleted []string) error {
	if p.full {
		if err := p.x.reconcileConfig(ctx, p.pub, &p.sum); err != nil {
			return err
		}
	}
	if err := p.upserts(ctx, changed); err != nil {
		return err
	}
	if err := p.deletes(ctx, deleted); err != nil {
		return err
	}
	if err := p.endScan(ctx); err != nil {
		return err
	}
	return p.flush(ctx)
}

// changed returns the files whose metadata differs from what is known, and counts the
// others as unchanged. It keeps them in files' own array (a first scan's are every file),
// which the caller no longer reads.
func (p *publication) changed(files []file) []file {
	changed := files[:0]
	for _, f := range files {
		if st, ok := p.x.known[f.rel]; ok && f.same(st) {
			p.sum.Unchanged++
			continue
		}
		changed = append(changed, f)
	}
	return changed
}

// begin publishes the scan's begin event before the first change of a full scan.
func (p *publication) begin(ctx context.Context) error {
	if p.began || !p.full {
		return nil
	}
	p.began = true
	return p.pub.Publish(ctx, &events.Event{Op: events.OpScanBegin, Project: p.x.Project, Scan: p.scan})
}

// upserts reads the changed files and publishes those whose content did differ. The first
// failure to publish stops the reading: the files being read when it came are drained, the
// rest are left for the retry (Run's backoff), which compares them again.
func (p *publication) upserts(ctx context.Context, changed []file) error {
	x := p.x
	var pubErr error
	read := 0
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	for e := range x.readAll(rctx, changed) {
		if pubErr != nil {
			continue // drain what the workers had begun
		}
		read++
		if x.Progress != nil && read%256 == 0 {
			x.Progress(Progress{Files: p.sum.Documents, Read: read, Total: len(changed), Published: p.sum.Published})
		}
		if pubErr = p.upsert(ctx, e); pubErr != nil {
			stop()
		}
	}
	p.sum.Read = read
	return pubErr
}

// upsert publishes the event of one file that was read, unless its content turns out
// to be what is known.
func (p *publication) upsert(ctx context.Context, e *events.Event) error {
	x := p.x
	if e.Op == events.OpDelete {
		return p.deleteRead(ctx, e)
	}
	if k, known := x.known[e.Path]; known && k.exists && k.hashIs(e.Hash) && k.status == e.Status {
		// Touched, not changed: remember the new mtime so as not to read it again.
		p.sum.Unchanged++
		k.setMtime(e.Mtime)
		k.size, k.inode = e.Size, e.Inode
		x.known[e.Path], x.dirty = k, true
		return nil
	}
	if err := p.begin(ctx); err != nil {
		return err
	}
	x.withPrev(e)
	if err := p.pub.Publish(ctx, e); err != nil {
		if errors.Is(err, events.ErrPathTooLong) {
			x.log.Warn("cannot publish document", "path", e.Path, "err", err)
			p.sum.Failed++
			return nil
		}
		return err
	}
	p.sum.Published++
	p.take(p.pub.TakeAcks())
	return nil
}

// deleteRead publishes the deletion of a file found gone when it was to be read, if the
// stream holds it.
func (p *publication) deleteRead(ctx context.Context, e *events.Event) error {
	p.sum.Documents--
	if k, known := p.x.known[e.Path]; !known || !k.exists {
		return nil
	}
	if err := p.begin(ctx); err != nil {
		return err
	}
	p.x.withPrev(e)
	if err := p.pub.Publish(ctx, e); err != nil {
		return err
	}
	p.sum.Deleted++
	return nil
}

// readAll reads and hashes the files in parallel and sends their events, in no
// particular order; the channel closes when all are read or ctx ends. The workers get
// what they need of x.known with their work, so that only the caller touches it.
func (x *Indexer) readAll(ctx context.Context, files []file) <-chan *events.Event {
	// A file's previous sequence is all a worker needs of what is known: 8 bytes a file,
	// where a copy of each file's known state took 200 MB for a million.
	prev := make([]uint64, len(files))
	for i, f := range files {
		prev[i] = x.known[f.rel].seq
	}
	results := make(chan *events.Event, 64)
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(2, runtime.NumCPU()) {
		wg.Go(func() {
			rd := x.tree.Reader() // the files come in the walk's order, folder by folder
			for i := range work {
				results <- x.read(rd, files[i], prev[i])
			}
		})
	}
	go func() {
		defer close(work)
		for i := range files {
			select {
			case work <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	return results
}

// deletes publishes the deletion of every path.
func (p *publication) deletes(ctx context.Context, deleted []string) error {
	for _, path := range deleted {
		if err := p.begin(ctx); err != nil {
			return err
		}
		e := &events.Event{Op: events.OpDelete, Project: p.x.Project, Path: path, PrevSeq: p.x.known[path].seq}
		p.x.withPrev(e)
		if err := p.pub.Publish(ctx, e); err != nil {
			return err
		}
		p.sum.Deleted++
	}
	return nil
}

// withPrev writes down in a document event what the stream says of its document before
// it, when that is its previous event: a reader of what changed then needs not read that
// event, which may lie anywhere in the stream.
func (x *Indexer) withPrev(e *events.Event) {
	k, ok := x.known[e.Path]
	if !ok || e.PrevSeq == 0 || k.seq != e.PrevSeq {
		return
	}
	e.Prev = &events.Prev{Op: k.op()}
	if k.exists {
		e.Prev.Size, e.Prev.Hash, e.Prev.Status, e.Prev.Inode = k.size, string(k.appendHash(nil)), k.status, k.inode
	}
}

// endScan closes the scan that begin opened, with its counts.
func (p *publication) endScan(ctx context.Context) error {
	if p.full && !p.began && !p.x.hasScan(ctx) {
		// Nothing changed, but no scan was ever recorded: frame an empty one, so that
		// consumers of a new project learn that they hold a complete snapshot.
		if err := p.begin(ctx); err != nil {
			return err
		}
	}
	if !p.began {
		return nil
	}
	s := &p.sum
	p.scan.Documents, p.scan.Published, p.scan.Unchanged, p.scan.Deleted, p.scan.Failed =
		s.Documents, s.Published, s.Unchanged, s.Deleted, s.Failed
	if err := p.pub.Publish(ctx, &events.Event{Op: events.OpScanEnd, Project: p.x.Project, Scan: p.scan}); err != nil {
		return err
	}
	s.ScanID = p.scan.ID
	return nil
}

// flush waits for the acks, records what the stream now holds in x.known, and sets the
// stream's sequence in the summary.
func (p *publication) flush(ctx context.Context) error {
	fctx, cancel := context.WithTimeout(ctx, flushWait)
	acks, err := p.pub.Flush(fctx)
	cancel()
	p.take(acks)
	if err != nil {
		return err
	}
	p.x.seq = p.acks.advance(p.x.seq)
	if p.sum.StreamSeq == 0 && p.full {
		if info, err := p.x.Stream.Info(ctx); err == nil {
			p.sum.StreamSeq = info.State.LastSeq
		}
	}
	return nil
}

// take records acks in what is known, as they come: what the stream now holds of each
// document, the last sequence this indexer was acked, and the sequences for advance.
// Taken as the publishing goes, a first scan of a million files holds no ack until its
// end (they held 200 MB, beside what is known of the same files).
func (p *publication) take(acks []events.Ack) {
	for _, a := range acks {
		p.acks.add(a)
		p.sum.StreamSeq = max(p.sum.StreamSeq, a.Seq)
		if a.Seq > p.x.acked.Load() {
			p.x.acked.Store(a.Seq) // publications take turns (x.mu)
		}
		if st := a.State; st.Op == events.OpUpsert || st.Op == events.OpDelete {
			p.x.known[st.Path], p.x.dirty = newKnown(st), true
		}
	}
}

// ackRun is what advance needs of one publication's acks, gathered one at a time: their
// sequences, and whether any was a duplicate or came twice.
type ackRun struct {
	seen  roaring64.Bitmap // a run: a few kilobytes for a million
	twice bool
}

func (r *ackRun) add(a events.Ack) {
	if a.Duplicate || !r.seen.CheckedAdd(a.Seq) {
		r.twice = true
	}
}

// advance returns the sequence what is known is exact at, after the acks of one
// publication were applied to what was exact at seq: when they are the events right
// after it, one each, nobody else's came between them, and they are all that is new up
// to the last of them. Otherwise it stays seq, and the events after it are read next time.
func (r *ackRun) advance(seq uint64) uint64 {
	if r.twice || r.seen.IsEmpty() {
		return seq
	}
	lo, hi := r.seen.Minimum(), r.seen.Maximum()
	if lo != seq+1 || hi-lo+1 != r.seen.GetCardinality() {
		return seq
	}
	return hi
}

func (x *Indexer) hasScan(ctx context.Context) bool {
	_, err := x.Stream.LatestScan(ctx, x.Project)
	return err == nil
}
