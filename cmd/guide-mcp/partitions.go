package main

// Partitions: guide-mcp --nats URL --partitions k[,k…] folds the bodies and the search
// index of its partitions alone (events/partition.go), and answers a search over all of
// them through the partition services of the replicas (package partition).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	isearch "github.com/guide/guide/internal/index/search"
	"github.com/guide/guide/internal/partition"
)

// partitionsFile records, in the query data directory, the partitions its projections
// hold: "P own,own"; absent for the whole project (no partitions), so that the data
// directory of an unpartitioned replica is as it always was.
const partitionsFile = "partitions"

// partitionSet returns the partitions this replica folds, and prepares the query data
// directory for them: projections built for another set are removed, to be rebuilt from
// the stream. With no --partitions it returns the whole set and touches nothing.
func (m *Main) partitionSet(ctx context.Context) (events.PartitionSet, error) {
	own := m.Config.Partitions
	if len(own) == 0 {
		return events.PartitionSet{}, nil
	}
	dir := filepath.Join(m.dataDir(), "query")
	file := filepath.Join(dir, partitionsFile)
	if set, ok := readPartitions(file); ok && set.String() == (events.PartitionSet{Count: set.Count, Own: own}).String() {
		m.parts = set
		return set, m.checkPartitions() // or once connected
	}
	// The stream says what P is: wait for it.
	if err := m.connect(ctx); err != nil {
		return events.PartitionSet{}, err
	}
	set, err := m.stream.Set(own)
	if err != nil {
		return set, err
	}
	if set.Whole() {
		return set, fmt.Errorf("%w: --partitions %s covers the whole of the stream's %d; leave it out", events.ErrPartitions, set.String(), set.Count)
	}
	if _, err := os.Stat(dir); err == nil {
		m.Logger.Info("the data directory holds other partitions; rebuilding it from the stream", "dir", dir, "partitions", set.String())
		if err := os.RemoveAll(dir); err != nil {
			return set, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return set, err
	}
	return set, os.WriteFile(file, []byte(strconv.Itoa(set.Count)+" "+set.String()+"\n"), 0o644)
}

// checkPartitions refuses a stream whose P is not the one the data directory was built for.
func (m *Main) checkPartitions() error {
	if m.parts.Whole() || m.stream == nil {
		return nil
	}
	if p := m.stream.PartitionCount(); p != m.parts.Count {
		return fmt.Errorf("%w: the data directory holds partitions of %d, the stream has %d; remove %s",
			events.ErrPartitions, m.parts.Count, p, filepath.Join(m.dataDir(), "query"))
	}
	return nil
}

// readPartitions reads the partitions file; ok is false when there is none or it is not one.
func readPartitions(file string) (events.PartitionSet, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return events.PartitionSet{}, false
	}
	p, own, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	n, err := strconv.Atoi(p)
	if err != nil {
		return events.PartitionSet{}, false
	}
	ks, err := events.ParsePartitions(own)
	if err != nil || len(ks) == 0 {
		return events.PartitionSet{}, false
	}
	return events.PartitionSet{Count: n, Own: ks}, true
}

// partitionsFlag parses --partitions.
func partitionsFlag(c *Config) func(string) error {
	return func(v string) error {
		ks, err := events.ParsePartitions(v)
		if err != nil {
			return err
		}
		if len(ks) == 0 {
			return errors.New("--partitions: name at least one partition, e.g. 0 or 1,3")
		}
		c.Partitions = ks
		return nil
	}
}

// partitionClient is the client that asks the other partitions, made once.
func (m *Main) partitionClient() *partition.Client {
	if m.partsOut == nil {
		m.partsOut = &partition.Client{Set: m.parts, Logger: m.Logger}
	}
	return m.partsOut
}

// fanout is the search of every partition, this replica's own from its own index.
func (m *Main) fanout() *isearch.Fanout {
	c := m.partitionClient()
	c.Local = m.index
	return &isearch.Fanout{Call: c.Call, BM25: index.BM25Of, Count: m.parts.Count}
}

// servePartitions lets this replica ask the other partitions at once, and serves its own
// to the others once the projections have caught up with the stream (caught): a replica
// catching up would answer short, and no one could tell. Until then its partitions are
// asked of their other replicas, or are missing. A whole replica serves nothing.
func (m *Main) servePartitions(ctx context.Context, caught <-chan struct{}) {
	if m.parts.Whole() {
		return
	}
	c := m.partitionClient()
	c.Connect(m.broker.Conn, m.project)
	m.wg.Go(func() {
		select {
		case <-caught:
		case <-ctx.Done():
			return
		}
		svc := &partition.Service{Conn: m.broker.Conn, Project: m.project, Set: m.parts, Index: m.index,
			Catalog: m.catalog, Logger: m.Logger}
		if err := svc.Start(); err != nil {
			m.Logger.Error("cannot serve this replica's partitions; searches of every replica miss them", "partitions", m.parts.String(), "err", err)
			return
		}
		c.Serve()
		m.Logger.Info("serving partitions", "partitions", m.parts.String(), "of", m.parts.Count)
		<-ctx.Done()
		svc.Stop()
	})
}
