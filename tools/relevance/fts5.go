package relevance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// fts5Script ranks with SQLite FTS5 (python3's sqlite3): one row per document with the
// document's path as its name column and its text as content, the porter tokenizer, BM25
// with the name weighted 2×, and the query's words OR'ed. It reads {docs, queries} as JSON
// on stdin and writes the ranked paths of every query as JSON on stdout.
const fts5Script = `
import json, re, sqlite3, sys
req = json.load(sys.stdin)
db = sqlite3.connect(":memory:")
db.execute("CREATE VIRTUAL TABLE docs USING fts5(name, content, tokenize='porter unicode61')")
db.executemany("INSERT INTO docs(name, content) VALUES (?, ?)", [(d["name"], d["content"]) for d in req["docs"]])
out = []
for q in req["queries"]:
    words = sorted(set(w.lower() for w in re.findall(r"\w+", q)))
    if not words:
        out.append([])
        continue
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = db.execute("SELECT name FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 2.0, 1.0) LIMIT ?", (match, req["depth"])).fetchall()
    out.append([r[0] for r in rows])
json.dump(out, sys.stdout)
`

// HasFTS5 reports whether python3's sqlite3 has FTS5 here.
func HasFTS5() bool {
	cmd := exec.Command("python3", "-c", "import sqlite3; sqlite3.connect(':memory:').execute(\"CREATE VIRTUAL TABLE t USING fts5(a, tokenize='porter')\")")
	return cmd.Run() == nil
}

// FTS5 ranks every query of a set with SQLite FTS5's BM25.
func FTS5(s *Set) ([][]string, error) {
	type doc struct {
		Name    string `json:"name"`
		Content string `json:"content"`
	}
	req := struct {
		Docs    []doc    `json:"docs"`
		Queries []string `json:"queries"`
		Depth   int      `json:"depth"`
	}{Depth: Depth}
	paths := make([]string, 0, len(s.Docs))
	for p := range s.Docs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		req.Docs = append(req.Docs, doc{Name: p, Content: s.Docs[p]})
	}
	for _, q := range s.Queries {
		req.Queries = append(req.Queries, q.Text)
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("python3", "-c", fts5Script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("python3 sqlite3 FTS5: %w: %s", err, stderr.String())
	}
	var ranked [][]string
	if err := json.Unmarshal(out, &ranked); err != nil {
		return nil, fmt.Errorf("python3 sqlite3 FTS5: %w", err)
	}
	return ranked, nil
}
