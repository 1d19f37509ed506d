package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/guide/guide/tools/report"
)

// contentPatterns finds folders of the corpus holding exactly want documents directly,
// none a template, and turns each into a category (the top-level folder, as the default
// configuration makes it) and a pattern relative to it.
func contentPatterns(c *report.Corpus, want, most int) []report.ContentPattern {
	count := map[string]int{}
	templ := map[string]bool{}
	for _, f := range c.Files {
		d := path.Dir(f)
		count[d]++
		if !strings.HasSuffix(f, ".md") {
			templ[d] = true
		}
	}
	var out []report.ContentPattern
	dirs := make([]string, 0, len(count))
	for d := range count {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		if d == "." || count[d] != want || templ[d] || strings.HasPrefix(d, ".") {
			continue
		}
		cat, rest, _ := strings.Cut(d, "/")
		p := "*.md"
		if rest != "" {
			p = rest + "/*.md"
		}
		out = append(out, report.ContentPattern{Category: cat, Pattern: p, Want: want})
		if len(out) == most {
			break
		}
	}
	return out
}

// parts counts the documents in a get_content value: one document as it is, several as
// MIME multipart with a Content-Location per part.
func parts(value string) int {
	if n := strings.Count(value, "\nContent-Location: "); n > 0 {
		return n
	}
	if value == "" {
		return 0
	}
	return 1
}

// measureContent times get_content(category, pattern) on s, and the same retrieval on the
// reference filesystem server: search_files in the category's folder, then
// read_multiple_files of what it found.
func measureContent(ctx context.Context, cfg Config, s *server, fsScript string, c *report.Corpus, fsLog io.Writer) report.ContentResult {
	r := report.ContentResult{Corpus: c, Load: report.Load{Before: LoadAverage()}}
	pats := contentPatterns(c, 10, 20)
	// The harness asserts the count through the tool before timing.
	var ok []report.ContentPattern
	for _, p := range pats {
		out, err := s.call(ctx, "get_content", map[string]any{"category_or_collection": p.Category, "pattern": p.Pattern})
		if err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("%s %s: %v", p.Category, p.Pattern, err))
			continue
		}
		if n := parts(resultValue(out)); n != p.Want {
			r.Notes = append(r.Notes, fmt.Sprintf("get_content(%s, %s) returned %d documents, not %d: left out", p.Category, p.Pattern, n, p.Want))
			continue
		}
		ok = append(ok, p)
	}
	r.Patterns = ok
	if len(ok) == 0 {
		r.Err = "no pattern of the corpus selects exactly 10 documents"
		r.Load.After = LoadAverage()
		return r
	}
	settle()
	var ds []time.Duration
	errs := 0
	var firstErr error
	for i := range cfg.ContentCalls {
		p := ok[i%len(ok)]
		t := time.Now()
		out, err := s.call(ctx, "get_content", map[string]any{"category_or_collection": p.Category, "pattern": p.Pattern})
		ds = append(ds, time.Since(t))
		if err == nil && parts(resultValue(out)) != p.Want {
			err = fmt.Errorf("get_content(%s, %s): %d documents", p.Category, p.Pattern, parts(resultValue(out)))
		}
		if err != nil {
			errs++
			firstErr = cmpErr(firstErr, err)
		}
	}
	r.Guide = summarize("guide (bin/guide-mcp, stdio)", "get_content(category, pattern) → 10 documents", ds, errs)
	r.Guide.Note = errNote(firstErr)

	if fsScript == "" {
		r.FS = report.Latency{Server: fsServerName, Op: "search_files + read_multiple_files", Err: "not installed"}
		r.Load.After = LoadAverage()
		return r
	}
	fs, err := spawn(ctx, fsLog, "node", fsScript, c.Root)
	if err != nil {
		r.FS = report.Latency{Server: fsServerName, Op: "search_files + read_multiple_files", Err: err.Error()}
		r.Load.After = LoadAverage()
		return r
	}
	defer fs.stop()
	settle()
	ds, errs, firstErr = nil, 0, nil
	for i := range cfg.ContentCalls {
		p := ok[i%len(ok)]
		t := time.Now()
		n, err := fsRetrieve(ctx, fs, filepath.Join(c.Root, p.Category), p.Pattern)
		ds = append(ds, time.Since(t))
		if err == nil && n != p.Want {
			err = fmt.Errorf("search_files(%s, %s): %d files", p.Category, p.Pattern, n)
		}
		if err != nil {
			errs++
			firstErr = cmpErr(firstErr, err)
		}
	}
	r.FS = summarize(fsServerName, "search_files(category folder, pattern) + read_multiple_files", ds, errs)
	r.FS.Note = "search_files walks the category's whole subtree; then one read_multiple_files" + report.NoteSuffix(errNote(firstErr))
	if r.Guide.P50 > 0 {
		r.Ratio = float64(r.FS.P50) / float64(r.Guide.P50)
	}
	r.Load.After = LoadAverage()
	return r
}

// fsRetrieve is the reference server's way to the same documents: find, then read.
func fsRetrieve(ctx context.Context, fs *server, dir, pattern string) (int, error) {
	out, err := fs.call(ctx, "search_files", map[string]any{"path": dir, "pattern": pattern})
	if err != nil {
		return 0, err
	}
	var paths []string
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "/") {
			paths = append(paths, line)
		}
	}
	if len(paths) == 0 {
		return 0, fmt.Errorf("search_files(%s, %s) found nothing: %.100s", dir, pattern, out)
	}
	if _, err := fs.call(ctx, "read_multiple_files", map[string]any{"paths": paths}); err != nil {
		return 0, err
	}
	return len(paths), nil
}

// resultValue is the value of a Result-pattern answer.
func resultValue(out string) string {
	var v struct {
		Value string `json:"value"`
	}
	if json.Unmarshal([]byte(out), &v) != nil {
		return ""
	}
	return v.Value
}
