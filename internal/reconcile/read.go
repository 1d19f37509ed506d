package reconcile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"unicode/utf8"

	"github.com/guide/guide/internal/contentroot"
	"github.com/guide/guide/internal/events"
)

// read builds the upsert event of a file: its content when it is text within the size
// limit, else its metadata and a status that says why not; or a delete event when the
// file is no longer there to read. rd opens it (one Reader per goroutine).
func (x *Indexer) read(rd *contentroot.Reader, f file, prevSeq uint64) *events.Event {
	e := &events.Event{Op: events.OpUpsert, Project: x.Project, Path: f.rel, Size: f.size,
		Mtime: f.mt, Inode: f.inode, Status: f.status, Reason: f.reason, PrevSeq: prevSeq}
	if f.status != "" {
		e.Hash = events.HashContent([]byte(string(f.status) + f.reason))
		return e
	}
	if f.size > x.maxSize {
		e.Status, e.Reason = events.StatusTooLarge, fmt.Sprintf("%d bytes; the limit is %d", f.size, x.maxSize)
		e.Hash = fmt.Sprintf("size:%d", f.size)
		return e
	}
	fh, err := rd.Open(f.target)
	if errors.Is(err, fs.ErrNotExist) {
		// Gone since it was listed, or its folder is now a link: whatever was known at
		// this path is deleted, never read from elsewhere.
		return &events.Event{Op: events.OpDelete, Project: x.Project, Path: f.rel, PrevSeq: prevSeq}
	}
	if err != nil {
		e.Status, e.Reason, e.Hash = events.StatusUnreadable, err.Error(), "unreadable"
		return e
	}
	defer fh.Close()
	// Sized by what the walk saw (io.ReadAll grows from 512 bytes: twice the garbage),
	// with room to read the end without growing.
	var buf bytes.Buffer
	buf.Grow(int(min(max(f.size, 0), x.maxSize)) + bytes.MinRead)
	_, err = buf.ReadFrom(io.LimitReader(fh, x.maxSize+1))
	b := buf.Bytes()
	if err != nil {
		e.Status, e.Reason, e.Hash = events.StatusUnreadable, err.Error(), "unreadable"
		return e
	}
	e.Size = int64(len(b))
	e.Hash = events.HashContent(b)
	switch {
	case int64(len(b)) > x.maxSize:
		e.Status, e.Reason = events.StatusTooLarge, fmt.Sprintf("over the limit of %d bytes", x.maxSize)
	case events.IsBinary(b):
		e.Status, e.Reason = events.StatusBinary, "binary content"
	case !utf8.Valid(b):
		e.Status, e.Reason = events.StatusInvalidUTF8, "not valid UTF-8 text"
	default:
		e.Status, e.Content = events.StatusOK, b
	}
	return e
}
