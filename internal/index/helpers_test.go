package index

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/guide/guide/internal/projection"
)

// emptyIndex opens a new index in a temporary folder, reset for project, merging its
// segments after idleMerge without a batch (the default when 0).
func emptyIndex(t *testing.T, project string, idleMerge time.Duration) *Index {
	t.Helper()
	x := &Index{Dir: filepath.Join(t.TempDir(), "index"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IdleMerge: idleMerge}
	noErr(t, x.Open(), "open")
	t.Cleanup(func() { _ = x.Close() })
	noErr(t, x.Reset(projection.State{StreamID: project + "@1", Project: project}), "reset")
	return x
}

func noErr(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
