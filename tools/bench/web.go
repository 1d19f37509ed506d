package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guide/guide/tools/report"
)

// webPage is one kind of page of the web scenario and the addresses it asks for.
type webPage struct {
	op    string
	paths []string
}

// measureWeb serves c with bin/guide-mcp --root --http on data (the index the search
// scenario built, when it is there) and times each kind of web page, one after another,
// in one browser session.
func measureWeb(ctx context.Context, cfg Config, bin string, c *report.Corpus, data string, log io.Writer) (r report.WebResult) {
	r = report.WebResult{Corpus: c, Load: report.Load{Before: LoadAverage()}}
	defer func() { r.Load.After = LoadAverage() }()
	port, err := freePort()
	if err != nil {
		r.Err = err.Error()
		return r
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(ctx, bin, "--root", c.Root, "--data", data, "--http", "127.0.0.1:"+strconv.Itoa(port), "--log-level", "warn")
	cmd.Stderr = log
	settle()
	if err := cmd.Start(); err != nil {
		r.Err = err.Error()
		return r
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: time.Minute}
	if err := waitCurrent(ctx, client, base, 30*time.Minute); err != nil {
		r.Err = err.Error()
		return r
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x3eb))
	n := cfg.WebCalls
	pick := func(from []string, prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = prefix + escapePath(from[rng.IntN(len(from))])
		}
		return out
	}
	// A word the index refuses (a stop word) is left out, as in the search scenario.
	var words []string
	for _, w := range vocabulary(c, 10) {
		if err := fetch(ctx, client, base+"/search?q="+url.QueryEscape(w)); err != nil {
			cfg.logf("    search page for %q refused, left out: %v", w, err)
			continue
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		r.Err = "every search word was refused"
		return r
	}
	searches := make([]string, n)
	for i := range searches {
		searches[i] = "/search?q=" + url.QueryEscape(words[i%len(words)])
	}
	roots := make([]string, n)
	for i := range roots {
		roots[i] = "/"
	}
	pages := []webPage{
		{"/ (the root folder)", roots},
		{"/view/FOLDER", pick(c.Folders, "/view/")},
		{"/view/DOCUMENT", pick(c.Files, "/view/")},
		{"/search?q=WORD (" + strconv.Itoa(len(words)) + " words, rare to common)", searches},
		{"/available/FOLDER (first 100 available documents)", pick(c.Folders, "/available/")},
	}
	for _, p := range pages {
		// One untimed request of each kind first: the first template execution and the
		// first search warm caches that every later page finds warm.
		_ = fetch(ctx, client, base+p.paths[0])
		var ds []time.Duration
		errs := 0
		var first error
		for _, path := range p.paths {
			t := time.Now()
			err := fetch(ctx, client, base+path)
			ds = append(ds, time.Since(t))
			if err != nil {
				errs++
				first = cmpErr(first, err)
			}
		}
		l := summarize("guide web page", p.op, ds, errs)
		l.Note = errNote(first)
		r.Pages = append(r.Pages, l)
		cfg.logf("    %s: p50 %s, p95 %s", p.op, report.FormatDuration(l.P50), report.FormatDuration(l.P95))
	}
	return r
}

// fetch GETs a page and reads it whole; anything but 200 is an error.
func fetch(ctx context.Context, c *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, res.Status)
	}
	return nil
}

// waitCurrent waits until the page's status line says the index is up to date.
func waitCurrent(ctx context.Context, c *http.Client, base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		var st struct{ State, Detail, Documents string }
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/status", nil)
		req.Header.Set("Accept", "application/json")
		if res, err := c.Do(req); err == nil {
			_ = json.NewDecoder(res.Body).Decode(&st)
			res.Body.Close()
			if st.State == "current" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("guide-mcp --http not up to date after %s (last: %s, %s)", within, st.Documents, st.Detail)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// escapePath escapes each segment of a slash path for a URL.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
