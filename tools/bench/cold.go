package bench

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/index"
	"github.com/guide/guide/internal/logging"
	"github.com/guide/guide/internal/projection"
	"github.com/guide/guide/internal/reconcile"
	"github.com/guide/guide/internal/text"
	"github.com/guide/guide/tools/report"
)

// hashTree is the baseline every full re-scan must at least do: walk, read and hash every
// file, with workers goroutines.
func hashTree(root string, workers int) report.IndexRun {
	start := time.Now()
	paths := make(chan string, 256)
	var docs, bytes atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for p := range paths {
				f, err := os.Open(p)
				if err != nil {
					continue
				}
				h := sha256.New()
				n, _ := io.CopyBuffer(h, f, buf)
				f.Close()
				_ = h.Sum(nil)
				docs.Add(1)
				bytes.Add(n)
			}
		})
	}
	walkRegular(root, func(p string, _ fs.DirEntry) { paths <- p })
	close(paths)
	wg.Wait()
	return report.IndexRun{Kind: report.RunHash, What: fmt.Sprintf("baseline: walk + read + sha256, %d goroutine(s)", workers),
		Docs: int(docs.Load()), Bytes: bytes.Load(), Duration: time.Since(start)}
}

// ripgrep times rg over the tree: listing its files, and counting matching lines of every
// file (which reads them all). It counts lines of output, as `| wc -l` would.
func ripgrep(root string, args ...string) report.IndexRun {
	r := report.IndexRun{Kind: report.RunRipgrep, What: "baseline: rg " + joinArgs(args) + " DIR"}
	start := time.Now()
	cmd := exec.Command("rg", append(args, root)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.Err = err.Error()
		return r
	}
	if err := cmd.Start(); err != nil {
		r.Err = err.Error()
		return r
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		r.Docs++
	}
	err = cmd.Wait()
	r.Duration = time.Since(start)
	// rg exits 1 when nothing matched, which is no failure here.
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
		r.Err = err.Error()
	}
	return r
}

