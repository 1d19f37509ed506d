package reconcile_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// logBuffer is a log's text, written from any goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestFIFOIsLoggedOnce: a named pipe in the tree is not a document, is never opened, and
// the log says so once, not on every scan.
func TestFIFOIsLoggedOnce(t *testing.T) {
	root := testkit.CopyTree(t, "../../testdata/sample")
	if err := syscall.Mkfifo(filepath.Join(root, "Characters", "pipe.md"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	x, s := newIndexer(t, root)
	var log logBuffer
	x.Logger = slog.New(slog.NewTextHandler(&log, nil))
	for range 2 {
		_, err := x.Reconcile(testkit.Context(t))
		testkit.NoErr(t, err, "reconcile")
	}
	testkit.Equal(t, documents(t, s), sampleDocs, "documents (the pipe is none)")
	lines := 0
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "Characters/pipe.md") {
			lines++
			if !strings.Contains(l, "not a regular file") || !strings.Contains(l, "FIFO") {
				t.Errorf("log line %q; want it to say the pipe is not a regular file", l)
			}
		}
	}
	testkit.Equal(t, lines, 1, "log lines naming the pipe over two scans")
}
