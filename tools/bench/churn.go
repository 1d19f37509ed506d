package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/guide/guide/tools/report"
)

type churnWrite struct {
	path string
	seq  int
	at   time.Time
}

// measureChurn writes rate files a second for d (bounded: at most rate×d writes, and
// never for longer than d+5 s), sampling the status resource every 100 ms, and checks
// with view how old the oldest write is that the query process does not show yet.
func measureChurn(ctx context.Context, sp *split, c *report.Corpus, rate int, d time.Duration) report.ChurnResult {
	r := report.ChurnResult{Corpus: c, Rate: rate, For: d, Load: report.Load{Before: LoadAverage()}}
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
	r.Load.After = LoadAverage()
	return r
}
