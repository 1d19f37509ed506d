package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/guide/guide/tools/report"
)

// partitionsTimeout bounds the partitions scenario: a first scan, five replicas catching up
// one at a time, and the searches.
const partitionsTimeout = 2 * time.Hour

// mergeWaitParts bounds the wait for a replica's index to merge, for its settled memory.
const mergeWaitParts = 90 * time.Second

// partitionCount is P of the partitions scenario.
const partitionCount = 4

// measurePartitions writes the generated corpus of cfg.PartitionDocs into a stream of
// partitionCount partitions (indexer --partitions), brings up a whole replica and one
// replica per partition from empty, one at a time, and compares their size, memory,
// catch-up and search, the fan-out's hits against the whole replica's.
func measurePartitions(ctx context.Context, cfg Config, bin string, log io.Writer) (r report.PartitionsResult) {
	r = report.PartitionsResult{P: partitionCount, Reps: cfg.SearchReps, Load: report.Load{Before: LoadAverage()}}
	defer func() { r.Load.After = LoadAverage() }()
	ctx, cancel := context.WithTimeout(ctx, partitionsTimeout)
	defer cancel()
	c, err := generated(cfg.Dir, cfg.PartitionDocs, cfg.Seed, cfg.logf)
	if err != nil {
		r.Err = fmt.Sprintf("corpus of %d: %v", cfg.PartitionDocs, err)
		return r
	}
	r.Corpus = c
	data := filepath.Join(cfg.Dir, "data", "partitions")
	_ = os.RemoveAll(data)
	defer os.RemoveAll(data)
	settle()
	ix, err := startIndexer(bin, c.Root, filepath.Join(data, "nats"), log, "--partitions", strconv.Itoa(partitionCount))
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer ix.close()
	replica := func(name string, args ...string) (*server, report.PartReplica, error) {
		dir := filepath.Join(data, name)
		pr := report.PartReplica{}
		if len(args) > 0 {
			pr.Partitions = args[len(args)-1]
		}
		settle()
		start := time.Now()
		s, err := spawn(ctx, log, bin, append([]string{"--nats", ix.url, "--data", dir}, args...)...)
		if err != nil {
			return nil, pr, err
		}
		if _, _, err := s.waitSearchable(ctx, 20*time.Millisecond); err != nil {
			s.stop()
			return nil, pr, err
		}
		pr.CatchUp = time.Since(start)
		pr.RSS, _, _ = s.memory()
		pr.Disk = dirSize(dir)
		// Memory again once its idle index has merged, waiting a while only: five
		// replicas of a large corpus would otherwise take most of an hour.
		mctx, mcancel := context.WithTimeout(ctx, mergeWaitParts)
		if _, _, merged := s.waitMerged(mctx); merged {
			pr.Settled, _, _ = s.memory()
			pr.SettledDisk = settledSize(ctx, dir)
		}
		mcancel()
		cfg.logf("  %s: caught up from empty in %s, RSS %s, data %s", name, report.FormatDuration(pr.CatchUp), report.FormatMB(pr.RSS), report.FormatMB(pr.Disk))
		return s, pr, nil
	}
	// The first replica follows the indexer's first scan: it says when the stream holds it
	// all. It is then removed, so that every measured replica starts on a whole stream.
	cfg.logf("partitions on %s: indexer --partitions %d, first scan", c.Name, partitionCount)
	first, _, err := replica("first")
	if err != nil {
		r.Err = "waiting for the first scan: " + err.Error()
		return r
	}
	first.stop()
	_ = os.RemoveAll(filepath.Join(data, "first"))
	whole, pr, err := replica("whole")
	if err != nil {
		r.Err = "whole replica: " + err.Error()
		return r
	}
	defer whole.stop()
	r.Whole = pr
	var parts []*server
	for k := range partitionCount {
		s, pr, err := replica("p"+strconv.Itoa(k), "--partitions", strconv.Itoa(k))
		if err != nil {
			r.Err = fmt.Sprintf("replica of partition %d: %v", k, err)
			return r
		}
		defer s.stop()
		parts = append(parts, s)
		r.Parts = append(r.Parts, pr)
	}
	fan := parts[0]
	words := vocabulary(c, 10)
	var kept []string
	for _, w := range words {
		if _, err := whole.call(ctx, "search", map[string]any{"query": w}); err == nil {
			kept = append(kept, w) // a stop word is refused alone
		}
	}
	// Every partition served: a search through the fan-out misses none.
	for deadline := time.Now().Add(2 * time.Minute); len(kept) > 0; {
		out, err := fan.call(ctx, "search", map[string]any{"query": kept[0]})
		if err == nil && len(searchHits(out).Missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			r.Err = fmt.Sprintf("the fan-out still misses partitions after two minutes: %v %.200s", err, out)
			return r
		}
		time.Sleep(50 * time.Millisecond) // polling a process over stdio: nothing to wait on
	}
	r.Queries = len(kept)
	var dw, df, fw, ff []time.Duration // every call; the first of each word
	var ew, ef int
	var firstW, firstF error
	for rep := range cfg.SearchReps {
		for _, w := range kept {
			args := map[string]any{"query": w}
			t := time.Now()
			a, err := whole.call(ctx, "search", args)
			dw = append(dw, time.Since(t))
			if rep == 0 {
				fw = append(fw, dw[len(dw)-1])
			}
			if err != nil {
				ew++
				firstW = cmpErr(firstW, err)
			}
			t = time.Now()
			b, err := fan.call(ctx, "search", args)
			df = append(df, time.Since(t))
			if rep == 0 {
				ff = append(ff, df[len(df)-1])
			}
			if err != nil {
				ef++
				firstF = cmpErr(firstF, err)
			}
			if rep == 0 {
				if d := sameHits(searchHits(a), searchHits(b)); d != "" {
					r.Differ++
					if r.FirstDiff == "" {
						r.FirstDiff = fmt.Sprintf("%q: %s", w, d)
					}
				}
			}
		}
	}
	r.WholeSearch = summarize("guide-mcp --nats", "search(word)", dw, ew)
	r.WholeSearch.Note = errNote(firstW)
	r.Fan = summarize("guide-mcp --nats --partitions 0", "search(word)", df, ef)
	r.WholeFirst = summarize("guide-mcp --nats", "search(word), first time", fw, 0)
	r.FanFirst = summarize("guide-mcp --nats --partitions 0", "search(word), first time", ff, 0)
	if n := errNote(firstF); n != "" {
		r.FirstDiff += "; " + n
	}
	cfg.logf("  search p50/p95: whole %s/%s, fan-out %s/%s; %d of %d queries differ", report.FormatDuration(r.WholeSearch.P50),
		report.FormatDuration(r.WholeSearch.P95), report.FormatDuration(r.Fan.P50), report.FormatDuration(r.Fan.P95), r.Differ, r.Queries)
	return r
}

