package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/guide/guide/internal/query"

	"github.com/guide/guide/tools/stats"
)

// split is guide in split mode: bin/indexer with its embedded NATS server listening on a
// loopback port, and bin/guide-mcp --nats as a separate process driven over stdio.
type split struct {
	indexer *exec.Cmd
	exited  chan struct{}
	url     string
	q       *server
	Setup   time.Duration // spawn of the indexer to the index holding the first scan
	Status  query.Status
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// indexerBin is bin/indexer beside bin/guide-mcp.
func indexerBin(guideMCP string) string { return filepath.Join(filepath.Dir(guideMCP), "indexer") }

func startSplit(ctx context.Context, bin, root, data string, log io.Writer) (*split, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	sp := &split{url: "nats://" + addr, exited: make(chan struct{})}
	start := time.Now()
	sp.indexer = exec.Command(indexerBin(bin), "--root", root, "--data", filepath.Join(data, "nats"), "--listen", addr)
	sp.indexer.Stderr = log
	sp.indexer.Stdout = log
	if err := sp.indexer.Start(); err != nil {
		return nil, err
	}
	go func() { _ = sp.indexer.Wait(); close(sp.exited) }()
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-sp.exited:
			return nil, fmt.Errorf("indexer exited before listening on %s", addr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(start) > time.Minute {
			sp.close()
			return nil, fmt.Errorf("indexer not listening on %s after a minute", addr)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	sp.q, err = spawn(cctx, log, bin, "--nats", sp.url, "--data", filepath.Join(data, "query"))
	if err != nil {
		sp.close()
		return nil, err
	}
	sp.Status, _, err = sp.q.waitSearchable(cctx, 20*time.Millisecond)
	if err != nil {
		sp.close()
		return nil, err
	}
	sp.Setup = time.Since(start)
	return sp, nil
}

func (sp *split) close() {
	if sp.q != nil {
		sp.q.stop()
	}
	if sp.indexer != nil && sp.indexer.Process != nil {
		_ = sp.indexer.Process.Signal(syscall.SIGTERM)
		select {
		case <-sp.exited:
		case <-time.After(15 * time.Second):
			_ = sp.indexer.Process.Kill()
			<-sp.exited
		}
	}
}

// OnceRun is one indexer --once.
type OnceRun struct {
	Duration  time.Duration
	Documents int   `json:"documents"`
	Published int   `json:"published"`
	Read      int   `json:"read"`
	Deleted   int   `json:"deleted"`
	Failed    int   `json:"failed"`
	Millis    int64 `json:"duration_ms"`
	Err       string
}

// runOnce times bin/indexer --once --json with args, whole process.
func runOnce(ctx context.Context, bin string, log io.Writer, args ...string) OnceRun {
	var r OnceRun
	cmd := exec.CommandContext(ctx, indexerBin(bin), append([]string{"--once", "--json"}, args...)...)
	cmd.Stderr = log
	start := time.Now()
	out, err := cmd.Output()
	r.Duration = time.Since(start)
	if err != nil {
		r.Err = err.Error()
	}
	if jerr := json.Unmarshal(out, &r); jerr != nil && r.Err == "" {
		r.Err = "summary: " + jerr.Error()
	}
	return r
}

// medianOnce is the run of median duration.
func medianOnce(runs []OnceRun) OnceRun {
	return stats.PercentileFunc(runs, 50, func(a, b OnceRun) int { return cmp.Compare(a.Duration, b.Duration) })
}

// copyTree copies the regular files of src to dst, so that the scenarios that write
// files never touch a stored corpus.
func copyTree(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(t, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(t, b, 0o644)
	})
}

// FreshResult is the freshness scenario (issue 5): a saved file to view and search.
type FreshResult struct {
	Corpus   *Corpus
	Setup    time.Duration
	View     Latency // write to view showing the new content
	Search   Latency // write to search finding the new token
	Rescan   []OnceRun
	Timeouts int
	Load     Load
	Err      string
}

// measureFresh writes a unique token into a document, then polls view until it shows it
// and search until it finds it, samples times; then times the baseline, a full re-scan
// with indexer --once after changing one file, rescans times.
func measureFresh(ctx context.Context, bin string, sp *split, c *Corpus, samples, rescans int, seed uint64, log io.Writer) FreshResult {
	r := FreshResult{Corpus: c, Setup: sp.Setup, Load: Load{Before: loadAvg()}}
	rng := rand.New(rand.NewPCG(seed, 0xf7e54))
	docs := plainDocs(c)
	var vs, ss []time.Duration
	verrs, serrs := 0, 0
	for i := range samples {
		p := docs[rng.IntN(len(docs))]
		full := filepath.Join(c.Root, filepath.FromSlash(p))
		orig, err := os.ReadFile(full)
		if err != nil {
			r.Err = err.Error()
			break
		}
		orig = stripStamp(orig, "\n\nfreshtoken ")
		token := fmt.Sprintf("zqfresh%dn%d", i, seed)
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		if err := os.WriteFile(full, append(orig, "\n\nfreshtoken "+token+"\n"...), 0o644); err != nil {
			r.Err = err.Error()
			break
		}
		var vd, sd time.Duration
		for (vd == 0 || sd == 0) && time.Since(start) < 10*time.Second {
			if vd == 0 {
				out, err := sp.q.call(ctx, "view", map[string]any{"path": p})
				if err == nil && strings.Contains(out, token) {
					vd = time.Since(start)
				}
			}
			if sd == 0 {
				out, err := sp.q.call(ctx, "search", map[string]any{"query": token})
				if err == nil && searchTotal(out) > 0 {
					sd = time.Since(start)
				}
			}
			time.Sleep(time.Millisecond)
		}
		if vd == 0 {
			verrs++
			r.Timeouts++
		} else {
			vs = append(vs, vd)
		}
		if sd == 0 {
			serrs++
			r.Timeouts++
		} else {
			ss = append(ss, sd)
		}
	}
	r.View = summarize("guide split mode: indexer (watching) → NATS on loopback → guide-mcp --nats, stdio", "saved file → view shows it", vs, verrs)
	r.Search = summarize("guide split mode: indexer (watching) → NATS on loopback → guide-mcp --nats, stdio", "saved file → search finds it", ss, serrs)
	for i := range rescans {
		p := docs[rng.IntN(len(docs))]
		full := filepath.Join(c.Root, filepath.FromSlash(p))
		orig, _ := os.ReadFile(full)
		orig = stripStamp(orig, "\n\nfreshtoken ")
		_ = os.WriteFile(full, append(orig, fmt.Sprintf("\n\nfreshtoken zqrescan%dn%d\n", i, seed)...), 0o644)
		settle()
		r.Rescan = append(r.Rescan, runOnce(ctx, bin, log, "--root", c.Root, "--nats", sp.url))
	}
	r.Load.After = loadAvg()
	return r
}

// plainDocs are the corpus's documents that are not templates.
func plainDocs(c *Corpus) []string {
	var out []string
	for _, f := range c.Files {
		if strings.HasSuffix(f, ".md") {
			out = append(out, f)
		}
	}
	return out
}

// stripStamp removes what an earlier sample appended, from marker on.
func stripStamp(b []byte, marker string) []byte {
	if i := strings.Index(string(b), marker); i >= 0 {
		return b[:i]
	}
	return b
}

// OnceResult is indexer --once with nothing changed (issue 5).
type OnceResult struct {
	Corpus  *Corpus
	Initial *OnceRun // the first --once, when this scenario had to fill the store itself
	Runs    []OnceRun
	Walk    IndexRun // baseline: walk + stat
	Hash    IndexRun // walk + read + sha256, for scale
	Store   string   // whose JetStream store the runs used
	Load    Load
}

// measureOnce runs indexer --once --json on c with its own embedded store under natsDir,
// filling it first when it is empty, then runs times with nothing changed.
func measureOnce(ctx context.Context, cfg Config, bin string, c *Corpus, natsDir, store string, log io.Writer) OnceResult {
	r := OnceResult{Corpus: c, Store: store, Load: Load{Before: loadAvg()}}
	if _, err := os.Stat(natsDir); err != nil {
		cfg.logf("    filling a JetStream store with a first indexer --once")
		settle()
		in := runOnce(ctx, bin, log, "--root", c.Root, "--data", natsDir)
		r.Initial = &in
	}
	for range cfg.OnceRuns {
		settle()
		run := runOnce(ctx, bin, log, "--root", c.Root, "--data", natsDir)
		cfg.logf("    indexer --once: %s, %d published, %d read", fmtDur(run.Duration), run.Published, run.Read)
		r.Runs = append(r.Runs, run)
	}
	settle()
	r.Walk = walkStat(c.Root)
	settle()
	r.Hash = hashTree(c.Root, max(2, runtime.NumCPU()))
	r.Load.After = loadAvg()
	return r
}

// walkStat is the least a re-scan that trusts size and mtime must do: walk and stat.
func walkStat(root string) IndexRun {
	r := IndexRun{What: "baseline: walk + stat (filepath.WalkDir, DirEntry.Info), 1 goroutine"}
	start := time.Now()
	walkRegular(root, func(_ string, d fs.DirEntry) {
		if _, err := d.Info(); err == nil {
			r.Docs++
		}
	})
	r.Duration = time.Since(start)
	return r
}

// ChurnResult is sustained writes with the lag sampled (issue 5).
type ChurnResult struct {
	Corpus     *Corpus
	Rate       int           // writes per second asked for
	For        time.Duration // for how long
	Writes     int           // writes made
	WriteTime  time.Duration // first to last write
	Samples    int
	CatalogLag []uint64        // stream_last_seq - applied_seq, per sample
	IndexLag   []uint64        // stream_last_seq - index applied_seq, per sample
	TimeLag    []time.Duration // age of the oldest write not yet visible to view, per sample
	SampleErrs int
	CatchUp    time.Duration // last write to the last write visible and the index caught up
	CatchUpErr string
	Load       Load
}

type churnWrite struct {
	path string
	seq  int
	at   time.Time
}

// measureChurn writes rate files a second for d (bounded: at most rate×d writes, and
// never for longer than d+5 s), sampling the status resource every 100 ms, and checks
// with view how old the oldest write is that the query process does not show yet.
func measureChurn(ctx context.Context, sp *split, c *Corpus, rate int, d time.Duration) ChurnResult {
	r := ChurnResult{Corpus: c, Rate: rate, For: d, Load: Load{Before: loadAvg()}}
	docs := plainDocs(c)
	orig := make(map[string][]byte, len(docs))
	for _, p := range docs {
		b, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(p)))
		if err == nil {
			orig[p] = stripStamp(stripStamp(b, "\n\nfreshtoken "), "\n\nchurnstamp ")
		}
	}
	n := int(float64(rate) * d.Seconds())
	log := make([]churnWrite, n)
	var written atomic.Int64
	done := make(chan struct{})
	settle()
	go func() {
		defer close(done)
		const tick = 10 * time.Millisecond
		perTick := max(1, rate/100)
		start := time.Now()
		next := start
		for i := 0; i < n; {
			if time.Since(start) > d+5*time.Second || ctx.Err() != nil {
				return
			}
			for j := 0; j < perTick && i < n; j++ {
				p := docs[i%len(docs)]
				now := time.Now()
				body := append(slices.Clip(orig[p]), fmt.Sprintf("\n\nchurnstamp %d %d\n", i, now.UnixNano())...)
				_ = os.WriteFile(filepath.Join(c.Root, filepath.FromSlash(p)), body, 0o644)
				log[i] = churnWrite{path: p, seq: i, at: now}
				i++
				written.Store(int64(i))
			}
			next = next.Add(tick)
			time.Sleep(time.Until(next))
		}
	}()
	// applied reports whether view shows write i, or a later write to the same file.
	applied := func(i int) (bool, time.Time) {
		out, err := sp.q.call(ctx, "view", map[string]any{"path": log[i].path})
		at := time.Now()
		if err != nil {
			return false, at
		}
		j := strings.LastIndex(out, "churnstamp ")
		if j < 0 {
			return false, at
		}
		f := strings.Fields(out[j+len("churnstamp "):])
		if len(f) == 0 {
			return false, at
		}
		seq, err := strconv.Atoi(f[0])
		return err == nil && seq >= log[i].seq, at
	}
	lo := 0 // every write below lo was seen applied
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	sampling := true
	for sampling {
		select {
		case <-done:
			sampling = false
		case <-ticker.C:
		}
		st, err := sp.q.status(ctx)
		if err != nil {
			r.SampleErrs++
			continue
		}
		r.Samples++
		r.CatalogLag = append(r.CatalogLag, st.StreamLastSeq-min(st.StreamLastSeq, st.AppliedSeq))
		r.IndexLag = append(r.IndexLag, st.StreamLastSeq-min(st.StreamLastSeq, indexSeq(st)))
		k := int(written.Load())
		if k == 0 {
			r.TimeLag = append(r.TimeLag, 0)
			continue
		}
		// Events are applied in stream order, which is write order up to the watcher's
		// 20 ms settle, so the first write not shown is found by bisection.
		if ok, _ := applied(k - 1); ok {
			lo = k
			r.TimeLag = append(r.TimeLag, 0)
			continue
		}
		hi := k - 1 // not applied
		at := time.Now()
		for lo < hi {
			mid := (lo + hi) / 2
			ok, t := applied(mid)
			if ok {
				lo = mid + 1
			} else {
				hi, at = mid, t
			}
		}
		r.TimeLag = append(r.TimeLag, at.Sub(log[hi].at))
	}
	k := int(written.Load())
	r.Writes = k
	if k > 0 {
		r.WriteTime = log[k-1].at.Sub(log[0].at)
		last := log[k-1].at
		deadline := time.Now().Add(2 * time.Minute)
		for {
			ok, _ := applied(k - 1)
			st, err := sp.q.status(ctx)
			if ok && err == nil && searchable(st) {
				r.CatchUp = time.Since(last)
				break
			}
			if time.Now().After(deadline) {
				r.CatchUpErr = fmt.Sprintf("not caught up 2 minutes after the last write (status %+v)", st)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	r.Load.After = loadAvg()
	return r
}
