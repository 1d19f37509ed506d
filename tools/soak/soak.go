// Package soak runs guide in split mode from its built binaries on a copy of a generated
// corpus, and for a while does what real use and bad luck do to it at once: random
// file-system operations (files and folders created, written, renamed, moved into new
// parents, deleted, swapped for links inside and outside the root, their modes changed),
// kill -9 of the indexer (and with it the embedded NATS server) and of the query process,
// and many MCP sessions over HTTP attaching and detaching documents. Then it lets the
// system settle and checks that nothing was lost or invented, that no byte from outside
// the root reached the stream, and that nothing leaked: consumers, session documents,
// goroutines. Every choice comes from one seed, so that a failure replays.
package soak

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/testkit/damage"
	"github.com/guide/guide/tools/corpus"
)

// Config says what to run. The zero value of a field takes its default.
type Config struct {
	Seed       uint64
	Duration   time.Duration // how long operations run (default 10m)
	MaxOps     int           // at most this many file-system operations (default 50,000)
	Sessions   int           // concurrent MCP sessions (default 50)
	Docs       int           // documents of the generated corpus (default 2,000)
	Bin        string        // the folder of the built indexer and guide-mcp (default bin)
	Work       string        // where the tree, the data and the logs go (default a new temporary folder)
	SessionTTL time.Duration // guide-mcp --session-ttl: bounds how long a killed session's documents live (default 30s)
	Settle     time.Duration // how long the system may take to settle at the end (default 2m)
	Progress   io.Writer     // a line per phase (default io.Discard)
	// DiskFull is how long the data directories' disk stays full, after the kills (see
	// diskfull.go); 0 for the default, 15s; negative for no such phase.
	DiskFull time.Duration
}

func (c *Config) defaults() {
	if c.Duration == 0 {
		c.Duration = 10 * time.Minute
	}
	if c.MaxOps == 0 {
		c.MaxOps = 50_000
	}
	if c.Sessions == 0 {
		c.Sessions = 50
	}
	if c.Docs == 0 {
		c.Docs = 2000
	}
	if c.Bin == "" {
		c.Bin = "bin"
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = 30 * time.Second
	}
	if c.Settle == 0 {
		c.Settle = 2 * time.Minute
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.DiskFull == 0 {
		c.DiskFull = 15 * time.Second
	}
}

// project is the project the soak's tree is indexed as.
const project = "soak"

// The share of the run during which processes are killed; then NATS is restarted once and
// the rest runs without kills, so that the consumers, goroutines and watches counted at the
// end belong to processes that lived through churn, not to ones just started.
const chaosShare = 0.6

// corruptEvery is one damaged projection file, on average, per this many operations: the
// query process is killed, a file of its data directory damaged, and it is started again.
const corruptEvery = 600

// corrupt damages a random file of the query process's data directory (its projections)
// in a random way, and says which and how.
func corrupt(dir string, r *rand.Rand) (string, error) {
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasSuffix(p, ".lock") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		return "nothing", fmt.Errorf("no file to damage in %s", dir)
	}
	f := files[r.IntN(len(files))]
	k := damage.Kinds[r.IntN(len(damage.Kinds))]
	rel, _ := filepath.Rel(dir, f)
	return fmt.Sprintf("%s %s", k, rel), damage.File(f, k, r)
}

// killEvery is one kill, on average, per this many file-system operations.
const killEvery = 300

