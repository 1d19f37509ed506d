package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/guide/guide/tools/report"
)

// measureFresh writes a unique token into a document, then polls view until it shows it
// and search until it finds it, samples times; then times the baseline, a full re-scan
// with indexer --once after changing one file, rescans times.
func measureFresh(ctx context.Context, bin string, sp *split, c *report.Corpus, samples, rescans int, seed uint64, log io.Writer) report.FreshResult {
	r := report.FreshResult{Corpus: c, Setup: sp.Setup, Load: report.Load{Before: LoadAverage()}}
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
	r.Load.After = LoadAverage()
	return r
}
