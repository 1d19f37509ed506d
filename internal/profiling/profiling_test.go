package profiling

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func gzipped(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) { // pprof's format is gzipped
		t.Fatalf("%s is %d bytes, not gzipped", path, len(b))
	}
}

func TestStartStop(t *testing.T) {
	p, err := Start("", "")
	if p != nil || err != nil {
		t.Fatalf(`Start("", ""): %v, %v; want nothing written`, p, err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop of none: %v", err)
	}
	path := filepath.Join(t.TempDir(), "cpu.prof")
	if p, err = Start(path, ""); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	gzipped(t, path)
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "x.prof")
	if _, err := Start(missing, ""); err == nil {
		t.Fatal("a CPU profile in a missing folder: no error")
	}
	if _, err := Start("", missing); err == nil {
		t.Fatal("a heap profile in a missing folder: no error")
	}
}

// TestHeapProfileOnSignal: --memprofile writes the heap at start, then again on each
// SIGUSR1, until Stop.
func TestHeapProfileOnSignal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.prof")
	p, err := Start("", path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	gzipped(t, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if err := <-p.wrote; err != nil {
		t.Fatal(err)
	}
	gzipped(t, path)
}
