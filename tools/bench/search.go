package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/tools/report"
	"github.com/guide/guide/tools/stats"
)

// goWords are the words searched in the Go source tree: rare to common in Go code.
var goWords = []string{
	"mutex", "goroutine", "deadline", "Marshal", "Unmarshal", "context", "reflect", "atomic",
	"syscall", "unsafe", "pointer", "buffer", "channel", "interface", "panic", "defer",
	"errorf", "func", "return", "package", "string", "import", "hmac", "elliptic", "tzdata",
	"inlining", "escape", "preempt", "sched", "zstd",
}

// goSentences are sentences searched in the Go source tree, as an agent asks them.
var goSentences = []string{
	"extract a compressed archive into the current directory",
	"how to read all the bytes from a reader",
	"parse a duration string like one hour and ten minutes",
	"sort a slice of strings in place",
	"what happens when a goroutine panics in a deferred call",
}

// sentences makes sentences of a generated corpus's own words, as agents write them:
// common words between the corpus's words of each band.
func sentences(words []string) []string {
	var bands [3][]string // rare, medium, common: vocabulary's order
	per := max(1, len(words)/3)
	for i, w := range words {
		bands[min(2, i/per)] = append(bands[min(2, i/per)], w)
	}
	at := func(b, i int) string { return bands[b][i%max(1, len(bands[b]))] }
	return []string{
		fmt.Sprintf("how to %s a %s %s", at(2, 0), at(2, 1), at(2, 2)),
		fmt.Sprintf("what is the %s of the %s for a %s", at(2, 3), at(1, 0), at(2, 4)),
		fmt.Sprintf("%s %s in the %s with %s", at(1, 1), at(2, 5), at(0, 0), at(2, 6)),
		fmt.Sprintf("why does the %s %s when the %s is %s", at(0, 1), at(2, 7), at(1, 2), at(2, 8)),
		fmt.Sprintf("find the %s and %s notes about %s", at(1, 3), at(0, 2), at(2, 0)),
	}
}

