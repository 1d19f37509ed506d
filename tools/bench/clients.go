package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/guide/guide/internal/owner"
	"github.com/guide/guide/tools/report"
	"github.com/guide/guide/tools/stats"
)

// clientsOfOwner measures several clients on one project, beside s (a client of the
// indexed project's owner): n times a second client from spawn to its first tree answer;
// the memory of a bridge and of five clients against one; and n times the owner killed
// with three clients attached, until each of them answers again. It leaves s and the
// owner running.
func clientsOfOwner(ctx context.Context, bin string, c *report.Corpus, data string, s *server, n int, log io.Writer) (second, killed report.Restart) {
	second.What = "guide: a second client of the running owner, spawn to first tree(\"\", 2) answer"
	killed.What = "guide: owner killed (SIGKILL) with 3 clients attached, until each answers tree again"
	tree := map[string]any{"folder": "", "depth": 2}
	open := func() (*server, error) {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		b, err := spawn(cctx, log, bin, "--root", c.Root, "--data", data)
		if err != nil {
			return nil, err
		}
		if _, err := b.call(cctx, "tree", tree); err != nil {
			b.c.Close()
			return nil, err
		}
		return b, nil
	}

	for range n {
		start := time.Now()
		b, err := open()
		if err != nil {
			second.Err = err.Error()
			return second, killed
		}
		second.Times = append(second.Times, time.Since(start))
		_ = b.c.Close() // the client goes; the owner stays
	}

	// Memory: the owner and one client, then the owner and five.
	ownerRSS := func() int64 {
		r, err := owner.Read(data)
		if err != nil {
			return 0
		}
		rss, _, _ := memoryOf(r.PID)
		return rss
	}
	bridgeRSS := func(b *server) int64 { rss, _, _ := memoryOf(b.cmd.Process.Pid); return rss }
	one := ownerRSS() + bridgeRSS(s)
	bridges := []*server{s}
	defer func() {
		for _, b := range bridges[1:] {
			_ = b.c.Close()
		}
	}()
	for range 4 {
		b, err := open()
		if err != nil {
			second.Err = err.Error()
			return second, killed
		}
		bridges = append(bridges, b)
	}
	five := ownerRSS()
	var bridgeMax int64
	for _, b := range bridges {
		rss := bridgeRSS(b)
		five += rss
		bridgeMax = max(bridgeMax, rss)
	}
	second.Note = fmt.Sprintf("a bridge's VmRSS at most %s; 5 clients %s in all (owner and bridges), 1 client %s: %.2f×",
		report.FormatMB(bridgeMax), report.FormatMB(five), report.FormatMB(one), float64(five)/float64(max(one, 1)))

	attached := bridges[:3]
	for range n {
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		r, err := owner.Await(actx, data) // the owner of the last round publishes it as it opens NATS
		cancel()
		if err != nil {
			killed.Err = err.Error()
			return second, killed
		}
		start := time.Now()
		_ = syscall.Kill(r.PID, syscall.SIGKILL)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, b := range attached {
			wg.Go(func() {
				cctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				_, err := b.call(cctx, "tree", tree)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					killed.Err = err.Error()
					return
				}
				killed.Times = append(killed.Times, time.Since(start))
			})
		}
		wg.Wait()
		if killed.Err != "" {
			return second, killed
		}
	}
	killed.Note = fmt.Sprintf("p95 %s over %d answers", report.FormatDuration(stats.Percentile(killed.Times, 95)), len(killed.Times))
	return second, killed
}