// Run runs the soak. The error is for a soak that could not run; what it found is in the
// report's Failures.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	cfg.defaults()
	rep = Report{Seed: cfg.Seed, Sessions: cfg.Sessions, Docs: cfg.Docs, Ops: map[string]int{}}
	start := time.Now()
	defer func() { rep.Elapsed = time.Since(start).Round(time.Second) }()
	bin, err := filepath.Abs(cfg.Bin)
	if err != nil {
		return rep, err
	}
	if cfg.Work == "" {
		if cfg.Work, err = os.MkdirTemp("", "guide-soak-"); err != nil {
			return rep, err
		}
	}
	rep.Work = cfg.Work
	root, outside := filepath.Join(cfg.Work, "root"), filepath.Join(cfg.Work, "outside")
	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "soak %6.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}

	if _, err := corpus.Generate(root, corpus.Options{Docs: cfg.Docs, Seed: cfg.Seed}); err != nil {
		return rep, fmt.Errorf("corpus: %w", err)
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x50a4))
	marker := "soakoutside" + letters(r, 8)
	rep.Marker = marker
	t, err := newTree(root, outside, marker, r)
	if err != nil {
		return rep, err
	}
	opsLog, err := os.Create(filepath.Join(cfg.Work, "ops.log"))
	if err != nil {
		return rep, err
	}
	defer opsLog.Close()
	rep.OpLog = opsLog.Name()
	procLog, err := os.Create(filepath.Join(cfg.Work, "processes.log"))
	if err != nil {
		return rep, err
	}
	defer procLog.Close()
	procOut := &lockedWriter{w: procLog}
	// mcp-go's client logs through the standard logger (a DELETE to a killed process, say):
	// into the processes' log, not the terminal.
	log.SetOutput(procOut)
	defer log.SetOutput(os.Stderr)
	ops := &opLog{w: opsLog, start: time.Now()}
	ops.printf("seed %d, %d documents, %d sessions, %s, marker %s", cfg.Seed, cfg.Docs, cfg.Sessions, cfg.Duration, marker)

	data := filepath.Join(cfg.Work, "data")
	var disk *dataDisk
	if cfg.DiskFull > 0 {
		if disk, err = mountData(data); err != nil {
			rep.DiskFull = "skipped: " + err.Error()
			logf("no disk-full phase: %v", err)
		}
	}
	d, err := newDeployment(bin, root, data, project, cfg.SessionTTL, procOut)
	if err != nil {
		return rep, err
	}
	defer func() {
		d.close()
		if disk != nil {
			disk.unmount()
		}
	}()
	if err := d.indexer.start(ctx); err != nil {
		return rep, err
	}
	if err := d.query.start(ctx); err != nil {
		return rep, err
	}
	if err := d.allInOne.start(ctx); err != nil {
		return rep, err
	}
	logf("split mode up: indexer (NATS %s), guide-mcp %s; work in %s", d.natsURL, d.mcpURL, cfg.Work)
	checker, err := Connect(ctx, d.mcpURL, "soak-checker")
	if err != nil {
		return rep, fmt.Errorf("checker session: %w", err)
	}
	sv, err := openStream(ctx, d.natsURL, project)
	if err != nil {
		return rep, err
	}
	defer func() { sv.close() }()
	if _, err := settle(ctx, checker, sv, cfg.Settle); err != nil {
		return rep, fmt.Errorf("first scan: %w", err)
	}
	chStart, err := startChanges(ctx, checker, root)
	if err != nil {
		rep.fail("changes check: %v", err)
	}
	_ = checker.Close()
	rep.ConsumersBaseline, _, _ = sv.info(ctx)
	if m, err := d.scrape(ctx, "go_goroutines", "process_resident_memory_bytes"); err == nil {
		rep.GoroutinesStart, rep.RSSStartMiB = int(m["go_goroutines"]), m["process_resident_memory_bytes"]/(1<<20)
	}
	logf("first scan applied: %d consumers, %d goroutines in guide-mcp", rep.ConsumersBaseline, rep.GoroutinesStart)

	// Sessions.
	var counts sessionCounts
	shared := &paths{}
	shared.set(t.files)
	sctx, stopSessions := context.WithCancel(ctx)
	var sessions sync.WaitGroup
	for i := range cfg.Sessions {
		s := &session{id: i, url: d.mcpURL, r: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)), paths: shared, counts: &counts}
		sessions.Go(func() { s.run(sctx) })
	}

	// Read-your-writes, through the all-in-one process.
	var ryw rywStats
	var rywDone sync.WaitGroup
	rywDone.Go(func() { ryw = readYourWrites(sctx, d.allInOneURL, root, cfg.Seed, ops) })

	// Operations and kills.
	var restarts sync.WaitGroup
	down := map[*proc]bool{}
	var downMu sync.Mutex
	var restartErrs []string
	var revive func(*proc)
	kill := func(p *proc, delay time.Duration, why string) {
		downMu.Lock()
		if down[p] {
			downMu.Unlock()
			return
		}
		down[p] = true
		downMu.Unlock()
		p.kill()
		ops.printf("kill -9 %s (%s), restart in %s", p.name, why, delay)
		switch p {
		case d.indexer:
			rep.KillsIndexer++
		case d.allInOne:
			rep.KillsAllInOne++
		default:
			rep.KillsQuery++
		}
		restarts.Go(func() {
			time.Sleep(delay)
			if err := p.start(ctx); err != nil {
				ops.printf("restart %s: %v", p.name, err)
				downMu.Lock()
				restartErrs = append(restartErrs, fmt.Sprintf("restart %s: %v", p.name, err))
				downMu.Unlock()
			} else {
				ops.printf("%s restarted", p.name)
			}
			downMu.Lock()
			down[p] = false
			downMu.Unlock()
		})
	}
	opsStart := time.Now()
	chaosEnd := opsStart.Add(time.Duration(float64(cfg.Duration) * chaosShare))
	deadline := opsStart.Add(cfg.Duration)
	revive = func(p *proc) {
		downMu.Lock()
		down[p] = true
		downMu.Unlock()
		restarts.Go(func() {
			if err := p.start(ctx); err != nil {
				ops.printf("restart %s: %v", p.name, err)
			} else {
				ops.printf("%s restarted", p.name)
			}
			downMu.Lock()
			down[p] = false
			downMu.Unlock()
		})
	}
	// corruptQuery kills guide-mcp, damages a file of its projections, and starts it again.
	corruptQuery := func() {
		restarts.Wait()
		d.query.kill()
		what, err := corrupt(filepath.Join(data, "query"), r)
		ops.printf("kill -9 guide-mcp, %s, restart", what)
		if err != nil {
			rep.fail("damaging %s: %v", what, err)
		}
		rep.Corruptions = append(rep.Corruptions, what)
		revive(d.query)
	}
	chaos := true
	var fullUntil time.Time // while the disk-full phase lasts
	lastReport := time.Now()
	n := 0
	for ; n < cfg.MaxOps && time.Now().Before(deadline) && ctx.Err() == nil; n++ {
		if chaos && time.Now().After(chaosEnd) {
			chaos = false
			corruptQuery() // at least one in every run
			restarts.Wait()
			kill(d.indexer, 0, "the last NATS restart")
			restarts.Wait()
			logf("kills over (%d of the indexer and NATS, %d of guide-mcp); churn goes on", rep.KillsIndexer, rep.KillsQuery)
			if disk != nil {
				n, err := disk.fill()
				ops.printf("disk full: a ballast of %d MiB (%v)", n>>20, err)
				logf("the data directories' disk is full (a ballast of %d MiB) for %s; churn goes on", n>>20, cfg.DiskFull)
				rep.DiskFull = fmt.Sprintf("full for %s (ballast %d MiB)", cfg.DiskFull, n>>20)
				fullUntil = time.Now().Add(cfg.DiskFull)
			}
		}
		if disk != nil && disk.full && time.Now().After(fullUntil) {
			rep.DiskFullStatus = writeError(ctx, d.mcpURL)
			err := disk.free()
			ops.printf("disk space given back (%v); guide-mcp's write_error was %q", err, rep.DiskFullStatus)
			logf("disk space given back; guide-mcp said: %s", cmp.Or(rep.DiskFullStatus, "(no write error)"))
		}
		for _, p := range []*proc{d.indexer, d.query, d.allInOne} {
			for _, e := range p.died() {
				// A supervisor would start it again; the soak does, and reports it.
				ops.printf("%s", e)
				rep.fail("%s", e)
				downMu.Lock()
				isDown := down[p]
				downMu.Unlock()
				if !isDown && !p.running() {
					revive(p)
				}
			}
		}
		if chaos && r.IntN(killEvery) == 0 {
			p := d.indexer
			if r.IntN(2) == 0 {
				p = d.query
			}
			if r.IntN(4) == 0 {
				p = d.allInOne
			}
			kill(p, time.Duration(r.IntN(2000))*time.Millisecond, "at random")
		}
		if chaos && r.IntN(corruptEvery) == 0 {
			corruptQuery()
		}
		o := t.step()
		rep.Ops[o.Kind]++
		if o.Err != "" {
			rep.OpErrors++
		}
		ops.printf("%s", o)
		if n%20 == 0 {
			shared.set(t.files)
		}
		if time.Since(lastReport) > 30*time.Second {
			lastReport = time.Now()
			logf("%d operations, %d kills, %d session calls (%d transport errors)", n, rep.KillsIndexer+rep.KillsQuery,
				counts.Calls.Load(), counts.Errors.Load())
		}
		time.Sleep(time.Duration(10+r.IntN(70)) * time.Millisecond)
	}
	rep.Operations = n
	if disk != nil && disk.full {
		rep.DiskFullStatus = writeError(ctx, d.mcpURL)
		_ = disk.free()
		ops.printf("disk space given back at the end")
	}
	restarts.Wait()
	for _, p := range []*proc{d.indexer, d.query, d.allInOne} { // the last moments: the same care as above
		for _, e := range p.died() {
			ops.printf("%s", e)
			rep.fail("%s", e)
		}
		if !p.running() {
			if err := p.start(ctx); err != nil {
				rep.fail("restart %s: %v", p.name, err)
			}
		}
	}
	rep.Failures = append(rep.Failures, restartErrs...)
	stopSessions()
	sessions.Wait()
	rywDone.Wait()
	rep.RYWTrials, rep.RYWStale, rep.RYWPartial, rep.RYWErrors = ryw.Trials, len(ryw.Stale), ryw.Partial, ryw.Errors
	for _, s := range head(ryw.Stale) {
		rep.fail("read-your-writes: an answer missed a change saved before the call: %s", s)
	}
	if ryw.Trials == 0 {
		rep.fail("read-your-writes: no trial ran")
	}
	rep.SessionCalls, rep.SessionErrors, rep.ToolErrors = counts.Calls.Load(), counts.Errors.Load(), counts.ToolErrors.Load()
	rep.Attached, rep.Detached, rep.SessionsEnded, rep.Reconnects = counts.Attached.Load(), counts.Detached.Load(), counts.Ended.Load(), counts.Reconnects.Load()
	rep.ToolErrorKinds = counts.kinds
	rep.OpsDuration = time.Since(opsStart).Round(time.Second)
	ops.printf("operations over: %d", n)
	logf("operations over: %d file-system operations, %d session calls; settling", n, rep.SessionCalls)

	rep.check(ctx, cfg, d, sv, t, chStart, logf)
	if len(rep.Failures) > 0 {
		ops.printf("FAILED: %s", strings.Join(rep.Failures, "; "))
	}
	return rep, nil
}