func joinArgs(a []string) string {
	s := ""
	for i, x := range a {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}

// mergeWaitCold bounds the wait for a cold run's index to merge, for the peak that
// includes the merge.
const mergeWaitCold = 2 * time.Minute

// coldBinary times bin/guide-mcp, all-in-one over stdio on an empty data directory, from
// spawn until its status resource says the catalog holds the whole first scan. The server
// is left running for the latency and restart measurements.
func coldBinary(ctx context.Context, bin string, c *report.Corpus, data string, log io.Writer) (report.IndexRun, *server, error) {
	r := report.IndexRun{Kind: report.RunCatalog, What: "guide all-in-one: bin/guide-mcp --root, stdio, until the catalog applied the first scan", Bytes: c.Bytes}
	if err := os.RemoveAll(data); err != nil {
		return r, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := spawn(ctx, log, bin, "--root", c.Root, "--data", data)
	if err != nil {
		return r, nil, err
	}
	s.started = start
	st, err := s.waitIndexed(ctx)
	r.Duration = time.Since(start)
	r.Docs = st.Documents
	if err != nil {
		s.kill()
		return r, nil, err
	}
	return r, s, nil
}

// caughtUp waits until the search index of the last cold run has caught up too, and
// reports the time from spawn until every projection (catalog and search index) holds the
// first scan, with the process's RSS and the data directory's size at that moment.
func caughtUp(ctx context.Context, s *server, c *report.Corpus, data string) report.IndexRun {
	r := report.IndexRun{Kind: report.RunAll, What: "guide all-in-one: spawn until every projection (catalog and search index) caught up", Bytes: c.Bytes}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	st, _, err := s.waitSearchable(wctx, 20*time.Millisecond)
	r.Duration = time.Since(s.started)
	r.Docs = st.Documents
	if err != nil {
		r.Err = err.Error()
		return r
	}
	rss, peak, _ := s.memory()
	size := dirSize(data)
	// What the process keeps once it has settled (it hands back the garbage of the catch-up).
	time.Sleep(2 * time.Second)
	settled, _, _ := s.memory()
	// The peak of a first index includes the merge of its segments, which ends after the
	// index is searchable: VmHWM again once the index has merged.
	mctx, mcancel := context.WithTimeout(ctx, mergeWaitCold)
	_, _, merged := s.waitMerged(mctx)
	mcancel()
	when := "when caught up, the index not merged within " + report.FormatDuration(mergeWaitCold)
	if _, p, err := s.memory(); err == nil && merged {
		peak, when = max(peak, p), "once the index merged"
		// What the process keeps serving the first index, its merge done too.
		time.Sleep(2 * time.Second)
		r.SettledMerged, _, _ = s.memory()
	}
	r.RSS, r.Settled, r.Peak, r.Disk = rss, settled, peak, size
	if merged {
		r.IndexDisk = settledSize(ctx, filepath.Join(data, "query", "index"))
	} else {
		r.IndexDisk = dirSize(filepath.Join(data, "query", "index"))
	}
	r.Note = fmt.Sprintf("peak RSS (VmHWM) %.0f MB, read %s; RSS when caught up %.0f MB, %.0f MB two seconds later, %.0f MB two seconds after the merge; data directory %.0f MB (%.2f× the text), of it the search index %.0f MB (%.2f×)",
		float64(peak)/1e6, when, float64(rss)/1e6, float64(settled)/1e6, float64(r.SettledMerged)/1e6, float64(size)/1e6, float64(size)/float64(max(c.Bytes, 1)),
		float64(r.IndexDisk)/1e6, float64(r.IndexDisk)/float64(max(c.Bytes, 1)))
	return r
}

// coldInProcess runs the same pieces in this process (embedded NATS, stream, indexer,
// catalog and runner), so that a CPU profile can show where the time goes. It reports how
// long the indexer's reconcile took apart from the catalog catching up.
func coldInProcess(ctx context.Context, c *report.Corpus, data, cpuprofile string) (report.IndexRun, error) {
	r := report.IndexRun{Kind: report.RunInProcess, What: "guide pieces in-process: broker + Stream + Indexer.Reconcile + Catalog and Index/Runner", Bytes: c.Bytes}
	if err := os.RemoveAll(data); err != nil {
		return r, err
	}
	logger, _ := logging.New("warn")
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return r, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return r, err
		}
		defer pprof.StopCPUProfile()
		stopPeak := peakHeapProfiles(cpuprofile + ".peak")
		defer stopPeak()
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	start := time.Now()
	b := &broker.Broker{StoreDir: filepath.Join(data, "nats"), Name: "guide-bench", Logger: logger}
	if err := b.Open(); err != nil {
		return r, err
	}
	defer b.Close()
	s := &events.Stream{Conn: b.Conn}
	if err := s.Open(ctx); err != nil {
		return r, err
	}
	md := text.NewMarkdownHandoff(text.HandoffDocuments) // as guide-mcp
	cat := &projection.Catalog{Dir: filepath.Join(data, "query"), Logger: logger, Markdown: md}
	if err := cat.Open(); err != nil {
		return r, err
	}
	defer cat.Close()
	idx := &index.Index{Dir: filepath.Join(data, "query", "index"), Logger: logger, Markdown: md}
	if err := idx.Open(); err != nil {
		return r, err
	}
	defer idx.Close()
	project := datadir.ProjectName(c.Root)
	run := &projection.Runner{Stream: s, Project: project, Projections: []projection.Projection{cat, idx}, Logger: logger}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = run.Run(rctx) }()
	defer func() { stop(); <-done }()
	x := &reconcile.Indexer{Root: c.Root, Project: project, Stream: s, Logger: logger}
	sum, err := x.Reconcile(ctx)
	if err != nil {
		return r, err
	}
	published := time.Since(start)
	for cat.Checkpoint() < sum.StreamSeq {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
	catalog := time.Since(start)
	for idx.Checkpoint() < sum.StreamSeq {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
	r.Duration = time.Since(start)
	r.Docs = sum.Documents
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mb := func(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }
	queryDir := filepath.Join(data, "query")
	r.Note = fmt.Sprintf("reconcile (walk, read, hash, publish, acks) %s; catalog caught up %s later; search index %s after the catalog; data: stream %s, catalog %s, index %s; Go heap in use after GC %s",
		sum.Duration.Round(time.Millisecond), (catalog - published).Round(time.Millisecond), (r.Duration - catalog).Round(time.Millisecond),
		mb(dirSize(filepath.Join(data, "nats"))), mb(dirSize(queryDir)-dirSize(idx.Dir)), mb(dirSize(idx.Dir)), mb(int64(ms.HeapInuse)))
	if cpuprofile != "" {
		// The heap as it stands once every projection has caught up, beside the CPU profile.
		if f, err := os.Create(cpuprofile + ".heap"); err == nil {
			_ = pprof.WriteHeapProfile(f)
			_ = f.Close()
		}
	}
	return r, nil
}

// peakHeapProfiles writes a heap profile to path each time the Go heap's objects reach
// a new high (by a tenth at least), until stop is called: the last one written is the
// heap near the peak of the run, beside the one written once every projection caught up.
func peakHeapProfiles(path string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var high uint64
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > high+high/10 {
				high = v
				if f, err := os.Create(path); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					_ = f.Close()
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// walkRegular calls fn for every regular file below root, leaving VCS folders out as the
// indexer does, and passing over what cannot be read: the walk of the baselines.
func walkRegular(root string, fn func(p string, d fs.DirEntry)) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if vcsDirs[d.Name()] && p != root {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			fn(p, d)
		}
		return nil
	})
}
