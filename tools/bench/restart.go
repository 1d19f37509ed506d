package bench

import (
	"context"
	"io"
	"time"

	"github.com/guide/guide/tools/report"
)

// restarts stops the indexed guide server (with SIGKILL, or by closing stdin as a client
// does), starts it again on the same data directory, and times spawn to the first
// successful tree answer, n times each way. It leaves no server running.
func restarts(ctx context.Context, bin string, c *report.Corpus, data string, s *server, n int, log io.Writer) (killed, stopped report.Restart) {
	killed.Kind, stopped.Kind = report.RestartKilled, report.RestartStopped
	killed.What = "guide: after SIGKILL, spawn to first tree(\"\", 2) answer"
	stopped.What = "guide: after a clean stop (stdin closed), spawn to first tree(\"\", 2) answer"
	kill := true
	for i := 0; i < 2*n; i++ {
		if kill {
			s.kill()
		} else {
			s.stop()
		}
		r := &stopped
		if kill {
			r = &killed
		}
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		start := time.Now()
		var err error
		s, err = spawn(cctx, log, bin, "--root", c.Root, "--data", data)
		if err == nil {
			_, err = s.call(cctx, "tree", map[string]any{"folder": "", "depth": 2})
		}
		d := time.Since(start)
		cancel()
		if err != nil {
			r.Err = err.Error()
			if s != nil {
				s.kill()
			}
			return killed, stopped
		}
		r.Times = append(r.Times, d)
		kill = !kill
	}
	s.stop()
	return killed, stopped
}
