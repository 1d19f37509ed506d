package bench

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/guide/guide/tools/report"
)

// fts5Script builds a SQLite FTS5 index (porter stemming over unicode61 words) of every
// regular file below argv[1], leaving VCS folders out as the indexer does, in one
// transaction on one thread, into the database argv[2]. A file that is not UTF-8 text is
// indexed by its path alone, as guide indexes it by its name. It prints the number of
// files indexed.
const fts5Script = `
import os, sqlite3, sys
root, db = sys.argv[1], sys.argv[2]
vcs = {".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".fossil"}
con = sqlite3.connect(db)
con.execute("PRAGMA journal_mode=WAL")
con.execute("CREATE VIRTUAL TABLE docs USING fts5(path, content, tokenize='porter unicode61')")
n = 0
with con:
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in vcs]
        for f in files:
            p = os.path.join(d, f)
            if not os.path.isfile(p) or os.path.islink(p):
                continue
            try:
                with open(p, "rb") as fh:
                    b = fh.read()
            except OSError:
                continue
            try:
                text = b.decode("utf-8")
                if "\0" in text:
                    text = ""
            except UnicodeDecodeError:
                text = ""
            con.execute("INSERT INTO docs(path, content) VALUES (?, ?)", (os.path.relpath(p, root), text))
            n += 1
con.close()
print(n)
`

// fts5Baseline times python3's sqlite3 building an FTS5 index of the corpus, from spawn to
// exit, and notes the database's size on disk.
func fts5Baseline(ctx context.Context, c *report.Corpus, dir string) report.IndexRun {
	r := report.IndexRun{Kind: report.RunFTS5, What: "baseline: SQLite FTS5 (porter, one thread, python3 sqlite3), spawn to committed", Bytes: c.Bytes}
	if _, err := exec.LookPath("python3"); err != nil {
		r.Err = "python3 not found"
		return r
	}
	if err := os.RemoveAll(dir); err != nil {
		r.Err = err.Error()
		return r
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Err = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "fts5.db")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "python3", "-c", fts5Script, c.Root, db)
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	r.Duration = time.Since(start)
	if err != nil {
		r.Err = fmt.Sprintf("%v: %s", err, strings.TrimSpace(stderr.String()))
		return r
	}
	r.Docs, _ = strconv.Atoi(strings.TrimSpace(string(out)))
	size := dirSize(dir)
	r.Disk = size
	r.Note = fmt.Sprintf("database %.0f MB on disk (%.2f× the text)", float64(size)/1e6, float64(size)/float64(max(c.Bytes, 1)))
	return r
}

// settledSize is dirSize once it has stopped changing: the same for a second (readings a
// quarter of a second apart), or what it is after 30 s or when ctx ends. An index that has
// just merged removes the segments it merged a moment later, from its persister's loop,
// not when the merge returns: read at once, the data directory counts both.
func settledSize(ctx context.Context, dir string) int64 {
	n, same := dirSize(dir), 0
	for deadline := time.Now().Add(30 * time.Second); same < 4 && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(250 * time.Millisecond) // a directory changing: nothing to wait on
		if m := dirSize(dir); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// dirSize is the bytes of the regular files below dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