// settle waits until the query process says it has applied the whole stream, and the
// stream has stopped growing for a moment (the watcher has published what it saw).
func settle(ctx context.Context, c *client.Client, sv *streamView, within time.Duration) (query.Status, error) {
	deadline := time.Now().Add(within)
	var st query.Status
	var err error
	var lastSeq uint64
	quietSince := time.Now()
	for {
		st, err = ReadStatus(ctx, c)
		_, last, ierr := sv.info(ctx)
		if ierr == nil && last != lastSeq {
			lastSeq, quietSince = last, time.Now()
		}
		if err == nil && ierr == nil && caughtUp(st, last) && time.Since(quietSince) > 1500*time.Millisecond {
			return st, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = ierr
			}
			return st, fmt.Errorf("not settled after %s: stream at %d, status %+v (%v)", within, lastSeq, st, err)
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// caughtUp says whether a status reports every projection at the stream's last sequence.
func caughtUp(st query.Status, last uint64) bool {
	return st.InitialScanDone && st.Lag == 0 && st.StreamLastSeq >= last && st.AppliedSeq >= last &&
		(st.Index == nil || st.Index.AppliedSeq >= last)
}

// opLog is the replayable record of a run: one line per operation, kill and restart.
type opLog struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	n     int
}

func (l *opLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	fmt.Fprintf(l.w, "%6d %8.3fs %s\n", l.n, time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// Tail is the last n lines of a file.
func Tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