// hits is what the partitions scenario compares of a search's answer.
type hits struct {
	Total uint64 `json:"total"`
	Hits  []struct {
		Path  string  `json:"path"`
		Score float64 `json:"score"`
	} `json:"hits"`
	Partial *struct {
		Missing []int `json:"missing_partitions"`
	} `json:"partial"`
	Missing []int `json:"-"`
}

func searchHits(out string) hits {
	var h hits
	_ = json.Unmarshal([]byte(out), &h)
	if h.Partial != nil {
		h.Missing = h.Partial.Missing
	}
	return h
}

// sameHits says how two answers differ, "" when their hits and totals are the same.
func sameHits(a, b hits) string {
	if a.Total != b.Total {
		return fmt.Sprintf("total %d, through the fan-out %d", a.Total, b.Total)
	}
	if len(a.Hits) != len(b.Hits) {
		return fmt.Sprintf("%d hits, through the fan-out %d", len(a.Hits), len(b.Hits))
	}
	for i := range a.Hits {
		if a.Hits[i] != b.Hits[i] {
			return fmt.Sprintf("hit %d: %s %v, through the fan-out %s %v", i+1, a.Hits[i].Path, a.Hits[i].Score, b.Hits[i].Path, b.Hits[i].Score)
		}
	}
	return ""
}
