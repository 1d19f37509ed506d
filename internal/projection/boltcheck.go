package projection

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// checkPages checks the structure of a bbolt file by reading it as plain bytes, every
// offset bounded before it is followed, so that a damaged file is an error here and never
// a panic, a fault or an endless walk anywhere. bbolt trusts its file: its readers
// slice the mapping at the offsets they find, and its own structural check (Tx.Check)
// runs on a goroutine of its own, where a damaged page's panic cannot be recovered and
// ends the process. A file this check passes is safe for bbolt to read whole.
//
// It checks what Tx.Check checks, from the meta page bbolt would choose: every page of
// every bucket, at every depth, is within the file's pages, of the right kind, holds its
// elements within its bytes, is reached once and is not free; keys are in order within
// a page and within the range its parent gives; the free list names pages that exist;
// and, when the free list is kept in the file, every page is either reached or free.
//
// The format, from bbolt's file layout (version 2, little-endian as on every platform
// guide builds for): a page is a 16-byte header (id u64, flags u16, count u16, overflow
// u32) and its elements; a branch element is pos u32, ksize u32, child u64, a leaf
// element flags u32, pos u32, ksize u32, vsize u32, each key (and value) at pos bytes
// from the element; a bucket's value is its root page u64 and sequence u64, followed by
// the bucket's one leaf page when its root is 0 (inline).
func checkPages(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	c := &pageChecker{r: f, size: fi.Size()}
	return c.check()
}

const (
	boltMagic         = 0xED0CDAED
	boltVersion       = 2
	boltHeader        = 16
	boltElement       = 16
	boltBucketHeader  = 16
	boltBranch        = 0x01
	boltLeaf          = 0x02
	boltMeta          = 0x04
	boltFreelist      = 0x10
	boltBucketLeaf    = 0x01
	boltNoFreelist    = ^uint64(0)
	boltMaxDepth      = 64 // of a tree, and of buckets in buckets: far beyond any real file
	boltMetaChecksum  = 56 // the bytes of a meta the checksum covers
	boltMinPageSize   = 512
	boltMaxPageSize   = 1 << 20
	boltMetaPageBytes = boltHeader + boltMetaChecksum + 8
)

type boltMetaPage struct {
	pageSize      uint32
	root          uint64
	freelist, hwm uint64
	txid          uint64
	invalid       string // why the page is no valid meta; "" for a valid one
}

type pageChecker struct {
	r         io.ReaderAt
	size      int64
	meta      boltMetaPage
	reached   map[uint64]bool
	free      map[uint64]bool
	keepsFree bool
}

// readMeta reads the meta page at off.
func (c *pageChecker) readMeta(off int64) boltMetaPage {
	b := make([]byte, boltMetaPageBytes)
	if _, err := c.r.ReadAt(b, off); err != nil {
		return boltMetaPage{invalid: "cut short"}
	}
	m := b[boltHeader:]
	le := binary.LittleEndian
	meta := boltMetaPage{
		pageSize: le.Uint32(m[8:]),
		root:     le.Uint64(m[16:]),
		freelist: le.Uint64(m[32:]),
		hwm:      le.Uint64(m[40:]),
		txid:     le.Uint64(m[48:]),
	}
	h := fnv.New64a()
	_, _ = h.Write(m[:boltMetaChecksum])
	switch {
	case le.Uint16(b[8:])&boltMeta == 0:
		meta.invalid = "not a meta page"
	case le.Uint32(m) != boltMagic:
		meta.invalid = "no bbolt magic"
	case le.Uint32(m[4:]) != boltVersion:
		meta.invalid = fmt.Sprintf("version %d", le.Uint32(m[4:]))
	case h.Sum64() != le.Uint64(m[boltMetaChecksum:]):
		meta.invalid = "checksum mismatch"
	}
	return meta
}

// chooseMeta picks the meta page bbolt would: of the two, the valid one of the later
// transaction.
func (c *pageChecker) chooseMeta() error {
	m0 := c.readMeta(0)
	size := int64(m0.pageSize)
	if m0.invalid != "" || size < boltMinPageSize || size > boltMaxPageSize {
		size = int64(os.Getpagesize())
	}
	m1 := c.readMeta(size)
	a, b := m0, m1
	if b.txid > a.txid {
		a, b = b, a
	}
	switch {
	case a.invalid == "":
		c.meta = a
	case b.invalid == "":
		c.meta = b
	default:
		return damagedf("neither meta page is valid (%s; %s)", m0.invalid, m1.invalid)
	}
	ps := int64(c.meta.pageSize)
	if ps < boltMinPageSize || ps > boltMaxPageSize || ps&(ps-1) != 0 {
		return damagedf("page size %d", ps)
	}
	if c.meta.hwm < 2 || c.meta.hwm > uint64(c.size/ps) {
		return damagedf("the file holds %d bytes; its pages reach %d", c.size, c.meta.hwm*uint64(ps))
	}
	return nil
}

