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

// measureRYW times what read-your-writes adds to a call through the stdio bridge, on a
// copy of a generated corpus: view of random documents with the sync turned off
// (--sync-wait 0) and on, a second after the last change; then, with it on, view and
// search each called at once after a save, checking that they hold it.
func measureRYW(ctx context.Context, cfg Config, bin string, log io.Writer) (r report.RYWResult) {
	r.Load.Before = LoadAverage()
	defer func() { r.Load.After = LoadAverage() }()
	src, err := generated(cfg.Dir, cfg.RYWDocs, cfg.Seed, cfg.logf)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	dir, err := filepath.Abs(filepath.Join(cfg.Dir, "work", "ryw-"+filepath.Base(src.Root)))
	if err == nil {
		err = copyTree(src.Root, dir)
	}
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	c := &report.Corpus{Name: src.Name + " (a copy)", Root: dir, Generated: true}
	if err := listTree(c); err != nil {
		r.Err = err.Error()
		return r
	}
	r.Corpus = c
	data := filepath.Join(cfg.Dir, "data", "ryw")
	_ = os.RemoveAll(data)
	defer os.RemoveAll(data)
	docs := plainDocs(c)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x4e3))
	const server = "guide-mcp --root (stdio bridge → owner)"

	cfg.logf("  ryw: %d views with the sync off, then on; %d saves each followed at once by view, then search", cfg.RYWCalls, cfg.RYWCalls)
	s, err := spawnSearchable(ctx, bin, c, data, log, &r.Setup, "--sync-wait", "0")
	if err != nil {
		r.Err = "spawn without the sync: " + err.Error()
		return r
	}
	quiet()
	r.Off = views(ctx, s, docs, rng, cfg.RYWCalls, server+", --sync-wait 0", "view, nothing changed for 1 s")
	var ss0 []time.Duration
	errs0 := 0
	for i := range cfg.RYWCalls {
		start := time.Now()
		if _, err := s.call(ctx, "search", map[string]any{"query": fmt.Sprintf("zqnone%dn%d", i, cfg.Seed), "scope": "all"}); err != nil {
			errs0++
			continue
		}
		ss0 = append(ss0, time.Since(start))
	}
	r.OffSearch = summarize(server+", --sync-wait 0", "search(a word no document holds)", ss0, errs0)
	s.stop()
	settle()
	var resumed time.Duration
	s, err = spawnSearchable(ctx, bin, c, data, log, &resumed)
	if err != nil {
		r.Err = "spawn with the sync: " + err.Error()
		return r
	}
	defer s.stop()
	quiet()
	r.Idle = views(ctx, s, docs, rng, cfg.RYWCalls, server, "view, nothing changed for 1 s")
	var vs, ss []time.Duration
	verrs, serrs := 0, 0
	for i := range cfg.RYWCalls {
		for _, tool := range []string{"view", "search"} {
			p := docs[rng.IntN(len(docs))]
			full := filepath.Join(c.Root, filepath.FromSlash(p))
			orig, err := os.ReadFile(full)
			if err != nil {
				r.Err = err.Error()
				return r
			}
			orig = stripStamp(orig, "\n\nrywtoken ")
			token := fmt.Sprintf("zqryw%dn%s%d", i, tool, cfg.Seed)
			if err := os.WriteFile(full, append(orig, "\n\nrywtoken "+token+"\n"...), 0o644); err != nil {
				r.Err = err.Error()
				return r
			}
			start := time.Now()
			var out string
			if tool == "view" {
				out, err = s.call(ctx, "view", map[string]any{"path": p})
			} else {
				out, err = s.call(ctx, "search", map[string]any{"query": token, "scope": "all"})
			}
			d := time.Since(start)
			fresh := err == nil && (tool == "view" && strings.Contains(out, token) || tool == "search" && searchTotal(out) > 0)
			switch {
			case err != nil && tool == "view":
				verrs++
			case err != nil:
				serrs++
			case tool == "view":
				vs = append(vs, d)
			default:
				ss = append(ss, d)
			}
			if err == nil && !fresh {
				if strings.Contains(out, `"partial"`) {
					r.Partial++
				} else {
					r.Stale++
				}
			}
		}
	}
	r.SavedView = summarize(server, "view, at once after a save", vs, verrs)
	r.SavedSearch = summarize(server, "search(token), at once after a save", ss, serrs)
	return r
}

// spawnSearchable spawns guide-mcp --root over the corpus with extra flags and waits until
// it is searchable; setup gets the time that took.
func spawnSearchable(ctx context.Context, bin string, c *report.Corpus, data string, log io.Writer, setup *time.Duration, extra ...string) (*server, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := spawn(ctx, log, bin, append([]string{"--root", c.Root, "--data", data}, extra...)...)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.waitSearchable(ctx, 20*time.Millisecond); err != nil {
		s.kill()
		return nil, err
	}
	*setup = time.Since(start)
	return s, nil
}

// quiet lets a second pass with no change to the tree: the state the idle figures are
// about.
func quiet() {
	settle()
	time.Sleep(time.Second)
}

// views times n views of random documents.
func views(ctx context.Context, s *server, docs []string, rng *rand.Rand, n int, server, op string) report.Latency {
	var ds []time.Duration
	errs := 0
	for range n {
		start := time.Now()
		_, err := s.call(ctx, "view", map[string]any{"path": docs[rng.IntN(len(docs))]})
		if err != nil {
			errs++
			continue
		}
		ds = append(ds, time.Since(start))
	}
	return summarize(server, op, ds, errs)
}