// measureSearch indexes c from an empty data directory with bin/guide-mcp --root, waits
// for the full-text index, then times search for every word against rg -l -w -i. The
// server is returned running (for the content scenario) unless keep is false.
func measureSearch(ctx context.Context, cfg Config, bin string, c *report.Corpus, data string, log io.Writer, keep bool) (report.SearchResult, *server) {
	r := report.SearchResult{Corpus: c, Reps: cfg.SearchReps, Load: report.Load{Before: LoadAverage()}}
	fail := func(err error) (report.SearchResult, *server) {
		r.Err = err.Error()
		r.Load.After = LoadAverage()
		return r, nil
	}
	if err := os.RemoveAll(data); err != nil {
		return fail(err)
	}
	settle()
	s, st, catalog, d, err := spawnIndexed(ctx, bin, c, data, log)
	if err != nil {
		return fail(err)
	}
	r.Index = report.IndexRun{What: "guide all-in-one: bin/guide-mcp --root, until the search index applied the first scan",
		Docs: st.Documents, Bytes: c.Bytes, Duration: d,
		Note: fmt.Sprintf("catalog caught up after %s; index applied_seq %d = stream_last_seq %d", report.FormatDuration(catalog), indexSeq(st), st.StreamLastSeq)}
	r.Catalog = catalog
	r.RSS, _, _ = s.memory()
	wait, segments, merged := s.waitMerged(ctx)
	r.Index.Note += "; " + mergedNote(wait, segments, merged)
	var first int64
	r.IndexBytes, first = settledBytes(ctx, filepath.Join(data, "query", "index"))
	cfg.logf("    indexed %d documents in %s (catalog %s); index %s on disk (%s as the merges ended), segments merged %s later", st.Documents, report.FormatDuration(d), report.FormatDuration(catalog), report.FormatMB(r.IndexBytes), report.FormatMB(first), report.FormatDuration(wait))

	words := goWords
	if c.Generated {
		words = vocabulary(c, 10)
	}
	// Warm the page cache for rg, as the index is warm.
	_ = exec.Command("rg", "-l", "-w", "-i", "-F", "--no-messages", "zzzwarmupzzz", c.Root).Run()
	settle()
	var all []time.Duration
	var rgAll []time.Duration
	errs := 0
	var firstErr error
	per := map[string][]time.Duration{}
	totals := map[string]int{}
	bad := map[string]bool{}
	var sizes []int
	for _, w := range words {
		out, err := s.call(ctx, "search", map[string]any{"query": w})
		if err != nil {
			// A word the index treats as a stop word is refused; it is no fair comparison.
			bad[w] = true
			cfg.logf("    search %q refused, left out: %v", w, err)
			continue
		}
		totals[w] = searchTotal(out)
		sizes = append(sizes, len(out))
	}
	// The floor: view of a document whose answer is as large as a search's, through the
	// same client, interleaved with the searches: what an answer of that size costs on
	// its way with no search at all.
	floorDoc, floorSize, median := "", 0, 0
	if len(sizes) > 0 {
		slices.Sort(sizes)
		median = sizes[len(sizes)/2]
		floorDoc, floorSize = pageSizedDoc(ctx, s, c, median)
	}
	var floor []time.Duration
	floorErrs := 0
	var floorErr error
	for range cfg.SearchReps {
		for _, w := range words {
			if bad[w] {
				continue
			}
			t := time.Now()
			_, err := s.call(ctx, "search", map[string]any{"query": w})
			d := time.Since(t)
			all = append(all, d)
			per[w] = append(per[w], d)
			if err != nil {
				errs++
				firstErr = cmpErr(firstErr, err)
			}
			if floorDoc != "" {
				t := time.Now()
				_, err := s.call(ctx, "view", map[string]any{"path": floorDoc})
				floor = append(floor, time.Since(t))
				if err != nil {
					floorErrs++
					floorErr = cmpErr(floorErr, err)
				}
			}
		}
	}
	if floorDoc != "" {
		r.Floor = summarize("guide (bin/guide-mcp, stdio)", "view(path), an answer as large as a search's", floor, floorErrs)
		r.Floor.Note = fmt.Sprintf("%s: %d bytes of answer against a search's median %d", floorDoc, floorSize, median)
		if n := errNote(floorErr); n != "" {
			r.Floor.Note += "; " + n
		}
	}
	var kept []string // the words searched alone: no stop words
	for _, w := range words {
		if !bad[w] {
			kept = append(kept, w)
		}
	}
	// The same words through another client: the one desktop clients are built on.
	r.GuideSDK = measureSDK(ctx, cfg, bin, c, data, kept, log)
	says := goSentences
	if c.Generated {
		says = sentences(kept)
	}
	var sayAll []time.Duration
	sayErrs := 0
	var sayErr error
	for _, q := range says {
		out, err := s.call(ctx, "search", map[string]any{"query": q})
		if err != nil {
			cfg.logf("    search %q: %v", q, err)
			sayErrs++
			sayErr = cmpErr(sayErr, err)
			continue
		}
		var lat []time.Duration
		for range cfg.SearchReps {
			t := time.Now()
			_, err := s.call(ctx, "search", map[string]any{"query": q})
			d := time.Since(t)
			lat = append(lat, d)
			if err != nil {
				sayErrs++
				sayErr = cmpErr(sayErr, err)
			}
		}
		sayAll = append(sayAll, lat...)
		r.Sentences = append(r.Sentences, report.SentenceResult{Sentence: q, GuideTotal: searchTotal(out),
			GuideP50: stats.Median(lat), GuideMax: slices.Max(lat)})
	}
	r.GuideSentence = summarize("guide (bin/guide-mcp, stdio)", "search(sentence)", sayAll, sayErrs)
	r.GuideSentence.Note = errNote(sayErr)
	for _, w := range words {
		if bad[w] {
			continue
		}
		t := time.Now()
		n, err := rgFiles(c.Root, w)
		d := time.Since(t)
		if err != nil {
			cfg.logf("    rg %q: %v", w, err)
		}
		rgAll = append(rgAll, d)
		wr := report.WordResult{Word: w, RGDocs: n, GuideTotal: totals[w], RG: d, GuideP50: stats.Median(per[w])}
		if wr.GuideP50 > 0 {
			wr.Ratio = float64(d) / float64(wr.GuideP50)
		}
		share := float64(n) / float64(max(1, len(c.Files)))
		switch {
		case share < 0.01:
			wr.Band = "rare"
		case share < 0.2:
			wr.Band = "medium"
		default:
			wr.Band = "common"
		}
		r.Words = append(r.Words, wr)
	}
	r.Guide = summarize("guide (bin/guide-mcp, stdio)", "search(word)", all, errs)
	r.Guide.Note = errNote(firstErr)
	r.RG = summarize("baseline: rg -l -w -i -F --no-messages WORD DIR", "files containing the word", rgAll, 0)
	ratios := make([]float64, 0, len(r.Words))
	for _, w := range r.Words {
		ratios = append(ratios, w.Ratio)
	}
	r.Ratio = stats.Median(ratios)
	r.RSSAfter, r.Peak, _ = s.memory()
	r.Load.After = LoadAverage()
	if !keep {
		s.stop()
		s = nil
	}
	return r, s
}