func (c *pageChecker) check() error {
	if c.size < boltMetaPageBytes {
		return damagedf("%d bytes: no meta page", c.size)
	}
	if err := c.chooseMeta(); err != nil {
		return err
	}
	c.reached = map[uint64]bool{0: true, 1: true}
	c.free = map[uint64]bool{}
	if err := c.readFreelist(); err != nil {
		return err
	}
	if err := c.checkTree(c.meta.root, nil, nil, 0, 0); err != nil {
		return err
	}
	if c.keepsFree {
		for id := uint64(2); id < c.meta.hwm; id++ {
			if !c.reached[id] && !c.free[id] {
				return damagedf("page %d: neither used nor free", id)
			}
		}
	}
	return nil
}

// page reads page id and the pages it overflows into, checking its header.
func (c *pageChecker) page(id uint64) (p []byte, flags, count uint16, err error) {
	if id < 2 || id >= c.meta.hwm {
		return nil, 0, 0, damagedf("page %d: beyond the file's %d pages", id, c.meta.hwm)
	}
	ps := int64(c.meta.pageSize)
	head := make([]byte, boltHeader)
	if _, err := c.r.ReadAt(head, int64(id)*ps); err != nil {
		return nil, 0, 0, damagedf("page %d: %v", id, err)
	}
	le := binary.LittleEndian
	if got := le.Uint64(head); got != id {
		return nil, 0, 0, damagedf("page %d: headed as page %d", id, got)
	}
	overflow := uint64(le.Uint32(head[12:]))
	if id+overflow >= c.meta.hwm {
		return nil, 0, 0, damagedf("page %d: overflows %d pages past the file's %d", id, overflow, c.meta.hwm)
	}
	p = make([]byte, int64(overflow+1)*ps)
	if _, err := c.r.ReadAt(p, int64(id)*ps); err != nil {
		return nil, 0, 0, damagedf("page %d: %v", id, err)
	}
	return p, le.Uint16(head[8:]), le.Uint16(head[10:]), nil
}

// readFreelist reads the free pages the meta names, when the file keeps them.
func (c *pageChecker) readFreelist() error {
	id := c.meta.freelist
	if id == boltNoFreelist {
		return nil // bbolt finds the free pages by walking the file
	}
	c.keepsFree = true
	p, flags, count, err := c.page(id)
	if err != nil {
		return fmt.Errorf("the free list: %w", err)
	}
	if flags&boltFreelist == 0 {
		return damagedf("page %d: the free list's page has flags %#x", id, flags)
	}
	for i := uint64(0); i <= uint64(len(p))/uint64(c.meta.pageSize)-1; i++ {
		c.reached[id+i] = true
	}
	at, n := uint64(boltHeader), uint64(count)
	if count == 0xFFFF {
		n = binary.LittleEndian.Uint64(p[boltHeader:])
		at += 8
	}
	if n > (uint64(len(p))-at)/8 {
		return damagedf("page %d: the free list counts %d pages, more than it holds", id, n)
	}
	for i := range n {
		free := binary.LittleEndian.Uint64(p[at+8*i:])
		if free < 2 || free >= c.meta.hwm {
			return damagedf("page %d: the free list names page %d, beyond the file's %d", id, free, c.meta.hwm)
		}
		if c.free[free] {
			return damagedf("page %d: freed twice", free)
		}
		c.free[free] = true
	}
	return nil
}

// checkTree checks the bucket tree rooted at page id, whose keys lie in [lo, hi) (nil for
// no bound); depth is the tree's, nesting the buckets'.
func (c *pageChecker) checkTree(id uint64, lo, hi []byte, depth, nesting int) error {
	if depth > boltMaxDepth {
		return damagedf("page %d: a tree deeper than %d", id, boltMaxDepth)
	}
	if c.reached[id] {
		return damagedf("page %d: reached twice", id)
	}
	p, flags, count, err := c.page(id)
	if err != nil {
		return err
	}
	pages := uint64(len(p)) / uint64(c.meta.pageSize)
	for i := range pages {
		if c.reached[id+i] {
			return damagedf("page %d: reached twice", id+i)
		}
		if c.free[id+i] {
			return damagedf("page %d: in use and free", id+i)
		}
		c.reached[id+i] = true
	}
	switch {
	case flags&boltBranch != 0:
		return c.checkBranch(id, p, count, lo, hi, depth, nesting)
	case flags&boltLeaf != 0:
		return c.checkLeaf(id, p, count, lo, hi, nesting)
	}
	return damagedf("page %d: flags %#x, neither branch nor leaf", id, flags)
}

