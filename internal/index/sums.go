package index

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	"github.com/guide/guide/internal/projection"
)

// A damaged index is found before it is searched, whatever its segments' format: the
// index keeps a checksum of each of its immutable files — the segments scorch has
// persisted, and index_meta.json — in a file of its own (sumsFile), written as they
// appear; Open checks every one still on disk against it, and bbolt's structure of
// scorch's root.bolt (the one file scorch rewrites), before Bleve reads anything. A
// segment written just before a crash, not yet in the list, is added at the next open.

// sumsFile is the list of the index's files and their checksums, relative to Dir.
const sumsFile = "checksums"

// sumsHeader begins the file; its last line is "end" and the checksum of what precedes it.
const sumsHeader = "guide index checksums 1\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileSum is a file's length and CRC-32C.
type fileSum struct {
	size int64
	crc  uint32
}

// sums is what the index knows of its files' checksums, and writes to sumsFile.
type sums struct {
	mu    sync.Mutex
	dir   string
	files map[string]fileSum // by path relative to dir, slash-separated
}

// checksum reads a whole file and returns its length and CRC-32C.
func checksum(path string) (fileSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileSum{}, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return fileSum{}, err
	}
	return fileSum{size: n, crc: h.Sum32()}, nil
}

// readSums reads dir's list of checksums.
func readSums(dir string) (*sums, error) {
	raw, err := os.ReadFile(filepath.Join(dir, sumsFile))
	if err != nil {
		return nil, err
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: %s: %s", projection.ErrDamaged, sumsFile, why)
	}
	i := bytes.LastIndex(raw, []byte("end "))
	if !bytes.HasPrefix(raw, []byte(sumsHeader)) || i < 0 {
		return nil, bad("not a list of checksums")
	}
	want, err := strconv.ParseUint(strings.TrimSpace(string(raw[i+4:])), 16, 32)
	if err != nil || crc32.Checksum(raw[:i], castagnoli) != uint32(want) {
		return nil, bad("does not match its own checksum")
	}
	s := &sums{dir: dir, files: map[string]fileSum{}}
	sc := bufio.NewScanner(bytes.NewReader(raw[len(sumsHeader):i]))
	for sc.Scan() {
		var crc uint32
		var size int64
		var name string
		if _, err := fmt.Sscanf(sc.Text(), "%08x %d %s", &crc, &size, &name); err != nil {
			return nil, bad("a line cannot be read")
		}
		s.files[name] = fileSum{size: size, crc: crc}
	}
	return s, nil
}

// write replaces sumsFile with the list, atomically.
func (s *sums) write() error {
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	slices.Sort(names)
	b := []byte(sumsHeader)
	for _, n := range names {
		f := s.files[n]
		b = fmt.Appendf(b, "%08x %d %s\n", f.crc, f.size, n)
	}
	b = fmt.Appendf(b, "end %08x\n", crc32.Checksum(b, castagnoli))
	tmp := filepath.Join(s.dir, sumsFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, sumsFile))
}

// add records the checksums of the files named (relative to dir) that the list lacks,
// forgets those no longer on disk, and writes the list when it changed.
func (s *sums) add(names []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, n := range names {
		if _, ok := s.files[n]; ok {
			continue
		}
		f, err := checksum(filepath.Join(s.dir, filepath.FromSlash(n)))
		if errors.Is(err, os.ErrNotExist) {
			continue // merged away meanwhile
		}
		if err != nil {
			return err
		}
		s.files[n], changed = f, true
	}
	for n := range s.files {
		if _, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(n))); errors.Is(err, os.ErrNotExist) {
			delete(s.files, n)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return s.write()
}

// verify checks every file the list names that is still on disk, and the structure of
// scorch's root.bolt. A file missing that the index needs is found by Bleve's open.
func (s *sums) verify() error {
	for n, want := range s.files {
		got, err := checksum(filepath.Join(s.dir, filepath.FromSlash(n)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%w: %s does not match its checksum (%d bytes, crc %08x; written as %d bytes, crc %08x)",
				projection.ErrDamaged, n, got.size, got.crc, want.size, want.crc)
		}
	}
	root := filepath.Join(s.dir, "store", "root.bolt")
	if _, err := os.Stat(root); err != nil {
		return nil // Bleve says what it makes of that
	}
	return projection.CheckBolt(root)
}

// persistedFiles are the files of idx's current snapshot on disk, relative to dir, and
// index_meta.json.
func persistedFiles(dir string, idx bleve.Index) []string {
	out := []string{"index_meta.json"}
	withSnapshot(idx, func(snap *scorch.IndexSnapshot) {
		for _, s := range snap.Segments() {
			if p, ok := s.Segment().(segment.PersistedSegment); ok {
				if rel, err := filepath.Rel(dir, p.Path()); err == nil && !strings.HasPrefix(rel, "..") {
					out = append(out, filepath.ToSlash(rel))
				}
			}
		}
	})
	return out
}
