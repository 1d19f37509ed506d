package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/guide/guide/internal/testkit"
	gencorpus "github.com/guide/guide/tools/corpus"
)

func dirSize(dir string) (n int64) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if i, err := d.Info(); err == nil {
				n += i.Size()
			}
		}
		return nil
	})
	return n
}

// TestMeasurePartitions measures, when GUIDE_MEASURE_PARTS names a number of generated
// documents, a whole replica and the four replicas of a stream of four partitions, all in
// this process: data directories, catch-up times, and search latency through a whole
// replica and through the fan-out. It asserts nothing; docs/design.md ("Partitions")
// quotes its figures.
func TestMeasurePartitions(t *testing.T) {
	docs, _ := strconv.Atoi(os.Getenv("GUIDE_MEASURE_PARTS"))
	if docs == 0 {
		t.Skip("GUIDE_MEASURE_PARTS=N")
	}
	ns := testkit.NATSListening(t)
	url := ns.ClientURL()
	root := t.TempDir()
	_, err := gencorpus.Generate(root, gencorpus.Options{Docs: docs, Seed: 35})
	testkit.NoErr(t, err, "generate")
	partitionedStream(t, url, root, 4)
	at := time.Now()
	whole := startReplica(t, url)
	tw := time.Since(at)
	var parts []*replica
	var tp []time.Duration
	for k := range 4 {
		at = time.Now()
		parts = append(parts, startReplica(t, url, "--partitions", fmt.Sprint(k)))
		tp = append(tp, time.Since(at))
	}
	size := func(r *replica) string {
		q := filepath.Join(r.Config.DataDir, "query")
		idx := dirSize(filepath.Join(q, "index"))
		return fmt.Sprintf("total %d MB, index %d MB, catalog %d MB", dirSize(q)>>20, idx>>20, (dirSize(q)-idx)>>20)
	}
	t.Logf("whole: caught up in %v; %s", tw, size(whole))
	for k, p := range parts {
		t.Logf("partition %d: caught up in %v; %s", k, tp[k], size(p))
	}
	for _, r := range []*replica{whole, parts[0]} {
		var lat []time.Duration
		for i := range 60 {
			q := partitionQueries[i%7]
			at := time.Now()
			testkit.Call(t, r.c, "search", map[string]any{"query": q})
			lat = append(lat, time.Since(at))
		}
		slices.Sort(lat)
		t.Logf("search through %s: p50 %v p95 %v", map[bool]string{true: "the whole replica", false: "the fan-out"}[r == whole], lat[len(lat)/2], lat[len(lat)*95/100])
	}
}