// pageSizedDoc finds a document of c whose view answer is nearest size bytes (within a
// tenth, among the first candidates of a fitting file size), and the size of that answer.
// It returns "" when none is near enough.
func pageSizedDoc(ctx context.Context, s *server, c *report.Corpus, size int) (string, int) {
	best, bestSize, tried := "", 0, 0
	for _, rel := range c.Files {
		fi, err := os.Stat(filepath.Join(c.Root, filepath.FromSlash(rel)))
		// A view's answer is the document's text as a JSON string and a few fields more.
		if err != nil || fi.Size() < int64(size)*8/10 || fi.Size() > int64(size) {
			continue
		}
		out, err := s.call(ctx, "view", map[string]any{"path": rel})
		if err != nil {
			continue
		}
		if best == "" || abs(len(out)-size) < abs(bestSize-size) {
			best, bestSize = rel, len(out)
		}
		if tried++; tried == 20 {
			break
		}
	}
	if best == "" || abs(bestSize-size) > size/10 {
		return "", 0
	}
	return best, bestSize
}

func abs(n int) int { return max(n, -n) }

// spawnIndexed starts bin/guide-mcp --root on data and waits until the index caught up.
func spawnIndexed(ctx context.Context, bin string, c *report.Corpus, data string, log io.Writer) (*server, query.Status, time.Duration, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := spawn(ctx, log, bin, "--root", c.Root, "--data", data)
	if err != nil {
		return nil, query.Status{}, 0, 0, err
	}
	st, catalog, err := s.waitSearchable(ctx, 20*time.Millisecond)
	d := time.Since(start)
	if err != nil {
		s.kill()
		return nil, st, 0, 0, err
	}
	return s, st, catalog, d, nil
}

// searchTotal reads "total" from a search result.
func searchTotal(out string) int {
	var v struct {
		Total int `json:"total"`
	}
	_ = json.Unmarshal([]byte(out), &v)
	return v.Total
}

// rgFiles runs rg -l -w -i -F --no-messages word root and counts the files it lists.
func rgFiles(root, word string) (int, error) {
	cmd := exec.Command("rg", "-l", "-w", "-i", "-F", "--no-messages", word, root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // nothing matched
	}
	return n, err
}

// settledBytes is dirBytes once it has stopped changing for a second (at most 30 s), and
// what it was when asked: the files of the segments a merge replaced are removed a moment
// after it, and counting them gave the index up to half as much again as it holds.
func settledBytes(ctx context.Context, dir string) (settled, first int64) {
	first = dirBytes(dir)
	n := first
	for start, same := time.Now(), 0; same < 2 && time.Since(start) < 30*time.Second; {
		select {
		case <-ctx.Done():
			return n, first
		case <-time.After(500 * time.Millisecond):
		}
		m := dirBytes(dir)
		if m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n, first
}

// dirBytes is the size of the files below dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// vocabulary picks perBand words of the corpus from each frequency band (rare: in under
// 1% of documents, medium: under 20%, common: the rest), spread evenly over each band's
// ranks, from a sample of about 3,000 documents. Words of CJK scripts are left out (rg -w
// and the index's bigrams do not mean the same by a word there), and so are words under
// four letters (most are stop words the index refuses alone).
func vocabulary(c *report.Corpus, perBand int) []string {
	step := max(1, len(c.Files)/3000)
	df := map[string]int{}
	sampled := 0
	for i := 0; i < len(c.Files); i += step {
		b, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(c.Files[i])))
		if err != nil {
			continue
		}
		sampled++
		seen := map[string]bool{}
		for _, w := range strings.FieldsFunc(string(b), func(r rune) bool { return !unicode.IsLetter(r) }) {
			w = strings.ToLower(w)
			if seen[w] || len([]rune(w)) < 4 || strings.IndexFunc(w, func(r rune) bool {
				return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r)
			}) >= 0 {
				continue
			}
			seen[w] = true
			df[w]++
		}
	}
	type wd struct {
		w string
		n int
	}
	var ws []wd
	for w, n := range df {
		ws = append(ws, wd{w, n})
	}
	slices.SortFunc(ws, func(a, b wd) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.w, b.w)
	})
	var bands [3][]string
	for _, x := range ws {
		share := float64(x.n) / float64(max(1, sampled))
		switch {
		case share >= 0.2:
			bands[2] = append(bands[2], x.w)
		case share >= 0.01:
			bands[1] = append(bands[1], x.w)
		default:
			bands[0] = append(bands[0], x.w)
		}
	}
	var out []string
	for _, b := range bands {
		if len(b) <= perBand {
			out = append(out, b...)
			continue
		}
		for i := range perBand {
			out = append(out, b[i*(len(b)-1)/(perBand-1)])
		}
	}
	return out
}
