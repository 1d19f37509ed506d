package projection

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/guide/guide/internal/events"
)

// fetchTimeout bounds how long a read waits for the stream's copy of a damaged body.
const fetchTimeout = 2 * time.Second

// UseStream names the stream the catalog reads damaged bodies again from (the runner
// calls it as it starts).
func (c *Catalog) UseStream(s *events.Stream) { c.stream.Store(s) }

// Repairs lists the damage found in the catalog's files, latest last, and what was done.
func (c *Catalog) Repairs() []Repair { return c.repairs.List() }

// getState reads a state value, checking its checksum (nil when absent).
func getState(st *bolt.Bucket, k []byte) ([]byte, error) {
	v := st.Get(k)
	if v == nil {
		return nil, nil
	}
	return unseal(v)
}

// putState writes a state value with its checksum.
func putState(st *bolt.Bucket, k, v []byte) error { return st.Put(k, seal(v)) }

// markBroken records that catalog.db was found damaged while in use: the catalog refuses
// batches until the runner resets it (Damaged wakes it), which starts a new file.
func (c *Catalog) markBroken(err error) {
	if Faulted(err) {
		c.poisoned.Store(true)
	}
	if !c.broken.CompareAndSwap(nil, &err) {
		return
	}
	c.Logger.Error("catalog damaged; rebuilding it from the stream", "file", "catalog.db", "err", err)
	c.repairs.Add(Repair{Projection: "catalog", File: "catalog.db", Problem: err.Error(), Action: "deleted and rebuilt from the stream"})
	c.damageMu.Lock()
	defer c.damageMu.Unlock()
	if c.damagedCh == nil {
		c.damagedCh = make(chan struct{})
	}
	close(c.damagedCh)
}

// brokenErr is why the catalog refuses batches, nil while it is whole.
func (c *Catalog) brokenErr() error {
	if p := c.broken.Load(); p != nil {
		return fmt.Errorf("catalog: %w", *p)
	}
	return nil
}

// Damaged is closed when the catalog's file is found damaged while in use: whoever
// follows the stream for it then resets it (Identity says it was built from no stream).
func (c *Catalog) Damaged() <-chan struct{} {
	c.damageMu.Lock()
	defer c.damageMu.Unlock()
	if c.damagedCh == nil {
		c.damagedCh = make(chan struct{})
	}
	return c.damagedCh
}

// startOver replaces a damaged catalog file by a new, empty one. The caller holds applying.
func (c *Catalog) startOver() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeBodies()
	if c.db != nil && !c.poisoned.Load() {
		_ = c.db.Close()
	}
	c.db = nil
	c.poisoned.Store(false)
	file := c.file()
	if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := c.openFile(file); err != nil {
		return fmt.Errorf("creating the catalog %s: %w", file, err)
	}
	c.broken.Store(nil)
	c.damageMu.Lock()
	c.damagedCh = nil
	c.damageMu.Unlock()
	return nil
}

// fromStream returns d's content from the stream when the body file's copy is damaged or
// missing (problem says how): the content of the document's latest event, when it is the
// version d records; the body is written back to the body file meanwhile (repairBodies).
// It runs under the catalog's read lock, a round trip bounded by fetchTimeout, only for a
// damaged body.
func (c *Catalog) fromStream(d *Document, problem error) ([]byte, error) {
	s := c.stream.Load()
	if s == nil {
		return nil, fmt.Errorf("damaged on disk (%v), and the stream is not connected to repair it", problem)
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	var e events.Event
	var err error
	if d.Session != "" {
		e, err = s.LatestSession(ctx, c.state.Project, d.Session, d.Path)
	} else {
		e, err = s.Latest(ctx, c.state.Project, d.Path)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("damaged on disk (%v), and reading it from the stream failed: %w", problem, err)
	case e.Op != events.OpUpsert || e.Hash != d.Hash || !matches(e.Content, d.Hash):
		return nil, fmt.Errorf("damaged on disk (%v); the stream holds another version, being applied", problem)
	}
	c.queueRepair(d.Hash, e.Content, problem)
	return e.Content, nil
}

// queueRepair has body, read again from the stream, written back to the body file.
func (c *Catalog) queueRepair(hash string, body []byte, problem error) {
	c.repairMu.Lock()
	defer c.repairMu.Unlock()
	if c.repairClosed {
		return
	}
	if _, queued := c.toRepair[hash]; queued {
		return
	}
	if c.toRepair == nil {
		c.toRepair = make(map[string][]byte)
	}
	c.Logger.Warn("catalog: a body was damaged on disk; serving and writing back the stream's copy", "hash", hash, "problem", problem)
	c.toRepair[hash] = body
	if !c.repairing {
		c.repairing = true
		c.repairWG.Add(1)
		go c.repairBodies()
	}
}

// repairBodies writes the bodies queued back to the body file, as a batch does, until
// none is left.
func (c *Catalog) repairBodies() {
	defer c.repairWG.Done()
	for {
		c.repairMu.Lock()
		batch := c.toRepair
		c.toRepair = nil
		if len(batch) == 0 {
			c.repairing = false
			c.repairMu.Unlock()
			return
		}
		c.repairMu.Unlock()
		c.applying.Lock()
		n, err := c.writeRepairs(batch)
		c.applying.Unlock()
		if err != nil {
			c.Logger.Error("catalog: writing repaired bodies back", "err", err)
			continue // read again from the stream at their next read
		}
		if n > 0 {
			c.Logger.Info("catalog: damaged bodies repaired from the stream", "bodies", n)
			c.repairs.Add(Repair{Projection: "catalog", File: bodyFileName(c.body.gen),
				Problem: fmt.Sprintf("%d bodies damaged or missing", n), Action: "repaired from the stream"})
		}
	}
}

// writeRepairs appends the bodies to the body file and points their content hashes at
// them, in one transaction as a batch does; bodies no document references any more are
// left out. The caller holds applying.
func (c *Catalog) writeRepairs(bodies map[string][]byte) (int, error) {
	if c.db == nil || c.broken.Load() != nil || c.poisoned.Load() {
		return 0, nil
	}
	a := appendBodies{st: c.body}
	n := 0
	err := Guard(func() error {
		return c.db.Update(func(tx *bolt.Tx) error {
			content := tx.Bucket(bucketContent)
			for h, body := range bodies {
				old := content.Get([]byte(h))
				if old == nil && c.refs[h] <= 0 {
					continue
				}
				if old != nil {
					a.drop(old)
				}
				if err := content.Put([]byte(h), a.add(body).encode()); err != nil {
					return err
				}
				n++
			}
			if n == 0 {
				return nil
			}
			if err := putState(tx.Bucket(bucketState), keyBodies, a.st.encode()); err != nil {
				return err
			}
			_, err := c.files[a.st.gen].WriteAt(a.buf, c.body.end)
			return err
		})
	})
	if err != nil {
		if errors.Is(err, ErrDamaged) {
			c.markBroken(err)
		}
		return 0, err
	}
	c.body = a.st
	return n, nil
}