// element returns the bounds of element i's key (and value) within p.
func element(p []byte, i int, ksize, vsize uint32, pos uint32) (k, v []byte, ok bool) {
	start := uint64(boltHeader+i*boltElement) + uint64(pos)
	end := start + uint64(ksize) + uint64(vsize)
	if end > uint64(len(p)) {
		return nil, nil, false
	}
	return p[start : start+uint64(ksize)], p[start+uint64(ksize) : end], true
}

func inOrder(id uint64, i int, k, prev, lo, hi []byte) error {
	if (i == 0 && lo != nil && bytes.Compare(k, lo) < 0) || (i > 0 && bytes.Compare(prev, k) >= 0) {
		return damagedf("page %d: key %d out of order", id, i)
	}
	if hi != nil && bytes.Compare(k, hi) >= 0 {
		return damagedf("page %d: key %d beyond its parent's next key", id, i)
	}
	return nil
}

func (c *pageChecker) checkBranch(id uint64, p []byte, count uint16, lo, hi []byte, depth, nesting int) error {
	n := int(count)
	if n == 0 || boltHeader+n*boltElement > len(p) {
		return damagedf("page %d: %d branch elements in %d bytes", id, n, len(p))
	}
	le := binary.LittleEndian
	keys := make([][]byte, n)
	children := make([]uint64, n)
	for i := range n {
		e := p[boltHeader+i*boltElement:]
		k, _, ok := element(p, i, le.Uint32(e[4:]), 0, le.Uint32(e))
		if !ok {
			return damagedf("page %d: branch element %d reaches past the page", id, i)
		}
		var prev []byte
		if i > 0 {
			prev = keys[i-1]
		}
		if err := inOrder(id, i, k, prev, lo, hi); err != nil {
			return err
		}
		keys[i], children[i] = k, le.Uint64(e[8:])
	}
	for i, child := range children {
		next := hi
		if i+1 < n {
			next = keys[i+1]
		}
		if err := c.checkTree(child, keys[i], next, depth+1, nesting); err != nil {
			return err
		}
	}
	return nil
}

func (c *pageChecker) checkLeaf(id uint64, p []byte, count uint16, lo, hi []byte, nesting int) error {
	n := int(count)
	if boltHeader+n*boltElement > len(p) {
		return damagedf("page %d: %d leaf elements in %d bytes", id, n, len(p))
	}
	le := binary.LittleEndian
	var prev []byte
	for i := range n {
		e := p[boltHeader+i*boltElement:]
		k, v, ok := element(p, i, le.Uint32(e[8:]), le.Uint32(e[12:]), le.Uint32(e[4:]))
		if !ok {
			return damagedf("page %d: leaf element %d reaches past the page", id, i)
		}
		if err := inOrder(id, i, k, prev, lo, hi); err != nil {
			return err
		}
		prev = k
		if le.Uint32(e)&boltBucketLeaf == 0 {
			continue
		}
		if err := c.checkBucket(id, v, nesting+1); err != nil {
			return err
		}
	}
	return nil
}

// checkBucket checks the bucket whose value is v, found on page id.
func (c *pageChecker) checkBucket(id uint64, v []byte, nesting int) error {
	if nesting > boltMaxDepth {
		return damagedf("page %d: buckets nested deeper than %d", id, boltMaxDepth)
	}
	if len(v) < boltBucketHeader {
		return damagedf("page %d: a bucket's value of %d bytes", id, len(v))
	}
	root := binary.LittleEndian.Uint64(v)
	if root != 0 {
		return c.checkTree(root, nil, nil, 0, nesting)
	}
	// Inline: the bucket's one leaf page follows its header, within the value.
	inline := v[boltBucketHeader:]
	if len(inline) < boltHeader {
		return damagedf("page %d: an inline bucket of %d bytes", id, len(inline))
	}
	flags, count := binary.LittleEndian.Uint16(inline[8:]), binary.LittleEndian.Uint16(inline[10:])
	if flags&boltLeaf == 0 {
		return damagedf("page %d: an inline bucket whose page has flags %#x", id, flags)
	}
	return c.checkLeaf(id, inline, count, nil, nil, nesting)
}
