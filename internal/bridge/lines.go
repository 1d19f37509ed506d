package bridge

import (
	"bytes"
	"io"
	"sync"
)

// lineWriter writes whole messages, one a line, from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Send writes msg and a newline.
func (l *lineWriter) Send(msg []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(bytes.Clone(msg), '\n'))
}

// lineQueue is a reader of the messages pushed to it, one a line: pushing never waits for
// the reader, so the client's messages are read on while an owner starts.
type lineQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    []byte
	closed bool
}

func newLineQueue() *lineQueue {
	q := &lineQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Push queues msg as one line.
func (q *lineQueue) Push(msg []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.buf = append(append(q.buf, msg...), '\n')
	q.cond.Signal()
}

// Close ends the queue: the reader reads what is queued, then io.EOF.
func (q *lineQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

func (q *lineQueue) Read(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.buf) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, q.buf)
	q.buf = q.buf[n:]
	if len(q.buf) == 0 {
		q.buf = nil
	}
	return n, nil
}
