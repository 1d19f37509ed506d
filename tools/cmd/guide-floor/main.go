// Command guide-floor is the floor under building a first index: the least work a full-text
// index of positions must do, done plainly. It reads every regular file below a folder
// (VCS folders left out), splits and folds its words as guide does (internal/text: an
// ASCII fast path, Unicode otherwise), and appends each word's document and position
// deltas as varints to in-memory postings keyed by a term id — one map look-up per token,
// no string per token, no map per document — one set per core, then writes every term's
// postings sorted by term. guide-bench times it as a baseline of the cold scenario:
//
//	guide-floor ROOT OUT
//
// It prints the documents, the terms and the bytes of postings written, as JSON.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/guide/guide/internal/text"
)

var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, "_darcs": true, ".jj": true, ".fossil": true}

// postings are one core's: term ids by term, and each id's postings — for every document
// holding the term, the document's delta to the term's last, its count of occurrences, and
// their positions' deltas — as varints.
type postings struct {
	ids   map[string]uint32
	terms []string
	lists [][]byte
	last  []uint32 // each term's last document, plus one (0: none yet)
	// the document being read: its terms' ids in the order they first occur, and each
	// one's positions
	seen   []uint32
	pos    [][]uint32
	inDoc  []int32 // by id: the term's place in seen, -1 when not in the document
	folded []byte
}

func newPostings() *postings { return &postings{ids: map[string]uint32{}} }

// add reads the words of document doc.
func (p *postings) add(doc uint32, b []byte) {
	pos := uint32(0)
	text.Words(b, func(s text.Span) bool {
		pos++
		w := text.Fold(b[s.Start:s.End])
		id, ok := p.ids[string(w)] // no string made for a term seen before
		if !ok {
			id = uint32(len(p.terms))
			t := string(w)
			p.ids[t] = id
			p.terms = append(p.terms, t)
			p.lists = append(p.lists, nil)
			p.last = append(p.last, 0)
			p.inDoc = append(p.inDoc, -1)
		}
		at := p.inDoc[id]
		if at < 0 {
			at = int32(len(p.seen))
			p.inDoc[id] = at
			p.seen = append(p.seen, id)
			if len(p.pos) < len(p.seen) {
				p.pos = append(p.pos, nil)
			}
			p.pos[at] = p.pos[at][:0]
		}
		p.pos[at] = append(p.pos[at], pos)
		return true
	})
	for i, id := range p.seen {
		l := p.lists[id]
		l = binary.AppendUvarint(l, uint64(doc+1-p.last[id]))
		l = binary.AppendUvarint(l, uint64(len(p.pos[i])))
		prev := uint32(0)
		for _, q := range p.pos[i] {
			l = binary.AppendUvarint(l, uint64(q-prev))
			prev = q
		}
		p.lists[id], p.last[id] = l, doc+1
		p.inDoc[id] = -1
	}
	p.seen = p.seen[:0]
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: guide-floor ROOT OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "guide-floor:", err)
		os.Exit(1)
	}
}

type file struct {
	doc  uint32
	path string
}

func run(root, out string) error {
	files := make(chan file, 256)
	workers := runtime.NumCPU()
	sets := make([]*postings, workers)
	var wg sync.WaitGroup
	for w := range workers {
		sets[w] = newPostings()
		wg.Go(func() {
			p := sets[w]
			for f := range files {
				if b, err := os.ReadFile(f.path); err == nil {
					p.add(f.doc, b)
				}
			}
		})
	}
	docs := uint32(0)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if vcsDirs[d.Name()] && p != root {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files <- file{docs, p}
			docs++
		}
		return nil
	})
	close(files)
	wg.Wait()
	if err != nil {
		return err
	}

	// Every term once, sorted; each core's postings of it in turn (each core's documents
	// rise, so its deltas hold).
	var terms []string
	for _, p := range sets {
		terms = append(terms, p.terms...)
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	var head []byte
	for _, t := range terms {
		head = binary.AppendUvarint(head[:0], uint64(len(t)))
		head = append(head, t...)
		for _, p := range sets {
			id, ok := p.ids[t]
			if !ok {
				head = binary.AppendUvarint(head, 0)
				continue
			}
			head = binary.AppendUvarint(head, uint64(len(p.lists[id])))
		}
		w.Write(head)
		n += int64(len(head))
		for _, p := range sets {
			if id, ok := p.ids[t]; ok {
				w.Write(p.lists[id])
				n += int64(len(p.lists[id]))
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"documents": docs, "terms": len(terms), "bytes": n})
}
