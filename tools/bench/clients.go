package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/tools/report"
)

// attachedClients is how many clients are attached while the owner is killed.
const attachedClients = 3

// measureClients runs several stdio clients of bin/guide-mcp --root on c, the way several
// assistants share one folder: a first client starts the project's owner (on data, indexed
// already when an earlier scenario left it so) and waits until its search index has caught
// up. Then, cfg.ClientRuns times each: a second client from spawn to its first tree answer,
// with its bridge's memory, and the same through a guide-mcp installed without
// guide-bridge; the memory of one client against five; the owner killed with three clients
// attached, until every one answers again. It stops the owner when done.
func measureClients(ctx context.Context, cfg Config, bin string, c *report.Corpus, data string, log io.Writer) (r report.ClientsResult) {
	r = report.ClientsResult{Corpus: c, Attached: attachedClients, Load: report.Load{Before: LoadAverage()}}
	defer func() { r.Load.After = LoadAverage() }()
	fail := func(what string, err error) report.ClientsResult {
		r.Err = fmt.Sprintf("%s: %v (log: the owner's in %s)", what, err, owner.Log(data))
		return r
	}
	settle()
	first, _, _, _, err := spawnIndexed(ctx, bin, c, data, log)
	if err != nil {
		return fail("the first client", err)
	}
	defer first.stop() // and the owner with it
	cfg.logf("    owner indexed; %d second clients", cfg.ClientRuns)

	tree := map[string]any{"folder": "", "depth": 2}
	// open spawns a client of exe and times it to its first tree answer; the caller
	// closes it (never stops it: that would stop the owner).
	open := func(exe string) (*server, time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		start := time.Now()
		b, err := spawn(cctx, log, exe, "--root", c.Root, "--data", data)
		if err != nil {
			return nil, 0, err
		}
		if _, err := b.call(cctx, "tree", tree); err != nil {
			_ = b.c.Close()
			return nil, 0, err
		}
		return b, time.Since(start), nil
	}
	bridgeRSS := func(b *server) int64 { rss, _, _ := memoryOf(b.cmd.Process.Pid); return rss }
	ownerRSS := func() int64 {
		o, err := owner.Read(data)
		if err != nil {
			return 0
		}
		rss, _, _ := memoryOf(o.PID)
		return rss
	}

	// spawns opens a client of bin, one after another, and gives each one's spawn to first
	// answer and resident memory.
	spawns := func(bin string) (took []time.Duration, rss []int64, err error) {
		for range cfg.ClientRuns {
			settle()
			b, d, err := open(bin)
			if err != nil {
				return nil, nil, err
			}
			took, rss = append(took, d), append(rss, bridgeRSS(b))
			_ = b.c.Close()
		}
		return took, rss, nil
	}
	if r.Second, r.BridgeRSS, err = spawns(bin); err != nil {
		return fail("a second client", err)
	}

	// The baseline: guide-mcp alone in a folder, as a user who copied only it has it.
	alone := filepath.Join(cfg.Dir, "work", "alone", "guide-mcp")
	if err := copyFile(bin, alone); err != nil {
		return fail("copy guide-mcp alone", err)
	}
	var aloneRSS []int64
	if r.Alone, aloneRSS, err = spawns(alone); err != nil {
		return fail("a client of guide-mcp alone", err)
	}
	for _, rss := range aloneRSS {
		r.AloneRSS = max(r.AloneRSS, rss)
	}

	// Memory: the owner and one client, then the owner and five.
	r.OneRSS = ownerRSS() + bridgeRSS(first)
	clients := []*server{first}
	defer func() {
		for _, b := range clients[1:] {
			_ = b.c.Close()
		}
	}()
	for range 4 {
		b, _, err := open(bin)
		if err != nil {
			return fail("five clients", err)
		}
		clients = append(clients, b)
	}
	r.FiveRSS = ownerRSS()
	for _, b := range clients {
		r.FiveRSS += bridgeRSS(b)
	}
	for _, b := range clients[attachedClients:] {
		_ = b.c.Close()
	}
	clients = clients[:attachedClients]
	cfg.logf("    memory: 1 client %s, 5 clients %s; now the owner killed %d times", report.FormatMB(r.OneRSS), report.FormatMB(r.FiveRSS), cfg.ClientRuns)

	for range cfg.ClientRuns {
		// Each kill is of a settled owner: its record published (NATS up) and its search
		// index caught up, as after the previous kill's election.
		wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		o, err := owner.Await(wctx, data)
		if err == nil {
			_, _, err = first.waitSearchable(wctx, 100*time.Millisecond)
		}
		cancel()
		if err != nil {
			return fail("waiting for the owner", err)
		}
		settle()
		start := time.Now()
		if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
			return fail("kill the owner", err)
		}
		var mu sync.Mutex
		var errs []error
		var times []time.Duration
		var wg sync.WaitGroup
		for _, b := range clients {
			wg.Go(func() {
				cctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				_, err := b.call(cctx, "tree", tree)
				d := time.Since(start)
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, err)
				times = append(times, d)
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return fail("a client after the owner was killed", err)
			}
		}
		r.Answers = append(r.Answers, times...)
		r.Recovered = append(r.Recovered, slices.Max(times))
		cfg.logf("    owner killed: every client answered after %s", report.FormatDuration(slices.Max(times)))
	}
	return r
}

// copyFile copies the program at from to to, creating its folder.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Remove(to); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
