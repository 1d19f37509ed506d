package index

import (
	"encoding/binary"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// seqBytes is how the checkpoint seq is stored, in the same Bleve batch as the documents
// it follows (keySeq).
func seqBytes(seq uint64) []byte {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], seq)
	return v[:]
}

// closeWait bounds how long Close waits for scorch to persist the last batches; what it
// does not persist is replayed from the stream on the next start.
const closeWait = 30 * time.Second

// persistence follows scorch's persister: Close waits for it to reach the checkpoint,
// so that a clean restart replays nothing.
type persistence struct {
	seq   atomic.Uint64 // checkpoint of the last batch written to disk
	begun atomic.Bool   // the first batch (the mapping version and identity) is on disk
	ch    chan struct{} // receives, without blocking, after every persisted batch
}

func newPersistence(begun bool) *persistence {
	p := &persistence{ch: make(chan struct{}, 1)}
	p.begun.Store(begun)
	return p
}

// onPersisted makes batch b record seq as persisted once scorch has written it.
func (x *Index) onPersisted(b *bleve.Batch, seq uint64) {
	p, wake := x.disk, x.sumsWake
	b.SetPersistedCallback(func(err error) {
		if err != nil {
			return
		}
		select { // the segment is on disk: its checksum goes into the list
		case wake <- struct{}{}:
		default:
		}
		p.begun.Store(true)
		for s := p.seq.Load(); s < seq && !p.seq.CompareAndSwap(s, seq); s = p.seq.Load() {
		}
		select {
		case p.ch <- struct{}{}:
		default:
		}
	})
}

// Flush waits until scorch has written every batch applied to disk, or closeWait passes,
// holding off Close and Reset meanwhile.
func (x *Index) Flush() {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.idx != nil {
		x.flush()
	}
}

// flush waits until scorch has persisted every batch applied, or closeWait passes.
func (x *Index) flush() {
	p := x.disk
	deadline := time.After(closeWait)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for p.seq.Load() < x.seq.Load() || !p.begun.Load() {
		select {
		case <-p.ch:
		case <-tick.C:
			// A persister that cannot write will not catch up: waiting would only hold
			// a shutdown up.
			if err := x.persistErr(); err != nil {
				x.Logger.Warn("closing the index while it cannot persist its last batches; they will be replayed",
					"persisted", p.seq.Load(), "applied", x.seq.Load(), "err", err)
				return
			}
		case <-deadline:
			x.Logger.Warn("closing the index before its last batches were persisted; they will be replayed",
				"persisted", p.seq.Load(), "applied", x.seq.Load())
			return
		}
	}
}
