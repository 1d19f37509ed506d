package events

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Partitions. A project may be split into P partitions, P chosen when the stream is made
// and recorded in the stream's metadata under MetaPartitions (absent: one partition, the
// whole project). A document belongs to partition PartitionOf(key, P): the FNV-1a 64-bit
// hash of its key's ID (the path for a document of the tree), modulo P. The hash is of the
// key alone, so a document stays in its partition across edits, renames excepted, and
// every process computes the same partition with no table to share.
//
// On a stream of P > 1 a document's subject carries its partition (Subjects), and its
// upsert the record's share of its content in headers (HdrWords, HdrTitle): a replica of
// some partitions keeps the catalog's record of every document (paths, titles, sizes, for
// tree, list and view), folding the others' from their headers alone, and the bodies and
// the search index of its own partitions only (slim.go; docs/design.md, "Partitions").

// MetaPartitions is the stream metadata key that records P.
const MetaPartitions = "guide_partitions"

// MaxPartitions bounds P.
const MaxPartitions = 1024

// ErrPartitions is returned for a partition count or set that does not fit the stream.
var ErrPartitions = errors.New("partitions")

// PartitionOf returns the partition, in 0..p-1, of the document k among p.
func PartitionOf(k DocKey, p int) int {
	if p <= 1 {
		return 0
	}
	h := fnv.New64a()
	if k.Session == "" {
		_, _ = h.Write([]byte(k.Path))
	} else {
		_, _ = h.Write([]byte(k.ID()))
	}
	return int(h.Sum64() % uint64(p))
}

// PartitionSet is the partitions a query replica folds, of Count in all. The zero value,
// like a set of every partition, holds every document.
type PartitionSet struct {
	Count int   // P, the stream's partitions; 0 or 1: the whole project
	Own   []int // sorted; empty: every partition
}

// Whole reports whether the set holds every document.
func (s PartitionSet) Whole() bool { return s.Count <= 1 || len(s.Own) == 0 || len(s.Own) == s.Count }

// Holds reports whether the document k is in one of the set's partitions.
func (s PartitionSet) Holds(k DocKey) bool {
	if s.Whole() {
		return true
	}
	_, found := slices.BinarySearch(s.Own, s.Of(k))
	return found
}

// Of returns the partition of the document k.
func (s PartitionSet) Of(k DocKey) int { return PartitionOf(k, s.Count) }

// HoldsPartition reports whether partition k is one of the set's.
func (s PartitionSet) HoldsPartition(k int) bool {
	return s.Whole() || slices.Contains(s.Own, k)
}

// All lists every partition, 0..Count-1.
func (s PartitionSet) All() []int {
	out := make([]int, max(s.Count, 1))
	for i := range out {
		out[i] = i
	}
	return out
}

// Served lists the partitions of the set: Own, or every one when the set is whole.
func (s PartitionSet) Served() []int {
	if len(s.Own) == 0 {
		return s.All()
	}
	return s.Own
}

// String is the set as --partitions takes it ("0,2"), "" for the whole project.
func (s PartitionSet) String() string {
	if s.Whole() {
		return ""
	}
	parts := make([]string, len(s.Own))
	for i, k := range s.Own {
		parts[i] = strconv.Itoa(k)
	}
	return strings.Join(parts, ",")
}

// ParsePartitions reads a --partitions list ("0", "1,3") into sorted partition numbers.
func ParsePartitions(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 0 || k >= MaxPartitions {
			return nil, fmt.Errorf("%w: %q is not a partition number", ErrPartitions, f)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Set returns the partition set own of the stream's P, checked against it.
func (s *Stream) Set(own []int) (PartitionSet, error) {
	p := s.PartitionCount()
	for _, k := range own {
		if k >= p {
			return PartitionSet{}, fmt.Errorf("%w: partition %d, but the stream %s has %d", ErrPartitions, k, s.Name, p)
		}
	}
	return PartitionSet{Count: p, Own: own}, nil
}

// PartitionCount is P, as the stream records it: 1 when it records none.
func (s *Stream) PartitionCount() int {
	if s.partitions > 0 {
		return s.partitions
	}
	return 1
}

// recordedPartitions reads P from a stream's metadata: 0 when absent.
func recordedPartitions(cfg jetstream.StreamConfig) (int, error) {
	v, ok := cfg.Metadata[MetaPartitions]
	if !ok {
		return 0, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > MaxPartitions {
		return 0, fmt.Errorf("%w: the stream %s records %s=%q", ErrPartitions, cfg.Name, MetaPartitions, v)
	}
	return p, nil
}

// partitionMeta sets P in cfg for Open: the stream's recorded count is kept, a new
// stream records s.Partitions when above one, and a count other than the recorded one is
// refused (P is fixed for a stream's life: changing it is a new stream, replayed).
func (s *Stream) partitionMeta(ctx context.Context, js jetstream.JetStream, cfg *jetstream.StreamConfig) error {
	recorded := 0
	if st, err := js.Stream(ctx, cfg.Name); err == nil {
		info := st.CachedInfo()
		if recorded, err = recordedPartitions(info.Config); err != nil {
			return err
		}
		if recorded > 0 {
			// Kept on update: a stream updated without it would lose its partitions.
			cfg.Metadata = map[string]string{MetaPartitions: strconv.Itoa(recorded)}
		}
		if s.Partitions > 0 && s.Partitions != max(recorded, 1) {
			return fmt.Errorf("%w: the stream %s has %d, not %d; P is fixed for a stream (see docs/design.md on changing it)",
				ErrPartitions, cfg.Name, max(recorded, 1), s.Partitions)
		}
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("stream %s: %w", cfg.Name, err)
	} else if s.Partitions > 1 {
		if s.Partitions > MaxPartitions {
			return fmt.Errorf("%w: %d is more than %d", ErrPartitions, s.Partitions, MaxPartitions)
		}
		cfg.Metadata = map[string]string{MetaPartitions: strconv.Itoa(s.Partitions)}
		recorded = s.Partitions
	}
	s.partitions = max(recorded, 1)
	return nil
}
